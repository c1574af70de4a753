import { ConfigError, loadConfig, required, webhookSettings } from "../src";

describe("loadConfig", () => {
  it("applies defaults for an empty environment", () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(8080);
    expect(config.DATA_DIR).toBe("./.data");
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.NATS_STREAM).toBe("ANALYTICS");
  });

  it("reads the stream's replicas (1 unless set, 1 to 5) and a NATS cluster's comma-separated URLs", () => {
    expect(loadConfig({}).NATS_STREAM_REPLICAS).toBe(1);
    expect(loadConfig({ NATS_STREAM_REPLICAS: "3" }).NATS_STREAM_REPLICAS).toBe(3);
    expect(() => loadConfig({ NATS_STREAM_REPLICAS: "0" })).toThrow(/NATS_STREAM_REPLICAS/);
    expect(() => loadConfig({ NATS_STREAM_REPLICAS: "6" })).toThrow(/NATS_STREAM_REPLICAS/);
    expect(loadConfig({ NATS_URL: "nats://a:4222,nats://b:4222" }).NATS_URL).toBe("nats://a:4222,nats://b:4222");
    expect(() => loadConfig({ NATS_URL: "nats://a:4222,not a url" })).toThrow(/NATS_URL/);
    // The gateway's client speaks h2c: an https:// service URL would send plaintext to a TLS port.
    expect(() => loadConfig({ ORDERS_URL: "https://orders:50054" })).toThrow(/ORDERS_URL/);
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

  it("prints one line per problem with the bad value (never a secret's), and no stack trace", () => {
    let error: unknown;
    try {
      loadConfig({ PORT: "80800", EMBEDDED_PG_PORT: "x", JWT_SECRET: "short-secret", DB_STATEMENT_TIMEOUT_MS: "-1" });
    } catch (e) {
      error = e;
    }
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual([
      expect.stringMatching(/^PORT: .* \(got "80800"\)$/),
      expect.stringMatching(/^EMBEDDED_PG_PORT: .* \(got "x"\)$/),
      expect.stringMatching(/^JWT_SECRET: .* \(got 12 characters\)$/),
      expect.stringMatching(/^DB_STATEMENT_TIMEOUT_MS: .* \(got "-1"\)$/),
    ]);
    expect((error as Error).message).toBe(`invalid configuration:\n  ${problems.join("\n  ")}`);
    expect((error as Error).message).not.toMatch(/short-secret/);
  });

  it("has the deadlines and the embedded Postgres port, with defaults", () => {
    expect(loadConfig({})).toMatchObject({
      EMBEDDED_PG_PORT: 54329,
      DB_ACQUIRE_TIMEOUT_MS: 5000,
      DB_STATEMENT_TIMEOUT_MS: 15000,
      SERVICE_CALL_TIMEOUT_MS: 10000,
      PLANNING_QUERY_TIMEOUT_MS: 120000,
      REQUEST_TIMEOUT_MS: 30000,
    });
    expect(loadConfig({}).HOST).toBeUndefined();
  });

  it("signs image URLs with IMAGE_URL_KEY when set (64 hex digits), else with JWT_SECRET, which the events service then needs", () => {
    const key = "ab".repeat(32);
    expect(webhookSettings(loadConfig({ IMAGE_URL_KEY: key })).imageUrls.signing).toEqual({ key });
    expect(webhookSettings(loadConfig({ JWT_SECRET: "j".repeat(32), IMAGE_URL_KEY: key })).imageUrls.signing).toEqual({ key });
    expect(webhookSettings(loadConfig({ JWT_SECRET: "j".repeat(32) })).imageUrls.signing).toBe("j".repeat(32));
    expect(() => webhookSettings(loadConfig({}))).toThrow(/JWT_SECRET/);
    expect(() => loadConfig({ IMAGE_URL_KEY: "j".repeat(32) })).toThrow(/IMAGE_URL_KEY must be 64 lowercase hex digits .*\(got 32 characters\)$/);
  });

  it("gives the webhook worker WEBHOOK_MAX_IN_FLIGHT (256 by default, 1 to 10000)", () => {
    const settings = (env: Record<string, string>) => webhookSettings(loadConfig({ JWT_SECRET: "j".repeat(32), ...env }));
    expect(settings({}).maxInFlight).toBe(256);
    expect(settings({ WEBHOOK_MAX_IN_FLIGHT: "40" }).maxInFlight).toBe(40);
    expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT: "0" })).toThrow(/WEBHOOK_MAX_IN_FLIGHT/);
  });

  it("gives the events queue EVENTS_GAP_HOLD_SECONDS (60 by default, above the bus's 20 s redelivery; fractions allowed)", () => {
    expect(loadConfig({}).EVENTS_GAP_HOLD_SECONDS).toBe(60);
    expect(loadConfig({ EVENTS_GAP_HOLD_SECONDS: "0.5" }).EVENTS_GAP_HOLD_SECONDS).toBe(0.5);
    expect(() => loadConfig({ EVENTS_GAP_HOLD_SECONDS: "0" })).toThrow(/EVENTS_GAP_HOLD_SECONDS/);
    expect(() => loadConfig({ EVENTS_GAP_HOLD_SECONDS: "soon" })).toThrow(/EVENTS_GAP_HOLD_SECONDS/);
  });

  it("refuses WEBHOOK_ALLOW_PRIVATE=true with NODE_ENV=production, naming the variable; allows it in development and test", () => {
    let error: unknown;
    try {
      loadConfig({ NODE_ENV: "production", WEBHOOK_ALLOW_PRIVATE: "true" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([expect.stringMatching(/^WEBHOOK_ALLOW_PRIVATE: must not be true with NODE_ENV=production/)]);
    expect(loadConfig({ NODE_ENV: "production", WEBHOOK_ALLOW_PRIVATE: "false" }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ NODE_ENV: "production" }).WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ NODE_ENV: "test", WEBHOOK_ALLOW_PRIVATE: "true" }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
    // Unset NODE_ENV is development (npm start on a laptop).
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE: "true" }).WEBHOOK_ALLOW_PRIVATE).toBe(true);
  });

  it("warns when the events service reads its webhook settings with WEBHOOK_ALLOW_PRIVATE on, and only then", () => {
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => void warnings.push(args) };
    webhookSettings(loadConfig({ JWT_SECRET: "j".repeat(32) }), undefined, logger);
    expect(warnings).toEqual([]);
    expect(webhookSettings(loadConfig({ JWT_SECRET: "j".repeat(32), WEBHOOK_ALLOW_PRIVATE: "true" }), undefined, logger).allowPrivate).toBe(true);
    expect(warnings).toEqual([[{ setting: "WEBHOOK_ALLOW_PRIVATE" }, expect.stringMatching(/^WEBHOOK_ALLOW_PRIVATE=true: .*private.*tests and local development only/)]]);
  });

  it("required() names a missing setting", () => {
    expect(() => required(loadConfig({}), "DATABASE_URL")).toThrow(/DATABASE_URL: required/);
    expect(required(loadConfig({ DATABASE_URL: "postgres://x@h/db" }), "DATABASE_URL")).toBe("postgres://x@h/db");
  });
});
