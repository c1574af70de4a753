import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseForFile } from "@analytics/testing";
import { checkoutRoot as root } from "./harness";

/**
 * A port that something else holds ends a start in one line on stderr naming the port and the
 * variable that chose it, and a non-zero exit: `npm start` (PORT, METRICS_PORT, the embedded
 * Postgres's EMBEDDED_PG_PORT), the gateway alone (PORT) and a service alone (SERVICE_PORT,
 * HEALTH_PORT, METRICS_PORT).
 */
describe("a busy port", () => {
  const database = databaseForFile();
  const held: net.Server[] = [];
  const secrets = { INTERNAL_TOKEN: "i".repeat(32), JWT_SECRET: "j".repeat(32), API_KEY_PEPPER: "p".repeat(32) };

  beforeAll(() => {
    // The deployables alone, besides the launcher.
    execFileSync(process.execPath, ["deploy/local/build.mjs", "local", "gateway", "catalogue"], { cwd: root, stdio: "pipe" });
  });
  afterAll(async () => {
    for (const server of held) await new Promise((resolve) => server.close(resolve));
  });

  /**
   * A port on 127.0.0.1 that this process holds. A connection to it is dropped at once: the port
   * may have been another test file's a moment before, and a client of that file reconnecting to
   * it would otherwise hold it open, and close() would wait for that client (CI's afterAll did,
   * past its timeout).
   */
  async function busyPort(): Promise<number> {
    const server = net.createServer((socket) => socket.destroy());
    held.push(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return (server.address() as net.AddressInfo).port;
  }

  /** Runs `bundle` until it exits: its exit code and its stderr's lines. */
  async function run(bundle: string, env: Record<string, string | undefined>): Promise<{ code: number | null; stderr: string[] }> {
    const { NATS_URL: _nats, DATABASE_URL: _db, ...inherited } = process.env;
    const child = spawn(process.execPath, [bundle], {
      cwd: root,
      env: Object.fromEntries(Object.entries({ ...inherited, HOST: "127.0.0.1", LOG_LEVEL: "warn", DATABASE_URL: database.url, ...env }).filter(([, v]) => v !== undefined)),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = await once(child, "exit");
    return { code, stderr: stderr.split("\n").filter((line) => line.trim()) };
  }

  const oneLine = (port: number, variable: string) => ({
    code: 1,
    stderr: [`port ${port} is already in use (${variable}): stop what uses it, or set ${variable} to a free port`],
  });

  it("ends npm start in one line naming PORT, or METRICS_PORT", async () => {
    const port = await busyPort();
    expect(await run("dist/local/start.js", { PORT: String(port) })).toEqual(oneLine(port, "PORT"));
    const metrics = await busyPort();
    expect(await run("dist/local/start.js", { PORT: "0", METRICS_PORT: String(metrics) })).toEqual(oneLine(metrics, "METRICS_PORT"));
  });

  it("ends npm start with an embedded Postgres in one line naming EMBEDDED_PG_PORT", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "analytics-busy-"));
    try {
      const port = await busyPort();
      const { code, stderr } = await run("dist/local/start.js", { DATABASE_URL: undefined, DATA_DIR: dataDir, PORT: "0", EMBEDDED_PG_PORT: String(port) });
      expect({ code, stderr }).toEqual({
        code: 1,
        stderr: [expect.stringMatching(new RegExp(`^embedded Postgres did not start on port ${port} .*set EMBEDDED_PG_PORT to a free one$`))],
      });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("ends the gateway alone in one line naming PORT", async () => {
    const port = await busyPort();
    expect(await run("dist/gateway/main.js", { ...secrets, PORT: String(port) })).toEqual(oneLine(port, "PORT"));
  });

  it("ends a service alone in one line naming SERVICE_PORT, HEALTH_PORT or METRICS_PORT", async () => {
    const port = await busyPort();
    expect(await run("dist/services/catalogue/main.js", { ...secrets, SERVICE_PORT: String(port) })).toEqual(oneLine(port, "SERVICE_PORT"));
    const health = await busyPort();
    expect(await run("dist/services/catalogue/main.js", { ...secrets, SERVICE_PORT: "0", HEALTH_PORT: String(health) })).toEqual(oneLine(health, "HEALTH_PORT"));
    const metrics = await busyPort();
    expect(await run("dist/services/catalogue/main.js", { ...secrets, SERVICE_PORT: "0", METRICS_PORT: String(metrics) })).toEqual(oneLine(metrics, "METRICS_PORT"));
  });
});
