import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { serviceNames, serviceRegistry } from "@analytics/contracts";
import { configSchema } from "@analytics/config";
import { localServices } from "../services";

const root = join(__dirname, "../../..");
const chart = join(root, "deploy/helm/analytics");

/** A deployable's entry in the chart's values: under `deployables:`, `  name:` then `    port:` (enabled unless `    enabled: false`). */
function deployableEntry(name: string): { enabled: boolean; port: number } | undefined {
  const values = readFileSync(join(chart, "values.yaml"), "utf8");
  const deployables = /^deployables:\n((?:  .*\n|\s*\n)*)/m.exec(values)?.[1] ?? "";
  const entry = new RegExp(`^  ${name}:\\n((?:    .*\\n|\\s*\\n)*)`, "m").exec(deployables)?.[1];
  if (!entry) return undefined;
  return { enabled: !/^    enabled: false$/m.test(entry), port: Number(/^    port: (\d+)$/m.exec(entry)?.[1]) };
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

  it("is in the Helm chart's deployables, enabled, with the same port (deploy/helm/test/chart.test.ts renders each)", () => {
    for (const name of serviceNames) {
      expect({ name, ...deployableEntry(name) }).toEqual({ name, enabled: true, port: serviceRegistry[name].port });
    }
  });
});
