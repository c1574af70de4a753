import { randomUUID } from "node:crypto";
import { fromBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { BusMessage } from "@analytics/bus";
import { topics, type Topic } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import { consumerHandler, type Delivery } from "@analytics/rpc";
import { busMessage, databaseForFile, eventually } from "@analytics/testing";
import pino from "pino";
import { Registry } from "prom-client";
import { gapSweeper } from "../src/gap-sweep";
import { migrations } from "../src/migrations";
import { eventsService } from "../src/service";
import { queueConsumer } from "../src/subscriptions";

/**
 * The queue's order per aggregate: messages of one product, price, purchase order or stock trigger
 * that arrive out of write order (a batch redelivered after its replica died, two replicas'
 * batches, created and updated on consumers of their own) make their entries in version order,
 * each once; a gap open past the bound is given up on.
 */
describe("events queue order per aggregate (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("events");
  const handle = (messages: BusMessage[]) => consumerHandler(db, "events", queueConsumer)(messages);

  const message = <D extends DescMessage>(topic: Topic<D>, accountId: string, init: MessageInitShape<D>) => busMessage(topic, accountId, "", init);
  const sku = (accountId: string, id: string, version: number, name = `v${version}`) =>
    message(topics.catalogueSkuUpdated, accountId, { accountId, skuId: id, version: BigInt(version), product: { id, key: "K", sku: "K", productName: name } });
  /** A purchase order's message: a draft (the default), or one leaving draft, or after it left. */
  const draft = (accountId: string, id: string, version: number, { wasDraft = true, isDraft = true } = {}) =>
    message(topics.ordersPurchaseOrderUpdated, accountId, {
      accountId,
      purchaseOrderId: id,
      version: BigInt(version),
      wasDraft,
      isDraft,
      purchaseOrder: wasDraft || isDraft ? { externalPoNo: "PO-1", supplier: `v${version}`, deliveryStatus: isDraft ? 4 : 5 } : undefined,
    });
  const trigger = (accountId: string, version: number) =>
    message(topics.inventoryStockTriggerUpdated, accountId, { accountId, stockTriggerId: 7n, version: BigInt(version), trigger: { id: 7n, key: "K", min: version } });
  const price = (accountId: string, productId: string, value: string, { priceId = randomUUID(), version = 1 } = {}) =>
    message(topics.pricingPriceUpserted, accountId, {
      accountId,
      productId,
      version: BigInt(version),
      priceId,
      listOrder: 1n,
      priceOrder: 1n,
      price: { listExternalId: "L1", price: { value }, currency: "EUR", productId },
    });

  const entries = async (accountId: string) => (await db("events").where({ account_id: accountId }).orderBy("seq")).map((r) => r.payload);
  const names = async (accountId: string) => (await entries(accountId)).filter((p) => p.productName).map((p) => p.productName);
  const shownOrders = async (accountId: string) => (await entries(accountId)).filter((p) => p.supplier).map((p) => `${p.supplier} ${p.deliveryStatus}`);
  const held = async (accountId: string) =>
    (await db("held_versions").where({ account_id: accountId }).orderBy(["aggregate", "version"])).map((r) => `${r.aggregate}/${r.version}`);

  /**
   * An events replica's sweep of held versions (bound `holdMs`), started now: it sweeps at once,
   * then about every holdMs / 2; stop() returns after its sweep under way (so at least one) ended.
   */
  function sweeper(holdMs = 100) {
    const metrics = new Registry();
    const worker = gapSweeper(holdMs)({ db: database.openDb("events"), logger: pino({ level: "silent" }), metrics });
    const superseded = async () =>
      (await metrics.getSingleMetric("events_queue_superseded_versions_total")!.get()).values.filter((v) => v.labels.first_seen === "false").reduce((n, v) => n + v.value, 0);
    return { superseded, stop: () => worker.stop() };
  }

  beforeAll(async () => {
    await migrate(db, "events", migrations);
  });

  // The redelivery order that broke it (v1, v3, then v2): entries v1, v2, v3, each once.
  it("queues a product's versions in version order, each once, holding a later one until the one before it comes", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const v2 = sku(acc, product, 2);
    await handle([sku(acc, product, 1)]);
    await handle([sku(acc, product, 3)]);
    expect(await names(acc)).toEqual(["v1"]);
    expect(await held(acc)).toEqual([`sku:${product}/3`]);
    await handle([v2]);
    // Replays: the same message (inbox), and each version under a new message id.
    await handle([v2, sku(acc, product, 1), sku(acc, product, 2), sku(acc, product, 3)]);
    // Out of order within one batch, with a version twice.
    await handle([sku(acc, product, 5), sku(acc, product, 4), sku(acc, product, 4)]);
    await handle([sku(acc, product, 7), sku(acc, product, 6), sku(acc, product, 8)]);
    expect(await names(acc)).toEqual(["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"]);
    expect(await held(acc)).toEqual([]);
  });

  it("queues a draft order's versions in order: a version that makes no entry (no draft) still comes before the next", async () => {
    const acc = randomUUID();
    const order = randomUUID();
    const left = { wasDraft: true, isDraft: false };
    const open = { wasDraft: false, isDraft: false };
    await handle([draft(acc, order, 1)]);
    // It changes as a draft (v2), leaves draft (v3) and changes as an open order (v4: no entry); the messages come v4, v3, v2.
    await handle([draft(acc, order, 4, open)]);
    await handle([draft(acc, order, 3, left)]);
    expect(await shownOrders(acc)).toEqual(["v1 4"]);
    await handle([draft(acc, order, 2)]);
    await handle([draft(acc, order, 2), draft(acc, order, 3, left), draft(acc, order, 1), draft(acc, order, 4, open)]);
    // Back to draft (v6) before the open order's v5 comes.
    await handle([draft(acc, order, 6, { wasDraft: false, isDraft: true })]);
    expect(await shownOrders(acc)).toEqual(["v1 4", "v2 4", "v3 5"]);
    await handle([draft(acc, order, 5, open)]);
    expect(await shownOrders(acc)).toEqual(["v1 4", "v2 4", "v3 5", "v6 4"]);
    expect(await held(acc)).toEqual([]);
  });

  it("queues a stock trigger's versions in order, each once", async () => {
    const acc = randomUUID();
    await handle([trigger(acc, 1), trigger(acc, 3)]);
    await handle([trigger(acc, 2), trigger(acc, 2)]);
    await handle([trigger(acc, 1), trigger(acc, 3), trigger(acc, 2)]);
    await handle([trigger(acc, 5), trigger(acc, 4)]);
    expect((await entries(acc)).map((p) => p.min)).toEqual([1, 2, 3, 4, 5]);
  });

  it("queues a price's versions in order, one entry each, also two versions released together", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const priceId = randomUUID();
    await handle([sku(acc, product, 1)]);
    await handle([price(acc, product, "12.50", { priceId, version: 1 })]);
    await handle([price(acc, product, "14.00", { priceId, version: 3 })]);
    await handle([price(acc, product, "13.00", { priceId, version: 2 })]);
    await handle([price(acc, product, "12.50", { priceId, version: 1 }), price(acc, product, "14.00", { priceId, version: 3 })]);
    expect((await entries(acc)).map((p) => p.prices.map((x: { price: number }) => x.price))).toEqual([[], [12.5], [13], [14]]);
    // A product change and a price change in one batch: two entries, each showing its change once.
    await handle([price(acc, product, "15.00", { priceId, version: 4 }), sku(acc, product, 2)]);
    expect((await entries(acc)).slice(4).map((p) => `${p.productName} ${p.prices.map((x: { price: number }) => x.price)}`)).toEqual(["v2 14", "v2 15"]);
  });

  it("gives up on a gap open past the bound: the held versions are queued in order, the missing one then makes no entry", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const order = randomUUID();
    await handle([sku(acc, product, 1), draft(acc, order, 1)]);
    await handle([sku(acc, product, 4), sku(acc, product, 3), draft(acc, order, 3)]);
    // Two events replicas sweep side by side: each gap is superseded once.
    const [a, b] = [sweeper(), sweeper()];
    try {
      await eventually(async () => (await held(acc)).length === 0, 10_000, "the held versions released");
      expect(await names(acc)).toEqual(["v1", "v3", "v4"]);
      expect(await shownOrders(acc)).toEqual(["v1 4", "v3 4"]);
      await handle([sku(acc, product, 2), draft(acc, order, 2)]);
      expect(await names(acc)).toEqual(["v1", "v3", "v4"]);
      expect(await shownOrders(acc)).toEqual(["v1 4", "v3 4"]);
      expect((await a.superseded()) + (await b.superseded())).toBe(2);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it("supersedes only the versions missing: one held recently still passes when a gap before it is given up on", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    await handle([sku(acc, product, 1), sku(acc, product, 5)]);
    await db("held_versions").where({ account_id: acc }).update({ held_at: db.raw("now() - interval '1 hour'") });
    await handle([sku(acc, product, 3)]);
    const sweep = sweeper(60_000);
    await sweep.stop();
    expect(await names(acc)).toEqual(["v1", "v3", "v5"]);
    expect(await sweep.superseded()).toBe(2);
  });

  it("holds a gap younger than the bound: the sweep leaves it", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    await handle([sku(acc, product, 1), sku(acc, product, 3)]);
    const slow = sweeper(60_000);
    await slow.stop();
    expect(await held(acc)).toEqual([`sku:${product}/3`]);
    await handle([sku(acc, product, 2)]);
    expect(await names(acc)).toEqual(["v1", "v2", "v3"]);
  });

  it("queues each version once, in order, with batches of one product handled by two replicas side by side", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const versions = Array.from({ length: 40 }, (_, i) => i + 1).sort(() => Math.random() - 0.5);
    const batches = Array.from({ length: 10 }, (_, i) => versions.slice(i * 4, i * 4 + 4).map((v) => sku(acc, product, v)));
    const replica = consumerHandler(database.openDb("events"), "events", queueConsumer);
    await Promise.all(batches.map((batch, i) => (i % 2 ? replica(batch) : handle(batch))));
    expect(await names(acc)).toEqual(Array.from({ length: 40 }, (_, i) => `v${i + 1}`));
  });

  it("forgets queued versions after the inbox's retention, keeping the recent ones (the table the queue kept before migration 014)", async () => {
    const acc = randomUUID();
    await db("queued_versions").insert([
      { account_id: acc, aggregate: "sku:old", version: 1, queued_at: db.raw("now() - interval '9 days'") },
      { account_id: acc, aggregate: "sku:recent", version: 1 },
    ]);
    // As the service prunes it, hourly with its inbox.
    const { prune } = eventsService({ allowPrivate: false, concurrencyPerEndpoint: 1, pollMs: 1000, imageUrls: { signing: "s".repeat(32) } }, 1000);
    await prune!(db);
    expect((await db("queued_versions").where({ account_id: acc })).map((r) => r.aggregate)).toEqual(["sku:recent"]);
  });

  /** The queue consumer's work in a transaction of the test's, left open until `commit()`. */
  async function openBatch(messages: BusMessage[]) {
    const tx = await db.transaction();
    const deliveries: Delivery[] = messages.map((m) => {
      const topic = queueConsumer.topics.find((t) => t.subject === m.subject)!;
      return { id: m.id, subject: m.subject, accountId: m.accountId, occurredAt: m.occurredAt, topic, message: fromBinary(topic.schema, m.payload) };
    });
    const done = queueConsumer.handle(tx, deliveries);
    return { done, commit: async () => (await done, await tx.commit()) };
  }
  const waitingOnALock = () =>
    eventually(async () => {
      const { rows } = await db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      return rows[0].n > 0;
    }, 10_000, "a batch waiting on the other's lock");

  it("runs batches that share a product one after the other: the version a held one waits for, handled alongside, releases it", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    await handle([sku(acc, product, 1)]);
    const later = await openBatch([sku(acc, product, 3)]);
    await later.done;
    const missing = handle([sku(acc, product, 2)]);
    await waitingOnALock();
    await later.commit();
    await missing;
    expect(await names(acc)).toEqual(["v1", "v2", "v3"]);
  });

  it("runs batches that share a product one after the other: a product change made alongside a price change shows the price", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    await handle([sku(acc, product, 1)]);
    const repriced = await openBatch([price(acc, product, "12.50")]);
    await repriced.done;
    const renamed = handle([sku(acc, product, 2)]);
    await waitingOnALock();
    await repriced.commit();
    await renamed;
    const newest = (await entries(acc)).at(-1);
    expect(newest).toMatchObject({ productName: "v2", prices: [{ listExternalID: "L1", price: 12.5 }] });
  });
});
