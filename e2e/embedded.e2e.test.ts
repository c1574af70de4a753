import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, signUp, startPlatform } from "./harness";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `npm start` with nothing configured: embedded Postgres under DATA_DIR and the in-process bus.
 * Keys and data survive a restart.
 */
describe("embedded default (no DATABASE_URL, no NATS_URL)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "analytics-e2e-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("starts, serves the README walk-through, and keeps accounts across a restart", async () => {
    const env = { DATABASE_URL: undefined, NATS_URL: undefined, DATA_DIR: dataDir, ADMIN_TOKEN, EMBEDDED_PG_PORT: String(await freePort()) };
    const first = await startPlatform(env, 120_000);
    let account;
    try {
      const ready = await client(first.baseUrl)("GET", "/readyz");
      expect(ready).toMatchObject({ status: 200, body: { status: "ready" } });
      expect(first.logs.join("\n")).toMatch(/"database":"embedded","bus":"in-process"/);
      account = await signUp(first.baseUrl, ADMIN_TOKEN);
      const events = await account.api("GET", "/v2/api/events");
      expect(events.status).toBe(200);
      expect(events.body).toEqual([]);
    } finally {
      await first.stop();
    }
    const second = await startPlatform(env, 120_000);
    try {
      const auth = await client(second.baseUrl)("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey });
      expect(auth.status).toBe(200);
    } finally {
      await second.stop();
    }
  }, 240_000);
});
