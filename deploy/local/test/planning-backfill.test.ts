import { randomUUID } from "node:crypto";
import pino from "pino";
import { callerHeaders } from "@analytics/auth";
import { ordersV1 } from "@analytics/contracts";
import { createServiceClient, type RunningService } from "@analytics/rpc";
import { createTestBus, databaseForFile, eventually, type TestBus } from "@analytics/testing";
import { startOrdersService } from "@analytics/orders-service";
import { startPlanningService } from "@analytics/planning-service";

const internalToken = "b".repeat(40);

/**
 * Planning's backfill end to end: transactions the orders service stored before planning read
 * them, whose messages the stream no longer has, reach planning's replica through the orders
 * migration that re-announces them (007), the real relay and JetStream.
 */
describe("planning backfill: an account's history reaches planning's replica", () => {
  const files = databaseForFile();
  const buses: TestBus[] = [];
  const services: RunningService[] = [];
  afterAll(async () => {
    for (const s of services) await s.close();
    for (const b of buses) await b.close();
  });
  const start = async (startService: typeof startOrdersService, bus: TestBus) => {
    const service = await startService({ databaseUrl: files.url, bus: bus.bus, logger: pino({ level: "silent" }), internalToken, port: 0 });
    services.push(service);
    return service;
  };

  it("re-announced once on the upgrade, applied by planning at the stored versions", async () => {
    const account = randomUUID();
    const as = { headers: callerHeaders(internalToken, { accountId: account, apiKeyId: randomUUID() }) };
    // The release before: the orders service alone, on a stream that will be gone.
    buses.push(await createTestBus());
    const before = await start(startOrdersService, buses[0]);
    const orders = createServiceClient(ordersV1.OrdersService, before.url);
    const sale = (ext: string, quantity: number) => ({ externalTransactionId: ext, channel: 1, type: 1, createdDate: { seconds: 1_772_000_000n }, items: [{ externalItemId: "i1", key: "K1", quantity }] });
    await orders.writeTransactions({ transactions: [sale("T1", 2), sale("T2", 3)], mode: ordersV1.WriteMode.UPSERT }, as);
    await orders.writeTransactions({ transactions: [sale("T1", 4)], mode: ordersV1.WriteMode.UPSERT }, as);
    await before.close();
    services.pop();
    const db = files.openDb("orders");
    // The upgrade finds migration 007 not yet run (it ran here on empty tables when the schema was made).
    await db("knex_migrations").where({ name: "007_announce_for_planning" }).delete();

    // The upgrade: a stream that has forgotten those messages, the orders service migrating, planning reading.
    buses.push(await createTestBus());
    await start(startPlanningService, buses[1]);
    await start(startOrdersService, buses[1]);
    const stored = (await db("transactions").where({ account_id: account }).orderBy("id").select("id", "version")).map((r: { id: string; version: string }) => `${r.id}@${r.version}`);
    expect(stored).toHaveLength(2);
    const planning = files.openDb("planning");
    const replica = await eventually(async () => {
      const rows = (await planning("sales_transactions").where({ account_id: account }).orderBy("transaction_id").select("transaction_id", "version")).map(
        (r: { transaction_id: string; version: string }) => `${r.transaction_id}@${r.version}`,
      );
      return rows.length === stored.length && rows;
    });
    expect(replica).toEqual(stored);
    const units = await planning.raw("SELECT sum(units)::int AS units FROM sales_lines WHERE account_id = ?", [account]);
    expect(units.rows[0].units).toBe(7);
  });
});
