import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { callerHeaders } from "@analytics/auth";
import type { BusMessage } from "@analytics/bus";
import { eventsV1, topics } from "@analytics/contracts";
import { consumerHandler } from "@analytics/rpc";
import { busMessage, eventually, serviceUnderTest } from "@analytics/testing";
import { startEventsService } from "../src/service";
import { queueConsumer } from "../src/subscriptions";

const { EventsService, EventState } = eventsV1;

describe("events service (real Postgres and JetStream)", () => {
  const webhooks = { allowPrivate: false, concurrencyPerEndpoint: 16, pollMs: 250, imageUrls: { signing: "s".repeat(32) } };
  const events = serviceUnderTest(EventsService, (deps) => startEventsService(deps, webhooks), { schema: "events" });
  const { client, db, as } = events;
  const account = randomUUID();
  const other = randomUUID();

  // The message id is the SKU's id, so that sending one SKU twice is a redelivery.
  const skuMessage = (accountId: string, key: string, id = randomUUID(), version = 1) =>
    busMessage(topics.catalogueSkuUpdated, accountId, `sku:${id}`, { accountId, skuId: id, version: BigInt(version), product: { id, key, sku: key, costCalculationPrice: { value: "19.99" } } }, id);
  const publishSku = async (accountId: string, key: string) => {
    const [error] = await events.stream.bus.publish([skuMessage(accountId, key)]);
    if (error) throw error;
  };

  async function seed(accountId: string, n: number, prefix = "k"): Promise<string[]> {
    const before = Number((await db("events").where({ account_id: accountId }).count({ c: "*" }))[0].c);
    for (let i = 0; i < n; i++) await publishSku(accountId, `${prefix}${i}`);
    await eventually(async () => Number((await db("events").where({ account_id: accountId }).count({ c: "*" }))[0].c) === before + n);
    const rows = await db("events").where({ account_id: accountId }).orderBy("seq").select("id");
    return rows.slice(before).map((r) => r.id);
  }

  it("turns a catalogue sku message into one update_sku entry with the product as payload", async () => {
    const [id] = await seed(account, 1, "first");
    const { events, totalCount } = await client.listEvents({ page: { page: 1, pageSize: 10 } }, as(account));
    expect(totalCount).toBe(1n);
    expect(events[0]).toMatchObject({ id, accountId: account, eventType: "update_sku" });
    expect(JSON.parse(events[0].payloadJson)).toMatchObject({ key: "first0", sku: "first0", costCalculationPrice: 19.99, prices: [] });
    expect(events[0].completedAt).toBeUndefined();
  });

  it("turns a stock trigger message (created or updated) into a sku_warehouse_settings_change entry with the trigger as payload", async () => {
    const acc = randomUUID();
    const trigger = (min: number) => ({ id: 7n, warehouseId: randomUUID(), warehouseExternalId: "W1", skuId: randomUUID(), key: "K1", min, startDate: "2026-03-01" });
    const message = (topic: typeof topics.inventoryStockTriggerCreated, min: number) =>
      busMessage(topic, acc, "stock_trigger:7", { accountId: acc, stockTriggerId: 7n, version: BigInt(min), trigger: trigger(min) });
    await consumerHandler(db, "events", queueConsumer)([message(topics.inventoryStockTriggerCreated, 1), message(topics.inventoryStockTriggerUpdated, 2)]);
    const rows = await db("events").where({ account_id: acc }).orderBy("seq");
    expect(rows.map((r) => [r.event_type, r.payload.ID, r.payload.min, r.payload.warehouseExternalId, r.payload.startDate])).toEqual([
      ["sku_warehouse_settings_change", 7, 1, "W1", "2026-03-01"],
      ["sku_warehouse_settings_change", 7, 2, "W1", "2026-03-01"],
    ]);
  });

  it("answers a draft order's lines with their product's integer id as skuId, from the replica for a message from before orders kept it", async () => {
    const acc = randomUUID();
    const [known, unknown] = [randomUUID(), randomUUID()];
    const product = busMessage(topics.catalogueSkuUpdated, acc, `sku:${known}`, { accountId: acc, skuId: known, version: 1n, product: { id: known, key: "K", seq: 42n } });
    const draft = (n: number, items: { skuId: string; skuSeq?: bigint }[]) =>
      busMessage(topics.ordersPurchaseOrderUpdated, acc, `purchase_order:${n}`, {
        accountId: acc,
        purchaseOrderId: randomUUID(),
        version: 1n,
        isDraft: true,
        purchaseOrder: { externalPoNo: `PO-${n}`, deliveryStatus: 4, items: items.map((i) => ({ quantity: 1, ...i })) },
      });
    await consumerHandler(db, "events", queueConsumer)([product, draft(1, [{ skuId: known }, { skuId: unknown }]), draft(2, [{ skuId: known, skuSeq: 7n }])]);
    const payloads = (await db("events").where({ account_id: acc, event_type: "draft_po_change" }).orderBy("seq")).map((r) => r.payload);
    expect(payloads.map((p) => p.items.map((i: Record<string, unknown>) => [i.skuId, i.skuUuid]))).toEqual([
      [
        [42, known],
        [null, unknown],
      ],
      [[7, known]],
    ]);
  });

  it("creates one entry for a redelivered message (inbox)", async () => {
    const handle = consumerHandler(db, "events", queueConsumer);
    const message = skuMessage(account, "dup");
    await handle([message]);
    await handle([message, message]);
    expect(await db("events").whereRaw("payload->>'key' = 'dup'")).toHaveLength(1);
  });

  it("makes the entries of a batch in one go, in order", async () => {
    const acc = randomUUID();
    await consumerHandler(db, "events", queueConsumer)(["b1", "b2", "b3"].map((k) => skuMessage(acc, k)));
    expect((await db("events").where({ account_id: acc }).orderBy("seq")).map((r) => r.payload.key)).toEqual(["b1", "b2", "b3"]);
  });

  it("makes a price change an update_sku with the product and its prices; one entry per product per batch", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const handle = consumerHandler(db, "events", queueConsumer);
    const [first, second] = [randomUUID(), randomUUID()];
    /** A PriceChanged of one price: its id, row version, list and price order, and value. */
    const priceMessage = (productId: string, priceId: string, version: number, listOrder: number, value: string, deleted = false): BusMessage => {
      const topic = deleted ? topics.pricingPriceDeleted : topics.pricingPriceUpserted;
      const price = { listExternalId: `L${listOrder}`, key: "p", price: { value }, currency: "EUR", vat: { value: "25" }, customPrices: { outlet: { value: "1.10" } }, productId };
      return busMessage(topic, acc, `price:${productId}`, { accountId: acc, productId, version: BigInt(version), price, priceId, listOrder: BigInt(listOrder), priceOrder: BigInt(listOrder) });
    };
    const l = (n: number, price: number) => ({ listExternalID: `L${n}`, price, currency: "EUR", vat: 25, customPrices: { outlet: 1.1 } });
    await handle([skuMessage(acc, "p", product)]);
    // Two prices of the product (in list order whatever the message order) and one of a product never announced.
    await handle([priceMessage(product, second, 1, 2, "19.99"), priceMessage(product, first, 1, 1, "10.00"), priceMessage(randomUUID(), randomUUID(), 1, 1, "1")]);
    const rows = await db("events").where({ account_id: acc }).orderBy("seq");
    expect(rows.map((r) => r.payload.prices)).toEqual([[], [l(1, 10.0), l(2, 19.99)]]);
    expect(rows[1].payload.key).toBe("p");
    // Each newer version of a price counts; a replayed one (also under a new message id) changes nothing and makes no entry.
    const entries = async () => Number((await db("events").where({ account_id: acc }).count({ c: "*" }))[0].c);
    await handle([priceMessage(product, first, 2, 1, "11.00")]);
    await handle([priceMessage(product, first, 3, 1, "12.50")]);
    expect(await entries()).toBe(4);
    await handle([priceMessage(product, first, 2, 1, "11.00")]);
    await handle([priceMessage(product, first, 3, 1, "12.50")]);
    expect(await entries()).toBe(4);
    const latest = async () => (await db("events").where({ account_id: acc }).orderBy("seq", "desc").first()).payload.prices;
    expect(await latest()).toEqual([l(1, 12.5), l(2, 19.99)]);
    // A deletion removes it, and an older upsert arriving later does not bring it back.
    await handle([priceMessage(product, second, 2, 2, "19.99", true)]);
    expect(await latest()).toEqual([l(1, 12.5)]);
    expect(await entries()).toBe(5);
    await handle([priceMessage(product, second, 1, 2, "19.99")]);
    expect(await latest()).toEqual([l(1, 12.5)]);
    expect(await entries()).toBe(5);
    // The payload keeps the digits of the decimals (composed by Postgres from the replica).
    const text = (await db("events").where({ account_id: acc }).orderBy("seq", "desc").first().select(db.raw("payload->'prices'->0->>'price' AS price"))).price;
    expect(text).toBe("12.50");
    // A later product change carries the prices it has.
    await handle([{ ...skuMessage(acc, "p2", product, 2), id: randomUUID() }]);
    expect(await db("events").where({ account_id: acc }).orderBy("seq", "desc").first().then((r) => r.payload)).toMatchObject({ key: "p2", prices: [{ price: 12.5 }] });
  });

  it("lists in creation order also after entries were processed (their rows moved in the table)", async () => {
    const acc = randomUUID();
    const ids = await seed(acc, 6, "o");
    await client.batchUpdateEventStatus({ items: [ids[0], ids[2], ids[4]].map((id) => ({ id, state: EventState.COMPLETED })) }, as(acc));
    const all = await client.listEvents({ page: { page: 1, pageSize: 10 } }, as(acc));
    expect(all.events.map((e) => e.id)).toEqual(ids);
    const secondPage = await client.listEvents({ page: { page: 2, pageSize: 3 } }, as(acc));
    expect(secondPage.events.map((e) => e.id)).toEqual(ids.slice(3));
  });

  it("pages in creation order and filters by type and status", async () => {
    const acc = randomUUID();
    const ids = await seed(acc, 5);
    const page2 = await client.listEvents({ page: { page: 2, pageSize: 2 } }, as(acc));
    expect(page2.totalCount).toBe(5n);
    expect(page2.events.map((e) => e.id)).toEqual(ids.slice(2, 4));
    await client.updateEventStatus({ id: ids[0], state: EventState.COMPLETED }, as(acc));
    await client.updateEventStatus({ id: ids[1], state: EventState.FAILED }, as(acc));
    const pending = await client.listEvents({ page: { page: 1, pageSize: 10 }, state: EventState.PENDING }, as(acc));
    expect(pending.events.map((e) => e.id)).toEqual(ids.slice(2));
    const failed = await client.listEvents({ page: { page: 1, pageSize: 10 }, state: EventState.FAILED }, as(acc));
    expect(failed.events.map((e) => e.id)).toEqual([ids[1]]);
    expect(failed.events[0].failedAt).toBeDefined();
    const none = await client.listEvents({ page: { page: 1, pageSize: 10 }, eventType: "draft_po_change" }, as(acc));
    expect(none.totalCount).toBe(0n);
  });

  it("processes an event once: 404 unknown, 409 processed", async () => {
    const [id] = await seed(account, 1, "once");
    await expect(client.updateEventStatus({ id, state: EventState.COMPLETED }, as(account))).resolves.toEqual(
      expect.objectContaining({ id, updated: true }),
    );
    await expect(client.updateEventStatus({ id, state: EventState.FAILED }, as(account))).rejects.toMatchObject({ code: Code.AlreadyExists });
    await expect(client.updateEventStatus({ id: randomUUID(), state: EventState.FAILED }, as(account))).rejects.toMatchObject({ code: Code.NotFound });
    await expect(client.updateEventStatus({ id: "not-a-uuid", state: EventState.FAILED }, as(account))).rejects.toMatchObject({ code: Code.NotFound });
    await expect(client.updateEventStatus({ id, state: EventState.PENDING }, as(account))).rejects.toMatchObject({ code: Code.InvalidArgument });
  });

  it("lets exactly one of many concurrent PATCHes win", async () => {
    const [id] = await seed(account, 1, "race");
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, n) => client.updateEventStatus({ id, state: n % 2 ? EventState.COMPLETED : EventState.FAILED }, as(account))),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const losers = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(losers.every((r) => (r.reason as ConnectError).code === Code.AlreadyExists)).toBe(true);
    const row = await db("events").where({ id }).first();
    expect(Boolean(row.completed_at) !== Boolean(row.failed_at)).toBe(true);
  });

  it("batch-processes with updated=false for processed, unknown and repeated ids", async () => {
    const [a, b] = await seed(account, 2, "batch");
    await client.updateEventStatus({ id: b, state: EventState.COMPLETED }, as(account));
    const unknown = randomUUID();
    const { results } = await client.batchUpdateEventStatus(
      {
        items: [
          { id: a, state: EventState.FAILED },
          { id: b, state: EventState.FAILED },
          { id: unknown, state: EventState.COMPLETED },
          { id: a, state: EventState.COMPLETED },
        ],
      },
      as(account),
    );
    expect(results.map((r) => [r.id, r.updated])).toEqual([
      [a, true],
      [b, false],
      [unknown, false],
      [a, false],
    ]);
    expect((await db("events").where({ id: a }).first()).failed_at).not.toBeNull();
  });

  it("replaces a payload, refusing null and other accounts' events", async () => {
    const [id] = await seed(account, 1, "payload");
    const { event } = await client.updateEventPayload({ id, payloadJson: JSON.stringify({ replaced: [1, 2] }) }, as(account));
    expect(JSON.parse(event!.payloadJson)).toEqual({ replaced: [1, 2] });
    await expect(client.updateEventPayload({ id, payloadJson: "null" }, as(account))).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(client.updateEventPayload({ id, payloadJson: "{" }, as(account))).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(client.updateEventPayload({ id, payloadJson: "1" }, as(other))).rejects.toMatchObject({ code: Code.NotFound });
    await expect(client.updateEventStatus({ id, state: EventState.COMPLETED }, as(other))).rejects.toMatchObject({ code: Code.NotFound });
    expect((await client.listEvents({ page: { page: 1, pageSize: 10 } }, as(other))).events.map((e) => e.id)).not.toContain(id);
  });

  it("answers InvalidArgument, never Internal, for text Postgres cannot store", async () => {
    const [id] = await seed(account, 1, "nul");
    await expect(client.listEvents({ eventType: "a\u0000b" }, as(account))).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(client.updateEventPayload({ id, payloadJson: JSON.stringify({ note: "a\u0000b" }) }, as(account))).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
  });

  it("refuses calls without the internal credential", async () => {
    await expect(client.listEvents({})).rejects.toMatchObject({ code: Code.Unauthenticated });
    await expect(
      client.listEvents({}, { headers: { ...callerHeaders("y".repeat(40), { accountId: account, apiKeyId: "" }) } }),
    ).rejects.toMatchObject({ code: Code.Unauthenticated });
  });
});
