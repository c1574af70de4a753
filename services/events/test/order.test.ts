import { randomUUID } from "node:crypto";
import { fromBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { BusMessage } from "@analytics/bus";
import { topics, type Topic } from "@analytics/contracts";
import { migrate } from "@analytics/db";
import { consumerHandler, type Delivery } from "@analytics/rpc";
import { busMessage, databaseForFile, eventually } from "@analytics/testing";
import { migrations } from "../src/migrations";
import { queueConsumer } from "../src/subscriptions";

/**
 * The queue's order per aggregate: messages of one product, purchase order or stock trigger that
 * arrive out of write order (a batch redelivered after its replica died, two replicas' batches,
 * created and updated on consumers of their own) never leave an older entry as the newest.
 */
describe("events queue order per aggregate (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("events");
  const handle = (messages: BusMessage[]) => consumerHandler(db, "events", queueConsumer)(messages);

  const message = <D extends DescMessage>(topic: Topic<D>, accountId: string, init: MessageInitShape<D>) => busMessage(topic, accountId, "", init);
  const sku = (accountId: string, id: string, version: number, name = `v${version}`) =>
    message(topics.catalogueSkuUpdated, accountId, { accountId, skuId: id, version: BigInt(version), product: { id, key: "K", sku: "K", productName: name } });
  const draft = (accountId: string, id: string, version: number) =>
    message(topics.ordersPurchaseOrderUpdated, accountId, {
      accountId,
      purchaseOrderId: id,
      version: BigInt(version),
      wasDraft: true,
      isDraft: true,
      purchaseOrder: { externalPoNo: "PO-1", supplier: `v${version}` },
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

  it("makes no entry of a product message older than one already queued (a redelivery after a newer write)", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    await handle([sku(acc, product, 1), sku(acc, product, 2)]);
    await handle([sku(acc, product, 1)]);
    await handle([sku(acc, product, 4), sku(acc, product, 3)]);
    expect((await entries(acc)).map((p) => p.productName)).toEqual(["v1", "v2", "v4"]);
  });

  it("makes no entry of a purchase-order or stock-trigger message older than one seen", async () => {
    const acc = randomUUID();
    const order = randomUUID();
    await handle([draft(acc, order, 2), trigger(acc, 2)]);
    await handle([draft(acc, order, 1), trigger(acc, 1), draft(acc, order, 2)]);
    await handle([draft(acc, order, 3)]);
    expect((await entries(acc)).map((p) => p.supplier ?? p.min)).toEqual(["v2", 2, "v3"]);
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

  it("runs batches that share a product one after the other: an older message handled alongside a newer one makes no entry", async () => {
    const acc = randomUUID();
    const product = randomUUID();
    const newer = await openBatch([sku(acc, product, 2)]);
    await newer.done;
    const older = handle([sku(acc, product, 1)]);
    await waitingOnALock();
    await newer.commit();
    await older;
    expect((await entries(acc)).map((p) => p.productName)).toEqual(["v2"]);
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
