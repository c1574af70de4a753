import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { inventoryV1 } from "@analytics/contracts";

/**
 * An inventory service that counts the warehouse writes it is asked for. `gate`, when set, holds
 * each write after it is counted (done, not yet answered); `fail` answers the next write UNAVAILABLE.
 */
export async function countingInventory() {
  const fake = {
    writes: 0,
    gate: undefined as Promise<void> | undefined,
    fail: false,
    /** The one warehouse GET/PUT/DELETE /warehouses/W1 read and change. */
    stored: undefined as { externalId: string; name: string } | undefined,
    url: "",
    close: async () => {},
  };
  const notFound = () => new ConnectError("warehouse not found", Code.NotFound);
  const routes = (router: ConnectRouter) =>
    router.service(inventoryV1.InventoryService, {
      upsertWarehouses: async (req) => {
        if (fake.fail) {
          fake.fail = false;
          throw new ConnectError("down", Code.Unavailable);
        }
        fake.writes++;
        await fake.gate;
        return { results: req.warehouses.map((warehouse) => ({ warehouse, result: { statusCode: 201, message: "created" } })) };
      },
      listWarehouses: async () => ({ warehouses: [], totalCount: 0n }),
      getWarehouse: async (req) => {
        if (fake.stored?.externalId !== req.externalId) throw notFound();
        return { warehouse: fake.stored };
      },
      updateWarehouse: async (req) => {
        if (fake.stored?.externalId !== req.externalId) throw notFound();
        fake.writes++;
        fake.stored = { externalId: req.externalId, name: req.warehouse?.name ?? "" };
        return { warehouse: fake.stored };
      },
      deleteWarehouse: async (req) => {
        if (fake.stored?.externalId !== req.externalId) throw notFound();
        fake.writes++;
        fake.stored = undefined;
        return {};
      },
    });
  const server = http2.createServer(connectNodeAdapter({ routes }));
  // The gateways' sessions are kept alive: closing ends them, or close() would wait for them.
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
