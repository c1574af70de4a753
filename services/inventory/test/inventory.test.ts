import { randomUUID } from "node:crypto";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import pino from "pino";
import { Code, ConnectError } from "@connectrpc/connect";
import { inventoryMessagesV1, inventoryV1, topics, ValidationErrorsSchema } from "@analytics/contracts";
import { createDb } from "@analytics/db";
import { OutboxRelay } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import { codeOf, eventually, serviceUnderTest, subjectsUnder } from "@analytics/testing";
import { upsertStock } from "../src/inventory";
import { upsertTriggers, upsertWarehouses } from "../src/repository";
import { triggersTable } from "../src/resources";
import { startInventoryService } from "../src/service";

const { InventoryService } = inventoryV1;
type StockWriteInit = MessageInitShape<typeof inventoryV1.StockWriteSchema>;

describe("inventory service: warehouses and stock (real Postgres and JetStream)", () => {
  const inventory = serviceUnderTest(InventoryService, startInventoryService, { schema: "inventory", probe: subjectsUnder("analytics.inventory.") });
  const { client, as, published } = inventory;

  const warehouse = async (account: string, externalId: string, name = externalId) =>
    (await client.upsertWarehouses({ warehouses: [{ externalId, name }] }, as(account))).results[0].warehouse!;
  const row = (key: string, skuId: string, available: number, date: string, externalWarehouseId = "W1"): StockWriteInit => ({
    row: { key, skuId, availableQuantity: available, physicalQuantity: available + 1, date: timestampFromDate(new Date(date)), externalWarehouseId },
    skuFound: true,
  });
  const stockOf = async (account: string, externalWarehouseId = "") =>
    (await client.listStock({ page: { page: 1, pageSize: 1000 }, externalWarehouseId }, as(account))).rows;
  const messagesOf = (subject: string, accountId: string) =>
    published
      .filter((m) => m.subject.endsWith(subject))
      .map((m) => fromBinary(inventoryMessagesV1.WarehouseChangedSchema, m.payload))
      .filter((m) => m.accountId === accountId);
  const stockMessagesOf = (accountId: string) =>
    published
      .filter((m) => m.subject.endsWith(topics.inventoryStockUpdated.subject))
      .map((m) => fromBinary(inventoryMessagesV1.StockUpdatedSchema, m.payload))
      .filter((m) => m.accountId === accountId);

  it("answers a warehouse another transaction created meanwhile with the same content (unchanged, not missing)", async () => {
    const account = randomUUID();
    const sent = [{ external_id: "RACE", name: "Race", central_warehouse: false }];
    const first = await inventory.db.transaction();
    await upsertWarehouses(first, account, sent);
    // The second write waits on the first's uncommitted row, then finds it identical: it writes nothing.
    const second = inventory.db.transaction((tx) => upsertWarehouses(tx, account, sent));
    await eventually(
      async () => (await inventory.db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n > 0,
      10_000,
      "the second write waiting on the first's row",
    );
    await first.commit();
    expect((await second).map((r) => [r.external_id, r.created, r.changed])).toEqual([["RACE", false, false]]);
  });

  it("answers a stock trigger another transaction created meanwhile with the same content with its id", async () => {
    const account = randomUUID();
    const [wh] = await inventory.db.transaction((tx) => upsertWarehouses(tx, account, [{ external_id: "TW", name: "T", central_warehouse: false }]));
    const trigger = create(inventoryV1.StockTriggerSchema, { key: "K1", warehouseId: wh.id, skuId: randomUUID(), min: 1, max: 5 });
    const sent = [{ ord: 0, ...(triggersTable.rowOf(trigger) as { warehouse_id: string; sku_id: string }) }];
    const first = await inventory.db.transaction();
    await upsertTriggers(first, account, sent);
    const second = inventory.db.transaction((tx) => upsertTriggers(tx, account, sent));
    await eventually(
      async () => (await inventory.db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n > 0,
      10_000,
      "the second write waiting on the first's row",
    );
    await first.commit();
    const [answered] = await second;
    expect([answered.id !== null, answered.created, answered.changed]).toEqual([true, false, false]);
  });

  it("creates (201) and updates (200) warehouses by externalId, announcing each with a growing version", async () => {
    const account = randomUUID();
    const first = await client.upsertWarehouses({ warehouses: [{ externalId: "W1", name: "Main", centralWarehouse: true }, { externalId: "W2", name: "Shop" }] }, as(account));
    expect(first.results.map((r) => r.result?.statusCode)).toEqual([201, 201]);
    const again = await client.upsertWarehouses({ warehouses: [{ externalId: "W1", name: "Main DC" }] }, as(account));
    expect(again.results[0].result).toMatchObject({ statusCode: 200, reference: "W1", referenceField: "externalId" });
    expect(again.results[0].warehouse).toMatchObject({ id: first.results[0].warehouse!.id, name: "Main DC", centralWarehouse: false });
    const got = await client.getWarehouse({ externalId: "W1" }, as(account));
    expect(got.warehouse?.name).toBe("Main DC");
    const listed = await client.listWarehouses({ page: { page: 1, pageSize: 10 } }, as(account));
    expect(listed.warehouses.map((w) => w.externalId)).toEqual(["W1", "W2"]);
    expect(listed.totalCount).toBe(2n);
    const filtered = await client.listWarehouses({ warehouseIds: [first.results[1].warehouse!.id] }, as(account));
    expect(filtered.warehouses.map((w) => w.externalId)).toEqual(["W2"]);
    const changes = await eventually(async () => {
      const ms = messagesOf(topics.inventoryWarehouseUpserted.subject, account).filter((m) => m.externalId === "W1");
      return ms.length === 2 && ms;
    });
    expect(changes.map((m) => [m.version, m.name])).toEqual([[1n, "Main"], [2n, "Main DC"]]);
  });

  it("rejects a blank externalId, a repeated one, and a bad page, naming the field", async () => {
    const account = randomUUID();
    const err = await client.upsertWarehouses({ warehouses: [{ externalId: "", name: "x" }] }, as(account)).catch((e: ConnectError) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).toContain("[0].externalId");
    expect(await codeOf(client.upsertWarehouses({ warehouses: [{ externalId: "A" }, { externalId: "A" }] }, as(account)))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.listWarehouses({ page: { page: 1, pageSize: 1001 } }, as(account)))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.listWarehouses({ warehouseIds: ["nope"] }, as(account)))).toBe(Code.InvalidArgument);
  });

  it("updates with PUT semantics, deletes, and answers 404 for unknown and other accounts' warehouses", async () => {
    const account = randomUUID();
    const other = randomUUID();
    await warehouse(account, "W1");
    const put = await client.updateWarehouse({ externalId: "W1", warehouse: { name: "Renamed", centralWarehouse: true } }, as(account));
    expect(put.warehouse).toMatchObject({ externalId: "W1", name: "Renamed", centralWarehouse: true });
    expect(await codeOf(client.getWarehouse({ externalId: "W1" }, as(other)))).toBe(Code.NotFound);
    expect(await codeOf(client.updateWarehouse({ externalId: "W1", warehouse: { name: "x" } }, as(other)))).toBe(Code.NotFound);
    expect(await codeOf(client.deleteWarehouse({ externalId: "W1" }, as(other)))).toBe(Code.NotFound);
    expect((await client.listWarehouses({}, as(other))).warehouses).toEqual([]);
    await client.deleteWarehouse({ externalId: "W1" }, as(account));
    expect(await codeOf(client.getWarehouse({ externalId: "W1" }, as(account)))).toBe(Code.NotFound);
    expect(await codeOf(client.deleteWarehouse({ externalId: "W1" }, as(account)))).toBe(Code.NotFound);
    const deleted = await eventually(async () => messagesOf(topics.inventoryWarehouseDeleted.subject, account)[0]);
    expect(deleted).toMatchObject({ externalId: "W1", deleted: true, version: 3n });
  });

  it("refuses a repeated externalId (400 naming the item it repeats) and a write at another revision (Aborted, nothing changed)", async () => {
    const account = randomUUID();
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: ConnectError) => [Code[e.code], e.rawMessage]);
    const dup = (await client.upsertWarehouses({ warehouses: [{ externalId: "D1" }, { externalId: "D2" }, { externalId: "D1" }] }, as(account)).catch((e) => e)) as ConnectError;
    expect([dup.code, dup.rawMessage]).toEqual([Code.InvalidArgument, "[2].externalId: repeats item 0"]);
    expect(dup.findDetails(ValidationErrorsSchema)[0].violations.map((v) => [v.path, v.message])).toEqual([["[2].externalId", "repeats item 0"]]);
    await warehouse(account, "R1");
    const { revision } = await client.getWarehouse({ externalId: "R1" }, as(account));
    await client.updateWarehouse({ externalId: "R1", warehouse: { name: "Now" }, ifRevision: revision }, as(account));
    const stale = "warehouse R1 changed since the revision the request named";
    expect(await refusal(client.updateWarehouse({ externalId: "R1", warehouse: { name: "Late" }, ifRevision: revision }, as(account)))).toEqual(["Aborted", stale]);
    expect(await refusal(client.deleteWarehouse({ externalId: "R1", ifRevision: revision }, as(account)))).toEqual(["Aborted", stale]);
    expect((await client.getWarehouse({ externalId: "R1" }, as(account))).warehouse?.name).toBe("Now");
    expect(await refusal(client.updateWarehouse({ externalId: "R9", warehouse: { name: "x" }, ifRevision: revision }, as(account)))).toEqual(["Aborted", "warehouse R9 changed since the revision the request named"]);
    expect(await refusal(client.deleteWarehouse({ externalId: "R9" }, as(account)))).toEqual(["NotFound", "warehouse R9 not found"]);
  });

  it("refuses to delete a warehouse that holds stock (409)", async () => {
    const account = randomUUID();
    await warehouse(account, "W1");
    await client.upsertStock({ rows: [row("K1", randomUUID(), 5, "2026-03-01T00:00:00Z")] }, as(account));
    expect(await codeOf(client.deleteWarehouse({ externalId: "W1" }, as(account)))).toBe(Code.AlreadyExists);
  });

  it("stores a snapshot per (warehouse, SKU); an older date is accepted and ignored; unknowns are 404; each applied row is a StockUpdated", async () => {
    const account = randomUUID();
    const wh = await warehouse(account, "W1");
    const sku = randomUUID();
    const res = await client.upsertStock(
      {
        rows: [
          row("K1", sku, 10, "2026-03-02T00:00:00Z"),
          { row: { key: "UNKNOWN", date: timestampFromDate(new Date()), externalWarehouseId: "W1" }, skuFound: false },
          row("K2", randomUUID(), 1, "2026-03-02T00:00:00Z", "NOPE"),
          { row: { key: "K3", skuId: randomUUID(), externalWarehouseId: "W1" }, skuFound: true },
          { row: { key: "K4", skuId: randomUUID(), availableQuantity: 1, date: timestampFromDate(new Date("2026-03-02T00:00:00Z")), externalWarehouseId: "W1", supplier: "a\u0000b" }, skuFound: true },
        ],
      },
      as(account),
    );
    expect(res.results.map((r) => r.result?.statusCode)).toEqual([200, 404, 404, 400, 400]);
    const ahead = await client.upsertStock({ rows: [row("K1", sku, 1, new Date(Date.now() + 25 * 3600_000).toISOString()), row("K1", sku, 2, new Date(Date.now() + 23 * 3600_000).toISOString(), "W2")] }, as(account));
    expect(ahead.results.map((r) => [r.result?.statusCode, r.result?.message])).toEqual([
      [400, "[0].date: must not lie more than a day in the future"],
      [404, expect.any(String)],
    ]);
    expect(res.results[3].result?.message).toContain("[3].date");
    // Text Postgres cannot store is that row's 400 naming the field, never an unnamed failure.
    expect(res.results[4].result?.message).toBe("[4].supplier: must be text without NUL characters or broken surrogates");
    const older = await client.upsertStock({ rows: [row("K1", sku, 3, "2026-03-01T00:00:00Z")] }, as(account));
    expect(older.results[0].result).toMatchObject({ statusCode: 200, message: "ignored: older than the stored snapshot", reference: "K1", referenceField: "key" });
    const newer = await client.upsertStock({ rows: [row("K1", sku, 7, "2026-03-03T00:00:00Z")] }, as(account));
    expect(newer.results[0].result?.message).toBe("stock updated");
    // A replay of the stored snapshot changes nothing and announces nothing.
    const replay = await client.upsertStock({ rows: [row("K1", sku, 7, "2026-03-03T00:00:00Z")] }, as(account));
    expect(replay.results[0].result).toMatchObject({ statusCode: 200, message: "unchanged: the same snapshot is stored" });
    const stockAfterReplay = await stockOf(account, "W1");
    expect(stockAfterReplay[0].availableQuantity).toBe(7);
    const stock = await stockOf(account, "W1");
    expect(stock.map((s) => [s.key, s.availableQuantity, s.physicalQuantity, s.warehouseId, s.externalWarehouseId])).toEqual([["K1", 7, 8, wh.id, "W1"]]);
    const msgs = await eventually(async () => {
      const ms = stockMessagesOf(account);
      return ms.length === 2 && ms;
    });
    expect(msgs.map((m) => [m.version, m.availableQuantity, m.skuId, m.externalWarehouseId])).toEqual([
      [1n, 10, sku, "W1"],
      [2n, 7, sku, "W1"],
    ]);
    expect(await stockOf(randomUUID())).toEqual([]);
    expect(await codeOf(client.listStock({ externalWarehouseId: "W1" }, as(randomUUID())))).toBe(Code.NotFound);
  });

  it("applies a same-date correction with other values", async () => {
    const account = randomUUID();
    await warehouse(account, "W1");
    const sku = randomUUID();
    await client.upsertStock({ rows: [row("K1", sku, 5, "2026-03-02T00:00:00Z")] }, as(account));
    const fixed = await client.upsertStock({ rows: [row("K1", sku, 6, "2026-03-02T00:00:00Z")] }, as(account));
    expect(fixed.results[0].result?.message).toBe("stock updated");
    expect((await stockOf(account))[0].availableQuantity).toBe(6);
  });

  it("filters stock by keys, skus and eans, and the path's warehouse", async () => {
    const account = randomUUID();
    await warehouse(account, "W1");
    await warehouse(account, "W2");
    await client.upsertStock(
      {
        rows: [
          { row: { key: "A", sku: "SA", ean: "EA", skuId: randomUUID(), availableQuantity: 1, date: timestampFromDate(new Date()) }, skuFound: true },
          { row: { key: "B", sku: "SB", ean: "EB", skuId: randomUUID(), availableQuantity: 2, date: timestampFromDate(new Date()) }, skuFound: true },
        ],
        externalWarehouseId: "W2",
      },
      as(account),
    );
    const list = async (f: Partial<{ keys: string[]; skus: string[]; eans: string[] }>) =>
      (await client.listStock({ externalWarehouseId: "W2", ...f }, as(account))).rows.map((r) => r.key).sort();
    expect(await list({})).toEqual(["A", "B"]);
    expect(await list({ keys: ["B"] })).toEqual(["B"]);
    expect(await list({ skus: ["SA"] })).toEqual(["A"]);
    expect(await list({ eans: ["EB", "EA"] })).toEqual(["A", "B"]);
    expect(await stockOf(account, "W1")).toEqual([]);
  });

  it("never moves stock backwards under two concurrent writers delivering the same rows in opposite orders", async () => {
    const account = randomUUID();
    await warehouse(account, "W1");
    const skus = Array.from({ length: 200 }, () => randomUUID());
    // Writer A sends each SKU's newer snapshot (day 2), writer B the older (day 1), in opposite orders.
    const newer = skus.map((s, i) => row(`K${i}`, s, 200 + i, "2026-03-02T00:00:00Z"));
    const older = skus.map((s, i) => row(`K${i}`, s, i, "2026-03-01T00:00:00Z")).reverse();
    for (let round = 0; round < 3; round++) {
      await Promise.all([client.upsertStock({ rows: newer }, as(account)), client.upsertStock({ rows: older }, as(account))]);
    }
    const stock = await stockOf(account);
    expect(stock).toHaveLength(200);
    for (const s of stock) expect(s.availableQuantity).toBe(200 + Number(s.key.slice(1)));
  });

  it("writes a batch of 1000 rows (10 warehouses, some older) as a fixed handful of statements", async () => {
    const account = randomUUID();
    for (let w = 0; w < 10; w++) await warehouse(account, `W${w}`);
    const counted = createDb({ url: inventory.url, schema: "inventory" });
    const statements: string[] = [];
    counted.on("query", (q: { sql: string }) => statements.push(q.sql));
    const logger = pino({ level: "silent" });
    const ctx: ServiceContext = { db: counted, logger, relay: new OutboxRelay({ db: counted, bus: inventory.stream.bus, logger }) };
    try {
      const skus = Array.from({ length: 100 }, () => randomUUID());
      const batch = (day: number) =>
        Array.from({ length: 1000 }, (_, i) => create(inventoryV1.StockWriteSchema, row(`K${i % 100}`, skus[i % 100], i, `2026-03-0${day}T00:00:00Z`, `W${Math.floor(i / 100)}`)));
      const first = await upsertStock(ctx, account, batch(2));
      expect(first.every((o) => o.message === "stock updated")).toBe(true);
      expect(statements.length).toBeLessThanOrEqual(8);
      statements.length = 0;
      const older = await upsertStock(ctx, account, batch(1));
      expect(older.every((o) => o.message === "ignored: older than the stored snapshot")).toBe(true);
      expect(statements.length).toBeLessThanOrEqual(8);
    } finally {
      await counted.destroy();
    }
    expect((await client.listStock({}, as(account))).totalCount).toBe(1000n);
  });
});
