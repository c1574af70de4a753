import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { planningV1 } from "@analytics/contracts";
import { requireInternalCaller } from "@analytics/auth";
import { dataVersionInterceptor } from "@analytics/rpc";
import { testGatewayDeps } from "./gateway-deps";

/**
 * A planning service that counts the planned-volumes queries it answers and the GetAccountVersion
 * calls; `version` is every account's data version, also answered with the calls that ask for it
 * (the services' own interceptor, libs/rpc data-version.ts); `beforeQuery` runs as a query starts.
 */
export async function countingPlanning() {
  const fake = { queries: 0, versionCalls: 0, version: 1n, beforeQuery: undefined as (() => void) | undefined, url: "", close: async () => {} };
  const routes = (router: ConnectRouter) =>
    router.service(planningV1.PlanningService, {
      getAccountVersion: async () => {
        fake.versionCalls++;
        return { version: fake.version, today: "2026-11-27" };
      },
      // A streamed answer: its version goes out in the stream's header, before its first row.
      async *getBreakdown() {
        fake.beforeQuery?.();
        fake.queries++;
        yield { rows: [{ groupKey: "SS26", periods: [] }] };
      },
      getPlannedVolumes: async () => {
        fake.beforeQuery?.();
        fake.queries++;
        return { rows: [{ groupKey: "SS26", stockVolume: 7n, poVolume: BigInt(fake.version), draftPoVolume: 0n }] };
      },
    });
  const interceptors = [requireInternalCaller(testGatewayDeps("").internalToken), dataVersionInterceptor(async () => `${fake.version}-2026-11-27`)];
  const server = http2.createServer(connectNodeAdapter({ routes, interceptors }));
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
