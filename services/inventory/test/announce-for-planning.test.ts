import { randomUUID } from "node:crypto";
import { create, fromBinary, toJson } from "@bufbuild/protobuf";
import pino from "pino";
import { inventoryMessagesV1, inventoryV1, topics } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import type { ServiceContext } from "@analytics/rpc";
import { eventually, serviceUnderTest } from "@analytics/testing";
import { migrations } from "../src/migrations";
import { startInventoryService } from "../src/service";
import { announceStoredTriggers, upsertTriggers } from "../src/triggers";

const { InventoryService } = inventoryV1;

/**
 * Planning's backfill of stock triggers (migration 004): every stored trigger, of every account,
 * re-announced once on analytics.inventory.stock_trigger.backfilled, as GET answers it, with its
 * version, page by page, through the real relay and bus.
 */
describe("inventory service: re-announcing stored stock triggers for planning (real Postgres and JetStream)", () => {
  const inventory = serviceUnderTest(InventoryService, startInventoryService, { schema: "inventory", probe: [topics.inventoryStockTriggerBackfilled.subject] });
  const { client, as, published, db } = inventory;

  const triggerWrites = (key: string, min: number) => ({ triggers: [{ trigger: { warehouseExternalId: "W1", key, skuId: randomUUID(), min }, skuFound: true }] });

  it("every trigger of every account, in pages smaller than an account, as stored", async () => {
    const accounts = [randomUUID(), randomUUID()];
    for (const account of accounts) {
      await client.upsertWarehouses({ warehouses: [{ externalId: "W1", name: "W1" }] }, as(account));
      for (const [i, key] of ["K1", "K2", "K3"].entries()) await client.upsertStockTriggers(triggerWrites(key, i), as(account));
    }
    expect(await announceStoredTriggers(db, 2)).toBe(6);
    const messages = await eventually(async () => (published.length === 6 ? published : undefined));
    for (const account of accounts) {
      const announced = messages
        .filter((m) => m.accountId === account)
        .map((m) => fromBinary(inventoryMessagesV1.StockTriggerChangedSchema, m.payload))
        .sort((x, y) => Number(x.stockTriggerId - y.stockTriggerId));
      const stored = (await client.listStockTriggers({}, as(account))).triggers;
      expect(announced.map((m) => toJson(inventoryV1.StockTriggerSchema, m.trigger!))).toEqual(stored.map((t) => toJson(inventoryV1.StockTriggerSchema, t)));
      expect(announced.map((m) => [m.trigger?.key, m.trigger?.min, m.version])).toEqual([
        ["K1", 0, 1n],
        ["K2", 1, 1n],
        ["K3", 2, 1n],
      ]);
    }
  });

  it("the migration re-announces what a schema of the release before stores, once", async () => {
    const before = inventory.openDb("inventory_before");
    await migrate(before, "inventory_before", migrations.filter((m) => m.name < "004"));
    const ctx = { db: before, relay: { kick: () => undefined }, logger: pino({ level: "silent" }) } as unknown as ServiceContext;
    const account = randomUUID();
    await before("warehouses").insert({ id: randomUUID(), account_id: account, external_id: "W1", name: "W1" });
    const writes = ["K1", "K2"].map((key) => create(inventoryV1.StockTriggerWriteSchema, { trigger: { warehouseExternalId: "W1", key, skuId: randomUUID(), min: 4 }, skuFound: true }));
    expect((await upsertTriggers(ctx, account, writes)).map((o) => o.statusCode)).toEqual([201, 201]);
    await before("outbox").delete();
    expect(await migrate(before, "inventory_before", migrations)).toEqual(["004_announce_for_planning", "005_account_versions", "006_import_jobs", "007_import_job_columns"]);
    const rows: { subject: string; aggregate: string }[] = await before("outbox").orderBy("seq");
    const ids: { id: string }[] = await before("stock_triggers").select("id").orderBy("id");
    expect(rows.map((r) => [r.subject, r.aggregate])).toEqual(ids.map((t) => [topics.inventoryStockTriggerBackfilled.subject, `stock_trigger:${t.id}`]));
    expect(await migrate(before, "inventory_before", migrations)).toEqual([]);
    expect(Number((await before("outbox").count({ n: "*" }))[0].n)).toBe(2);
  });
});
