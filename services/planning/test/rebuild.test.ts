import { randomUUID } from "node:crypto";
import pino from "pino";
import { callerHeaders } from "@analytics/auth";
import { planningV1, topics } from "@analytics/contracts";
import { createDb } from "@analytics/db";
import { createServiceClient, type RunningService } from "@analytics/rpc";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { busMessage, createTestBus, createTestDatabase, eventually, type TestBus, type TestDatabase } from "@analytics/testing";
import { startPlanningService } from "../src/service";
import { march, purchaseOrder, sku, stock, transaction, warehouse } from "./fixtures";

const internalToken = "r".repeat(40);

/**
 * Catch-up and rebuild: a new or wiped replica replays the stream from its first message, and
 * converges to the same planned volumes, sales, distribution orders and stock-trigger minimums
 * (backfilled messages included).
 */
describe("planning rebuilds its replica from JetStream", () => {
  let t: TestBus;
  const databases: TestDatabase[] = [];
  const acc = randomUUID();
  const [s1, s2, w1] = [randomUUID(), randomUUID(), randomUUID()];
  const expected = [{ groupKey: "SS26", stockVolume: 12n, poVolume: 5n, draftPoVolume: 2n }];
  const [t1, t2, t3, d1, d2, d3] = Array.from({ length: 6 }, () => randomUUID());
  const d = (iso: string) => timestampFromDate(new Date(iso));
  /** By id as JavaScript compares strings, whatever the database's collation. */
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);
  /** A distribution order's message on `topic` (created, updated, or re-announced: backfilled). */
  const distributionOrder = (topic: typeof topics.ordersDistributionOrderCreated, id: string, version: number, quantity: number, deliveredQuantity: number, status: string) =>
    busMessage(topic, acc, `distribution_order:${id}`, {
      accountId: acc,
      distributionOrderId: id,
      version: BigInt(version),
      distributionOrder: { id, externalDoid: "DO-1", externalRowId: id, key: "K1", toWarehouseExternalId: "WH1", deliveryDate: d("2026-03-20T00:00:00Z"), quantity, deliveredQuantity, status, updatedAt: d(`2026-02-0${version}T00:00:00Z`) },
    });
  const trigger = (topic: typeof topics.inventoryStockTriggerCreated, id: number, version: number, skuId: string, min: number) =>
    busMessage(topic, acc, `stock_trigger:${id}`, { accountId: acc, stockTriggerId: BigInt(id), version: BigInt(version), trigger: { id: BigInt(id), skuId, warehouseId: w1, key: "K", min } });
  /** What the replica keeps of sales, distribution orders and stock triggers: the same after any replay. */
  const expectedInputs = {
    sales: [
      { key: "K1", warehouse: "", day: "2026-03-10", units: 5 },
      { key: "K1", warehouse: "WH1", day: "2026-03-12", units: 1 },
    ],
    distributionOrders: [
      { id: d1, version: "2", open: 6 },
      { id: d2, version: "1", open: 0 },
      { id: d3, version: "1", open: 3 },
    ].sort(byId),
    stockTriggers: [
      { id: "1", version: "2", min: 5 },
      { id: "2", version: "1", min: 4 },
    ],
  };
  const inputsOf = async (url: string) => {
    const db = createDb({ url, schema: "planning" });
    try {
      return {
        sales: (await db.raw("SELECT key, external_warehouse_id AS warehouse, to_char(day, 'YYYY-MM-DD') AS day, units::int AS units FROM sales_daily WHERE account_id = ? ORDER BY key, warehouse, day", [acc])).rows,
        distributionOrders: (await db.raw("SELECT distribution_order_id::text AS id, version::text AS version, open_quantity AS open FROM distribution_orders WHERE account_id = ?", [acc])).rows.sort(byId),
        stockTriggers: (await db.raw("SELECT stock_trigger_id::text AS id, version::text AS version, min FROM stock_trigger_minimums WHERE account_id = ? ORDER BY stock_trigger_id", [acc])).rows,
      };
    } finally {
      await db.destroy();
    }
  };

  const start = (database: TestDatabase) =>
    startPlanningService({ databaseUrl: database.url, bus: t.bus, logger: pino({ level: "silent" }), internalToken, port: 0 });
  const converged = (service: RunningService, database: TestDatabase) =>
    eventually(
      async () => {
        if (JSON.stringify(await inputsOf(database.url)) !== JSON.stringify(expectedInputs)) return undefined;
        const client = createServiceClient(planningV1.PlanningService, service.url);
        const res = await client.getPlannedVolumes({ query: march }, { headers: callerHeaders(internalToken, { accountId: acc, apiKeyId: randomUUID() }) });
        const rows = res.rows.map((r) => ({ groupKey: r.groupKey, stockVolume: r.stockVolume, poVolume: r.poVolume, draftPoVolume: r.draftPoVolume }));
        return JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? String(v) : v)) ===
          JSON.stringify(expected, (_k, v) => (typeof v === "bigint" ? String(v) : v))
          ? rows
          : undefined;
      },
      15_000,
      "replica converged",
    );

  beforeAll(async () => {
    t = await createTestBus();
    const [error] = await t.bus.publish([
      sku(acc, s1, 1, { key: "K1", season: "AW26" }),
      sku(acc, s1, 2, { key: "K1", season: "SS26" }),
      sku(acc, s2, 1, { key: "K2", season: "SS26" }),
      warehouse(acc, w1, 1, "WH1", "Main"),
      stock(acc, w1, s1, 1, 4),
      stock(acc, w1, s1, 2, 10),
      stock(acc, w1, s2, 1, 2),
      purchaseOrder(acc, randomUUID(), 1, 5, [{ skuId: s1, warehouse: "WH1", date: "2026-03-10", quantity: 5 }]),
      purchaseOrder(acc, randomUUID(), 1, 4, [{ skuId: s2, date: "2026-03-11", quantity: 2 }]),
      // Sales: one kept, one cancelled by its update, one re-announced by the orders service's backfill.
      transaction(acc, t1, 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "K1", quantity: 5 }] }),
      transaction(acc, t2, 1, { createdDate: "2026-03-11T12:00:00Z", items: [{ key: "K2", quantity: 2 }] }),
      transaction(acc, t2, 2, { createdDate: "2026-03-11T12:00:00Z", cancelledDate: "2026-03-12T00:00:00Z", items: [{ key: "K2", quantity: 2 }] }),
      { ...transaction(acc, t3, 1, { createdDate: "2026-03-12T12:00:00Z", items: [{ key: "K1", quantity: 1, shipments: [{ quantity: 1, warehouse: "WH1" }] }] }), subject: topics.ordersTransactionBackfilled.subject },
      // Distribution orders: one partly delivered by its update, one cancelled, one backfilled.
      distributionOrder(topics.ordersDistributionOrderCreated, d1, 1, 10, 0, "PROCESSING"),
      distributionOrder(topics.ordersDistributionOrderUpdated, d1, 2, 10, 4, "IN TRANSIT"),
      distributionOrder(topics.ordersDistributionOrderCreated, d2, 1, 8, 0, "CANCELLED"),
      distributionOrder(topics.ordersDistributionOrderBackfilled, d3, 1, 3, 0, "PROCESSING"),
      // Stock triggers: one updated, one backfilled.
      trigger(topics.inventoryStockTriggerCreated, 1, 1, s1, 2),
      trigger(topics.inventoryStockTriggerUpdated, 1, 2, s1, 5),
      trigger(topics.inventoryStockTriggerBackfilled, 2, 1, s2, 4),
    ]);
    if (error) throw error;
  });
  afterAll(async () => {
    await t.close();
    for (const d of databases) await d.drop();
  });

  it("a new instance on an empty database replays the stream from the start", async () => {
    const newInstanceConverges = async () => {
      const database = await createTestDatabase();
      databases.push(database);
      const service = await start(database);
      try {
        await converged(service, database);
      } finally {
        await service.close();
      }
    };
    await newInstanceConverges();
    // A second new instance beside it (another database, same stream) replays everything too.
    await newInstanceConverges();
  });

  it("an instance whose schema was wiped rebuilds it from the stream", async () => {
    const database = databases[0];
    const db = createDb({ url: database.url, schema: "planning" });
    const epochBefore = (await db("replica_epoch").first("id")).id;
    // A stored sales plan is no replica: the wipe must leave it (migration 008 keeps plans in planning_plans).
    const plan = { account_id: acc, sku_id: s1, channel: 1, month: "2026-03-01", volume: "12.5", updated_at: new Date("2026-02-01T00:00:00Z") };
    await db("sales_plans").insert(plan);
    await db.raw("DROP SCHEMA planning CASCADE");
    await db.destroy();
    const restarted = await start(database);
    try {
      await converged(restarted, database);
      const after = createDb({ url: database.url, schema: "planning" });
      expect((await after("replica_epoch").first("id")).id).not.toBe(epochBefore);
      const kept = await after("sales_plans").where({ account_id: acc }).select("sku_id", "channel", after.raw("to_char(month, 'YYYY-MM-DD') AS month"), after.raw("volume::text AS volume"), "updated_at");
      expect(kept).toEqual([{ sku_id: s1, channel: 1, month: "2026-03-01", volume: "12.5", updated_at: plan.updated_at }]);
      await after.destroy();
    } finally {
      await restarted.close();
    }
  });
});
