import { ConfigError, loadConfig, required } from "../src";

describe("loadConfig", () => {
  it("applies defaults for an empty environment", () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(8080);
    expect(config.DATA_DIR).toBe("./.data");
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.NATS_STREAM).toBe("ANALYTICS");
  });

  it("coerces numbers and treats empty strings as unset", () => {
    const config = loadConfig({ PORT: "9090", DATABASE_URL: "" });
    expect(config.PORT).toBe(9090);
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it("fails fast listing every bad variable", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "not-a-port", DATABASE_URL: "nope", JWT_SECRET: "short" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/DATABASE_URL/);
    expect(problems).toMatch(/JWT_SECRET/);
  });

  it("required() names a missing setting", () => {
    expect(() => required(loadConfig({}), "DATABASE_URL")).toThrow(/DATABASE_URL: required/);
    expect(required(loadConfig({ DATABASE_URL: "postgres://x@h/db" }), "DATABASE_URL")).toBe("postgres://x@h/db");
  });
});
