import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { serviceNames, serviceRegistry } from "@analytics/contracts";
import { configSchema } from "@analytics/config";
import { localServices } from "../services";

const root = join(__dirname, "../../..");
const chart = join(root, "deploy/helm/analytics");

/** A service's block in the chart's values: `name:` then indented `enabled:` and `port:`. */
function valuesBlock(name: string): { enabled: boolean; port: number } | undefined {
  const values = readFileSync(join(chart, "values.yaml"), "utf8");
  const block = new RegExp(`^${name}:\\n((?:  .*\\n|\\s*\\n)*)`, "m").exec(values)?.[1];
  if (!block) return undefined;
  return { enabled: /^  enabled: true$/m.test(block), port: Number(/^  port: (\d+)$/m.exec(block)?.[1]) };
}

/**
 * The service registry (libs/contracts/src/services.ts) is the one list of services; everything
 * else that must name each service is checked against it here, so adding one cannot miss a place.
 */
describe("service registry", () => {
  it("has a folder with a start-alone main for every service", () => {
    for (const name of serviceNames) expect(existsSync(join(root, `services/${name}/src/main.ts`))).toBe(true);
  });

  it("is what the single-process launcher starts", () => {
    expect(localServices.map((s) => s.name).sort()).toEqual([...serviceNames].sort());
  });

  it("gives every service a <NAME>_URL setting defaulting to its port", () => {
    const config = configSchema.parse({});
    for (const name of serviceNames) {
      expect((config as Record<string, unknown>)[`${name.toUpperCase()}_URL`]).toBe(`http://127.0.0.1:${serviceRegistry[name].port}`);
    }
  });

  it("matches the Helm chart: enabled with the same port, a manifest, and the gateway's URL list", () => {
    const helpers = readFileSync(join(chart, "templates/_helpers.tpl"), "utf8");
    for (const name of serviceNames) {
      expect({ name, ...valuesBlock(name) }).toEqual({ name, enabled: true, port: serviceRegistry[name].port });
      expect(existsSync(join(chart, `templates/${name}.yaml`))).toBe(true);
      expect(helpers).toMatch(new RegExp(`range \\$svc := list [^\\n]*"${name}"`));
    }
  });
});
