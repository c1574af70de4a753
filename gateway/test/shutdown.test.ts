import http from "node:http";
import type { AddressInfo } from "node:net";
import { databaseForFile, eventually } from "@analytics/testing";
import { buildGateway } from "../src/app";
import { testGatewayDeps } from "./gateway-deps";

/** One request on its own connection; resolves with the status and the Connection header, or the network error's code. */
function get(port: number, path: string): Promise<{ status?: number; connection?: string; error?: string }> {
  return new Promise((resolve) => {
    http
      .get({ host: "127.0.0.1", port, path, agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      })
      .on("error", (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
  });
}

describe("gateway shutdown (SIGTERM)", () => {
  const database = databaseForFile();

  it("answers not ready but keeps serving for the drain period, lets a request in flight finish, then closes", async () => {
    const gw = await buildGateway(testGatewayDeps(database.url));
    await gw.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = gw.app.server.address() as AddressInfo;
    try {
      // A request in flight: its headers sent, its body not yet.
      const body = JSON.stringify({ email: "nobody@example.com", password: "not-the-password" });
      let pending!: http.ClientRequest;
      const inFlight = new Promise<number | undefined>((resolve, reject) => {
        pending = http.request({ host: "127.0.0.1", port, method: "POST", path: "/v2/api/auth", agent: false, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode));
        });
        pending.on("error", reject);
        pending.flushHeaders();
      });
      // In flight once the gateway holds its connection.
      const connections = () => new Promise<number>((resolve, reject) => gw.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
      await eventually(async () => (await connections()) > 0);

      const shutdown = gw.shutdown(1_500);
      const ready = await get(port, "/readyz");
      const health = await get(port, "/healthz");
      const docs = await get(port, "/v2/api/openapi.json");
      expect(ready.status).toBe(503);
      expect([health.status, health.connection]).toEqual([200, "close"]);
      expect(docs.status).toBe(200);

      pending.end(body);
      const status = await inFlight;
      expect(status).not.toBe(503);
      expect(status).toBeLessThan(500);

      await shutdown;
      expect((await get(port, "/healthz")).error).toBe("ECONNREFUSED");
    } finally {
      await gw.close().catch(() => undefined);
    }
  });
});
