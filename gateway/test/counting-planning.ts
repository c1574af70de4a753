import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { planningV1 } from "@analytics/contracts";

/** A planning service that counts the planned-volumes queries it answers; `version` is every account's data version. */
export async function countingPlanning() {
  const fake = { queries: 0, version: 1n, url: "", close: async () => {} };
  const routes = (router: ConnectRouter) =>
    router.service(planningV1.PlanningService, {
      getAccountVersion: async () => ({ version: fake.version, today: "2026-11-27" }),
      getPlannedVolumes: async () => {
        fake.queries++;
        return { rows: [{ groupKey: "SS26", stockVolume: 7n, poVolume: BigInt(fake.version), draftPoVolume: 0n }] };
      },
    });
  const server = http2.createServer(connectNodeAdapter({ routes }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.destroy();
    });
  return fake;
}
