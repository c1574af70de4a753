import { randomUUID } from "node:crypto";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import pino from "pino";
import { Code, ConnectError } from "@connectrpc/connect";
import { inventoryMessagesV1, inventoryV1, topics } from "@analytics/contracts";
import { OutboxRelay } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import { codeOf, eventually, serviceUnderTest, subjectsUnder } from "@analytics/testing";
import { startInventoryService } from "../src/service";
import { recordTraffic } from "../src/stores";
import { upsertTriggers } from "../src/triggers";

const { InventoryService } = inventoryV1;
const ts = (iso: string) => timestampFromDate(new Date(iso));

describe("inventory service: stores, store traffic, stock triggers (real Postgres and JetStream)", () => {
  const inventory = serviceUnderTest(InventoryService, startInventoryService, { schema: "inventory", probe: subjectsUnder("analytics.inventory.") });
  const { client, as, published } = inventory;
  // The domain functions on a pool of our own, to count the statements they send.
  const counted = inventory.openDb("inventory");
  const statements: string[] = [];
  counted.on("query", (q: { sql: string }) => statements.push(q.sql));
  let ctx: ServiceContext;
  beforeAll(() => {
    const logger = pino({ level: "silent" });
    ctx = { db: counted, logger, relay: new OutboxRelay({ db: counted, bus: inventory.stream.bus, logger }) };
  });

  const warehouse = async (account: string, externalId: string) =>
    (await client.upsertWarehouses({ warehouses: [{ externalId, name: externalId }] }, as(account))).results[0].warehouse!;

  it("creates, replaces, reads, lists and deletes stores; unknown warehouses are invalid; other accounts get 404", async () => {
    const account = randomUUID();
    const other = randomUUID();
    await warehouse(account, "W1");
    const created = await client.upsertStores({ stores: [{ externalStoreId: "S1", name: "Shop", channelType: 1, warehouses: ["W1"], countryCode: "SE" }] }, as(account));
    expect(created.results[0].result?.statusCode).toBe(201);
    expect(created.results[0].store).toMatchObject({ externalStoreId: "S1", warehouses: ["W1"], countryCode: "SE", channelType: 1 });
    const err = (await client.upsertStores({ stores: [{ externalStoreId: "S2", warehouses: ["W9"] }] }, as(account)).catch((e) => e)) as ConnectError;
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain("[0].warehouses: unknown warehouse W9");
    expect(await codeOf(client.upsertStores({ stores: [{ externalStoreId: "S3", channelType: 3 }] }, as(account)))).toBe(Code.InvalidArgument);
    const currency = (await client.upsertStores({ stores: [{ externalStoreId: "S4", currencyCode: "sek" }] }, as(account)).catch((e) => e)) as ConnectError;
    expect([currency.code, currency.rawMessage]).toEqual([Code.InvalidArgument, "[0].currencyCode: must be an ISO 4217 currency code (e.g. SEK)"]);
    expect(await codeOf(client.upsertStores({ stores: [{ externalStoreId: "S1", warehouses: ["W1"] }] }, as(other)))).toBe(Code.InvalidArgument);
    const put = await client.updateStore({ externalStoreId: "S1", store: { name: "Shop 2" } }, as(account));
    expect(put.store).toMatchObject({ name: "Shop 2", warehouses: [] });
    expect(put.store?.countryCode).toBeUndefined();
    expect((await client.getStore({ externalStoreId: "S1" }, as(account))).store?.name).toBe("Shop 2");
    expect((await client.listStores({}, as(account))).stores.map((s) => s.externalStoreId)).toEqual(["S1"]);
    expect((await client.listStores({}, as(other))).stores).toEqual([]);
    for (const call of [client.getStore({ externalStoreId: "S1" }, as(other)), client.updateStore({ externalStoreId: "S1", store: {} }, as(other)), client.deleteStore({ externalStoreId: "S1" }, as(other))]) {
      expect(await codeOf(call)).toBe(Code.NotFound);
    }
    await client.deleteStore({ externalStoreId: "S1" }, as(account));
    expect(await codeOf(client.getStore({ externalStoreId: "S1" }, as(account)))).toBe(Code.NotFound);
    const msgs = await eventually(async () => {
      const ms = published.filter((m) => m.subject.includes("analytics.inventory.store.")).map((m) => fromBinary(inventoryMessagesV1.StoreChangedSchema, m.payload)).filter((m) => m.accountId === account);
      return ms.length === 3 && ms;
    });
    expect(msgs.map((m) => [m.version, m.deleted, m.store?.name])).toEqual([[1n, false, "Shop"], [2n, false, "Shop 2"], [3n, true, "Shop 2"]]);
  });

  it("refuses a repeated store or stock trigger (400 naming the item it repeats) and a store write at another revision (Aborted)", async () => {
    const account = randomUUID();
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: ConnectError) => [Code[e.code], e.rawMessage]);
    const wh = await warehouse(account, "W1");
    expect(await refusal(client.upsertStores({ stores: [{ externalStoreId: "S1", name: "a" }, { externalStoreId: "S1", name: "b" }] }, as(account)))).toEqual([
      "InvalidArgument",
      "[1].externalStoreId: repeats item 0",
    ]);
    const sku = randomUUID();
    const write = (trigger: MessageInitShape<typeof inventoryV1.StockTriggerSchema>, skuFound = true) => ({ trigger: { skuId: sku, key: "K1", ...trigger }, skuFound });
    // The same (warehouse, SKU) by id and by externalId; a refused item (404) names nothing.
    const writes = [write({ warehouseExternalId: "W9" }), write({ warehouseExternalId: "W1" }), write({ warehouseId: wh.id, min: 1 })];
    const outcomes = await upsertTriggers(ctx, account, writes.map((w) => create(inventoryV1.StockTriggerWriteSchema, w)));
    expect(outcomes.map((o) => [o.statusCode, o.message, o.violations.map((v) => `${v.path} ${v.message}`)])).toEqual([
      [404, "warehouse W9 not found", []],
      [201, "created", []],
      [400, "[2]: repeats item 1 (same warehouse and SKU)", ["[2].key repeats item 1"]],
    ]);
    await client.upsertStores({ stores: [{ externalStoreId: "S1", name: "Shop", warehouses: ["W1"] }] }, as(account));
    const { revision } = await client.getStore({ externalStoreId: "S1" }, as(account));
    await client.updateStore({ externalStoreId: "S1", store: { name: "Now", warehouses: ["W1"] }, ifRevision: revision }, as(account));
    const stale = "store S1 changed since the revision the request named";
    expect(await refusal(client.updateStore({ externalStoreId: "S1", store: { name: "Late", warehouses: [] }, ifRevision: revision }, as(account)))).toEqual(["Aborted", stale]);
    expect(await refusal(client.deleteStore({ externalStoreId: "S1", ifRevision: revision }, as(account)))).toEqual(["Aborted", stale]);
    expect(await refusal(client.deleteStore({ externalStoreId: "S9", ifRevision: revision }, as(account)))).toEqual(["Aborted", "store S9 changed since the revision the request named"]);
    expect(await refusal(client.deleteStore({ externalStoreId: "S9" }, as(account)))).toEqual(["NotFound", "store S9 not found"]);
    expect((await client.getStore({ externalStoreId: "S1" }, as(account))).store?.name).toBe("Now");
  });

  it("records traffic: (counter, eventTime) unique, a replay overwrites, negatives are invalid, time ranges filter", async () => {
    const account = randomUUID();
    const events = [
      { storeTrafficCounterId: "C1", eventTime: ts("2026-03-01T10:00:00Z"), incomingTraffic: 5, outgoingTraffic: 4 },
      { storeTrafficCounterId: "C1", eventTime: ts("2026-03-01T11:00:00Z"), incomingTraffic: 7, outgoingTraffic: 6, name: "door", storeId: "S1" },
      { storeTrafficCounterId: "C2", eventTime: ts("2026-03-01T10:00:00Z"), incomingTraffic: 1, outgoingTraffic: 1 },
    ];
    expect(await client.recordStoreTraffic({ events }, as(account))).toMatchObject({ created: 3, updated: 0 });
    expect(await client.recordStoreTraffic({ events: [{ ...events[0], incomingTraffic: 50 }] }, as(account))).toMatchObject({ created: 0, updated: 1 });
    const bad = (await client.recordStoreTraffic({ events: [{ ...events[0], incomingTraffic: -1 }] }, as(account)).catch((e) => e)) as ConnectError;
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toContain("[0].incomingTraffic");
    const c1 = await client.listStoreTraffic({ storeTrafficCounterId: "C1" }, as(account));
    expect(c1.events.map((e) => [e.incomingTraffic, e.name])).toEqual([[50, undefined], [7, "door"]]);
    const ranged = await client.listStoreTraffic({ from: ts("2026-03-01T10:30:00Z"), to: ts("2026-03-01T12:00:00Z") }, as(account));
    expect(ranged.events.map((e) => e.storeTrafficCounterId)).toEqual(["C1"]);
    expect(ranged.totalCount).toBe(1n);
    expect((await client.listStoreTraffic({}, as(randomUUID()))).events).toEqual([]);
    expect(await codeOf(client.listStoreTraffic({ from: ts("2026-03-02T00:00:00Z"), to: ts("2026-03-01T00:00:00Z") }, as(account)))).toBe(Code.InvalidArgument);
  });

  it("writes 10,000 traffic events (and their replay) as a fixed handful of statements", async () => {
    const account = randomUUID();
    const start = Date.parse("2026-01-01T00:00:00Z");
    const events = Array.from({ length: 10_000 }, (_, i) =>
      create(inventoryV1.StoreTrafficEventSchema, { storeTrafficCounterId: `C${i % 10}`, eventTime: timestampFromDate(new Date(start + i * 60_000)), incomingTraffic: i, outgoingTraffic: 0 }),
    );
    statements.length = 0;
    expect(await recordTraffic(ctx, account, events)).toMatchObject({ created: 10_000, updated: 0 });
    expect(statements.length).toBeLessThanOrEqual(6);
    statements.length = 0;
    // A replay as stored writes nothing (and announces nothing).
    expect(await recordTraffic(ctx, account, events)).toMatchObject({ created: 0, updated: 0 });
    expect(statements.length).toBeLessThanOrEqual(6);
    expect((await client.listStoreTraffic({}, as(account))).totalCount).toBe(10_000n);
  });

  it("writes 1000 stock triggers as a fixed handful of statements", async () => {
    const account = randomUUID();
    await warehouse(account, "W1");
    const writes = Array.from({ length: 1000 }, (_, i) =>
      create(inventoryV1.StockTriggerWriteSchema, { trigger: { warehouseExternalId: "W1", key: `K${i}`, skuId: randomUUID(), min: i }, skuFound: true }),
    );
    statements.length = 0;
    const outcomes = await upsertTriggers(ctx, account, writes);
    expect(outcomes.every((o) => o.statusCode === 201)).toBe(true);
    expect(statements.length).toBeLessThanOrEqual(10);
  });

  it("upserts stock triggers by (warehouse, SKU), reads them by ID and filters, announces each with the trigger; 409 on warehouse delete", async () => {
    const account = randomUUID();
    const wh = await warehouse(account, "W1");
    const sku = randomUUID();
    const write = (trigger: MessageInitShape<typeof inventoryV1.StockTriggerSchema>, skuFound = true) => ({ trigger: { skuId: sku, key: "K1", ...trigger }, skuFound });
    const res = await client.upsertStockTriggers(
      {
        triggers: [
          write({ warehouseExternalId: "W1", min: 2, max: 10, startDate: "2026-03-01", minMaxUpdatedAt: ts("2026-03-01T08:00:00Z") }),
          write({ warehouseExternalId: "W9" }),
          write({ warehouseExternalId: "W1", key: "NOPE" }, false),
          write({ warehouseExternalId: "W1", min: 5, max: 1 }),
          write({ warehouseId: "not-a-uuid" }),
        ],
      },
      as(account),
    );
    expect(res.results.map((r) => r.result?.statusCode)).toEqual([201, 404, 404, 400, 400]);
    const created = res.results[0].trigger!;
    expect(created).toMatchObject({ warehouseId: wh.id, warehouseExternalId: "W1", skuId: sku, key: "K1", min: 2, max: 10, startDate: "2026-03-01" });
    const again = await client.upsertStockTriggers({ triggers: [write({ warehouseId: wh.id, min: 3, max: 9, preventRestock: true })] }, as(account));
    expect(again.results[0].result).toMatchObject({ statusCode: 200, reference: "K1", referenceField: "key" });
    expect(again.results[0].trigger).toMatchObject({ id: created.id, min: 3, preventRestock: true });
    expect(again.results[0].trigger?.startDate).toBeUndefined();
    // Sent again as stored: answered unchanged, no new version, nothing announced.
    const unchanged = await client.upsertStockTriggers({ triggers: [write({ warehouseId: wh.id, min: 3, max: 9, preventRestock: true })] }, as(account));
    expect(unchanged.results[0].result).toMatchObject({ statusCode: 200, message: "unchanged" });
    expect(unchanged.results[0].trigger).toEqual(again.results[0].trigger);
    const limits = await client.upsertStockTriggers({ triggers: [write({ warehouseId: wh.id, lowerLimit: 9, upperLimit: 2 })] }, as(account));
    expect([limits.results[0].result?.statusCode, limits.results[0].result?.message]).toEqual([400, "[0].lowerLimit: must not exceed upperLimit"]);
    // Both identifiers must name the same warehouse.
    const both = await client.upsertStockTriggers({ triggers: [write({ warehouseId: wh.id, warehouseExternalId: "W2", min: 7 })] }, as(account));
    expect(both.results[0].result).toMatchObject({ statusCode: 400, message: "[0].warehouseExternalId names warehouse W1, not W2" });
    expect((await client.getStockTrigger({ id: created.id }, as(account))).trigger).toEqual(again.results[0].trigger);
    expect(await codeOf(client.getStockTrigger({ id: created.id }, as(randomUUID())))).toBe(Code.NotFound);
    expect(await codeOf(client.getStockTrigger({ id: 999999n }, as(account)))).toBe(Code.NotFound);
    const list = async (f: MessageInitShape<typeof inventoryV1.ListStockTriggersRequestSchema>) => (await client.listStockTriggers(f, as(account))).triggers.map((x) => x.id);
    expect(await list({})).toEqual([created.id]);
    expect(await list({ warehouseIds: [wh.id] })).toEqual([created.id]);
    expect(await list({ skuIds: [randomUUID()] })).toEqual([]);
    expect(await list({ keys: ["K1", "K2"] })).toEqual([created.id]);
    expect(await codeOf(client.listStockTriggers({ warehouseIds: ["x"] }, as(account)))).toBe(Code.InvalidArgument);
    expect((await client.listStockTriggers({}, as(randomUUID()))).triggers).toEqual([]);
    const last = await client.upsertStockTriggers({ triggers: [write({ warehouseId: wh.id, min: 4, max: 9, preventRestock: true })] }, as(account));
    expect(last.results[0].result?.message).toBe("updated");
    const msgs = await eventually(async () => {
      const ms = published
        .filter((m) => topics.inventoryStockTriggerTopics.some((x) => m.subject.endsWith(x.subject)))
        .map((m) => ({ subject: m.subject, m: fromBinary(inventoryMessagesV1.StockTriggerChangedSchema, m.payload) }))
        .filter((x) => x.m.accountId === account);
      return ms.some((x) => x.m.trigger?.min === 4) && ms;
    });
    expect(msgs.map((x) => [x.subject.split(".").pop(), x.m.version, x.m.trigger?.min])).toEqual([["created", 1n, 2], ["updated", 2n, 3], ["updated", 3n, 4]]);
    expect(await codeOf(client.deleteWarehouse({ externalId: "W1" }, as(account)))).toBe(Code.AlreadyExists);
  });
});
