import { randomUUID } from "node:crypto";
import { fromBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { BusMessage } from "@analytics/bus";
import { topics, type Topic } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import { consumerHandler, type Delivery } from "@analytics/rpc";
import { busMessage, databaseForFile, eventually } from "@analytics/testing";
import { migrations } from "../src/migrations";
import { eventsService } from "../src/service";
import { queueConsumer } from "../src/subscriptions";

/**
 * The queue's order per aggregate: messages of one product, purchase order or stock trigger that
 * arrive out of write order (a batch redelivered after its replica died, two replicas' batches,
 * created and updated on consumers of their own) each make their entry once, and never leave an
 * older entry as the newest.
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
  const price = (accountId: string, productId: string, value: string) =>
    message(topics.pricingPriceUpserted, accountId, {
      accountId,
      productId,
      version: 1n,
      priceId: randomUUID(),
      listOrder: 1n,
      priceOrder: 1n,
      price: { listExternalId: "L1", price: { value }, currency: "EUR", productId },
    });

  const entries = async (accountId: string) => (await db("events").where({ account_id: accountId }).orderBy("seq")).map((r) => r.payload);

  beforeAll(async () => {
    await migrate(db, "events", migrations);
  });

  // Each version makes one entry, also one arriving after a newer version; after such a late
  // entry the newest version's state comes again, so that the newest entry is the newest state.
  it("gives every version of a product one entry, also one arriving late, and leaves the newest version newest", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const v2 = sku(acc, product, 2);
    await handle([sku(acc, product, 1)]);
    await handle([sku(acc, product, 3)]);
    await handle([v2]);
    // Replays: the same message (inbox), and each version under a new message id.
    await handle([v2, sku(acc, product, 1), sku(acc, product, 2), sku(acc, product, 3)]);
    // Out of order within one batch, with a version twice; a late one followed by a newer one needs nothing more.
    await handle([sku(acc, product, 5), sku(acc, product, 4), sku(acc, product, 4)]);
    await handle([sku(acc, product, 7), sku(acc, product, 6), sku(acc, product, 8)]);
    expect((await entries(acc)).map((p) => p.productName)).toEqual(["v1", "v3", "v2", "v3", "v5", "v4", "v5", "v7", "v6", "v8"]);
  });

  it("forgets queued versions after the inbox's retention, keeping the recent ones", async () => {
    const acc = randomUUID();
    const [old, recent] = [randomUUID(), randomUUID()];
    await handle([sku(acc, old, 1), sku(acc, old, 2), sku(acc, recent, 1)]);
    const queued = async () => (await db("queued_versions").where({ account_id: acc }).orderBy(["aggregate", "version"])).map((r) => `${r.aggregate === `sku:${old}` ? "old" : "recent"}/${r.version}`);
    expect((await queued()).sort()).toEqual(["old/1", "old/2", "recent/1"]);
    await db("queued_versions").where({ account_id: acc, aggregate: `sku:${old}` }).update({ queued_at: db.raw("now() - interval '9 days'") });
    // As the service prunes it, hourly with its inbox.
    const { prune } = eventsService({ allowPrivate: false, concurrencyPerEndpoint: 1, pollMs: 1000, imageUrls: { signing: "s".repeat(32) } });
    await prune!(db);
    expect(await queued()).toEqual(["recent/1"]);
  });

  it("gives every version of a draft order one entry, and a late draft message never leaves the order shown as a draft after it left", async () => {
    const acc = randomUUID();
    const order = randomUUID();
    const left = { wasDraft: true, isDraft: false };
    await handle([draft(acc, order, 1)]);
    // It leaves draft (v3) and changes as an open order (v4: no entry); the messages come v4, v3, v2.
    await handle([draft(acc, order, 4, { wasDraft: false, isDraft: false })]);
    await handle([draft(acc, order, 3, left)]);
    await handle([draft(acc, order, 2)]);
    await handle([draft(acc, order, 2), draft(acc, order, 3, left), draft(acc, order, 1)]);
    const shown = (await entries(acc)).map((p) => `${p.supplier} ${p.deliveryStatus}`);
    expect(shown).toEqual(["v1 4", "v3 5", "v2 4", "v3 5"]);
  });

  it("gives every version of a stock trigger one entry, also one arriving late, and leaves the newest version newest", async () => {
    const acc = randomUUID();
    await handle([trigger(acc, 1), trigger(acc, 3)]);
    await handle([trigger(acc, 2), trigger(acc, 2)]);
    await handle([trigger(acc, 1), trigger(acc, 3), trigger(acc, 2)]);
    await handle([trigger(acc, 5), trigger(acc, 4)]);
    expect((await entries(acc)).map((p) => p.min)).toEqual([1, 3, 2, 3, 5, 4, 5]);
  });

  it("makes no entry of an order message older than a version recorded before entries kept their payload (migration 008)", async () => {
    const acc = randomUUID();
    const order = randomUUID();
    await handle([draft(acc, order, 2)]);
    await db("aggregate_versions").where({ account_id: acc }).update({ payload: null });
    await handle([draft(acc, order, 1)]);
    expect((await entries(acc)).map((p) => p.supplier)).toEqual(["v2"]);
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

  it("runs batches that share a product one after the other: an older message handled alongside a newer one is followed by the newer again", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const newer = await openBatch([sku(acc, product, 2)]);
    await newer.done;
    const older = handle([sku(acc, product, 1)]);
    await waitingOnALock();
    await newer.commit();
    await older;
    expect((await entries(acc)).map((p) => p.productName)).toEqual(["v2", "v1", "v2"]);
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
