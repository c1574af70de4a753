import { productPriceToRest, productToRest, purchaseOrderToRest, stockTriggerToRest, topics, type ordersV1 } from "@analytics/contracts";
import { mapInSlices, type Tx } from "@analytics/db";
import { dispatch, on, type ConsumerDefinition, type Delivery } from "@analytics/rpc";
import * as repo from "./repository";
import type { EntrySpec, NewEvent } from "./repository";

/**
 * Which integration messages become queue entries (CONTRACT.md, "Event types"), and with what
 * payload: the resource as a GET returns it. A product change and a price change are both an
 * `update_sku` with the product and its prices, composed from the replica both feed
 * (migrations/003_product_replica.ts). A message that is no event for the account (a purchase
 * order that never was a draft, a price of a product never announced) makes none.
 */

/** One price as the replica keeps it (migrations/004_price_entries.ts). */
type PriceEntry = { priceId: string; version: string; listOrder: string; priceOrder: string; deleted: boolean; price: unknown };
type Change = { accountId: string; productId: string; product?: { version: number; json: Record<string, unknown> }; price?: PriceEntry };

const purchaseOrderTopics = [topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated];

/** The product or price a delivery changes in the replica. */
const changeOf = dispatch<Change | undefined>(
  on(topics.catalogueSkuTopics, ({ accountId, message: m }) =>
    m.product ? { accountId, productId: m.product.id, product: { version: Number(m.version), json: productToRest(m.product) } } : undefined,
  ),
  on(topics.pricingPriceTopics, ({ accountId, subject, message: m }) => {
    // A message from before prices travelled one by one has no price_id: nothing to apply.
    if (!m.priceId || !m.price) return undefined;
    const price = {
      priceId: m.priceId,
      version: String(m.version),
      listOrder: String(m.listOrder),
      priceOrder: String(m.priceOrder),
      deleted: subject === topics.pricingPriceDeleted.subject,
      // The product's `prices` entry, as GET /products shows it (the ProductPrice message).
      price: productPriceToRest(m.price),
    };
    return { accountId, productId: m.productId, price };
  }),
);

/** The purchase order or stock trigger a delivery changes, with the version its message carries. */
const orderOrTriggerOf = dispatch(
  on(purchaseOrderTopics, (d) => ({ key: `purchase_order:${d.message.purchaseOrderId}`, version: Number(d.message.version) })),
  on(topics.inventoryStockTriggerTopics, (d) => ({ key: `stock_trigger:${d.message.stockTriggerId}`, version: Number(d.message.version) })),
);

/**
 * The aggregate a delivery changes (a product for product and price messages alike) and, for a
 * product, order or trigger message, the version it carries (each version makes one entry). A
 * price message's version is that of its price row, which the price replica applies by; it has
 * none here.
 */
function aggregateOf(delivery: Delivery, change: Change | undefined): { key: string; version?: number } | undefined {
  if (change) return { key: `sku:${change.productId}`, version: change.product?.version };
  return orderOrTriggerOf(delivery);
}

const entry = (d: Delivery, eventType: string, payload: unknown): NewEvent => ({ accountId: d.accountId, eventType, payload });

/** The order of a draft_po_change: a draft purchase order is created or changed, or leaves draft. */
const draftOrderOf = dispatch(on(purchaseOrderTopics, (d) => ((d.message.wasDraft || d.message.isDraft) && d.message.purchaseOrder) || undefined));

/** Whether a purchase-order or stock-trigger message makes an entry (its payload comes with it). */
const makesDirectEntry = dispatch(
  on(purchaseOrderTopics, (d) => Boolean(draftOrderOf(d))),
  on(topics.inventoryStockTriggerTopics, (d) => Boolean(d.message.trigger)),
);

/** Entries whose message carries the whole payload (no replica needed). */
const directEntryOf = dispatch<NewEvent | undefined>(
  on(purchaseOrderTopics, (d) => {
    const order = draftOrderOf(d);
    return order ? entry(d, "draft_po_change", purchaseOrderToRest(order)) : undefined;
  }),
  on(topics.inventoryStockTriggerTopics, (d) => (d.message.trigger ? entry(d, "sku_warehouse_settings_change", stockTriggerToRest(d.message.trigger)) : undefined)),
);

/**
 * Lines of draft orders announced before orders kept their product's integer id (no skuSeq) take
 * it from the product replica, so that their payload's skuId is the integer id too (the replica
 * has it once the product's message is through; until then it stays null).
 */
async function withIntegerSkuIds(tx: Tx, orders: { accountId: string; order: ordersV1.PurchaseOrder }[]): Promise<void> {
  const lines = orders.flatMap(({ accountId, order }) => order.items.filter((i) => i.skuSeq === undefined && i.skuId).map((item) => ({ accountId, item })));
  if (!lines.length) return;
  const seqs = await repo.replicaProductSeqs(tx, lines.map(({ accountId, item }) => ({ accountId, productId: item.skuId })));
  for (const { accountId, item } of lines) item.skuSeq = seqs.get(`${accountId}/${item.skuId}`);
}

/** The subjects that can make entries (each a durable consumer of the events service). */
export const queueTopics = [...changeOf.topics, ...orderOrTriggerOf.topics];


/**
 * One consumer: a batch of new messages updates the replica and becomes its entries, a handful of
 * statements in all (inbox, locks, versions, products, prices, entries). Postgres composes each
 * update_sku payload (the product and its live prices, in list order) inside the INSERT: with
 * many price lists a batch's payloads are megabytes that never pass through this process. A price
 * message makes an entry only when it changed the replica (a stale or replayed one does not: its
 * entry would show the replica, already past it), and several price messages of one product in a
 * batch (one price batch) make one entry, the product with its prices after the last of them.
 *
 * Order per aggregate: messages of one product, purchase order or stock trigger can arrive out of
 * their write order (a batch redelivered after the replica holding it died, two replicas pulling
 * from one consumer, created and updated on consumers of their own). Batches that share an
 * aggregate run one after the other (a transaction lock per aggregate, taken in one order). Each
 * version of a product, draft order or trigger makes exactly one entry (queued_versions: a replay
 * of a version makes none), also one arriving after a newer version; such a late entry, when it
 * is its aggregate's last in the batch, is followed by the aggregate's newest state again (the
 * replica's product, the order's or trigger's newest payload), so that the newest entry of an
 * aggregate always shows its newest write: an order that left draft stays shown as left.
 */
export const queueConsumer: ConsumerDefinition = {
  name: "queue",
  topics: queueTopics,
  handle: async (tx: Tx, deliveries) => {
    // In slices (a product's REST JSON each): a batch in one go held the process's other work waiting.
    const changeOfDelivery = await mapInSlices(deliveries, (d) => changeOf(d));
    const aggregates = deliveries.map((d, i) => aggregateOf(d, changeOfDelivery[i]));
    const aggregateKey = (i: number) => `${deliveries[i].accountId}/${aggregates[i]!.key}`;
    const present = deliveries.flatMap((_, i) => (aggregates[i] ? [i] : []));
    await repo.lockAggregates(tx, [...new Set(present.map((i) => `events.queue:${aggregateKey(i)}`))]);
    // The messages whose version makes an entry: a product's, a draft order's, a trigger's.
    const versioned = new Set(present.filter((i) => aggregates[i]!.version !== undefined && (changeOfDelivery[i]?.product || makesDirectEntry(deliveries[i]))));
    const newest = await repo.newestVersions(
      tx,
      [...versioned].map((i) => ({ accountId: deliveries[i].accountId, aggregate: aggregates[i]!.key, productId: changeOfDelivery[i]?.productId })),
    );
    // In delivery order, a version older than the newest before it is late. Late behind a
    // version recorded before migration 008 (no payload to append again), it makes no entry.
    const late = new Set<number>();
    const candidates = [...versioned].filter((i) => {
      const version = aggregates[i]!.version!;
      const known = newest.get(aggregateKey(i));
      if (known && version < known.version) {
        late.add(i);
        return known.restorable;
      }
      if (!known || version > known.version) newest.set(aggregateKey(i), { version, restorable: true });
      return true;
    });
    const versionKey = (i: number) => `${aggregateKey(i)}/${aggregates[i]!.version}`;
    const claimed = await repo.claimVersions(
      tx,
      candidates.map((i) => ({ account_id: deliveries[i].accountId, aggregate: aggregates[i]!.key, version: aggregates[i]!.version! })),
    );
    // Each version makes one entry: the first message of it in the batch, if no entry has it yet.
    const fresh = deliveries.map((_, i) => !versioned.has(i) || claimed.delete(versionKey(i)));
    const key = (c: { accountId: string; productId: string }) => `${c.accountId}/${c.productId}`;
    const products = new Map<string, Change>();
    const prices = new Map<string, Change>();
    // The newest message of each product and the newest of each price.
    for (const [i, c] of changeOfDelivery.entries()) {
      if (!fresh[i] || !c) continue;
      if (c.product) {
        if (!products.has(key(c)) || products.get(key(c))!.product!.version < c.product.version) products.set(key(c), c);
      } else {
        const k = `${c.accountId}/${c.price!.priceId}`;
        if (!prices.has(k) || BigInt(prices.get(k)!.price!.version) < BigInt(c.price!.version)) prices.set(k, c);
      }
    }
    if (products.size) {
      await repo.storeNewerProducts(
        tx,
        [...products.values()].map((c) => ({ account_id: c.accountId, product_id: c.productId, version: c.product!.version, product: c.product!.json })),
      );
    }
    // The products whose prices this batch changed (a price row inserted, or replaced by a newer version).
    const repriced = new Set<string>();
    if (prices.size) {
      const rows = await repo.storeNewerPrices(
        tx,
        [...prices.values()].map(({ accountId, productId, price: p }) => ({
          account_id: accountId,
          price_id: p!.priceId,
          product_id: productId,
          version: p!.version,
          list_order: p!.listOrder,
          price_order: p!.priceOrder,
          deleted: p!.deleted,
          price: p!.price,
        })),
      );
      for (const r of rows) repriced.add(key({ accountId: r.account_id, productId: r.product_id }));
    }
    await withIntegerSkuIds(
      tx,
      deliveries.flatMap((d, i) => {
        const order = fresh[i] ? draftOrderOf(d) : undefined;
        return order ? [{ accountId: d.accountId, order }] : [];
      }),
    );
    const direct = deliveries.map((d, i) => (fresh[i] && !changeOfDelivery[i] ? directEntryOf(d) : undefined));
    // The newest version of each order and trigger, with the payload its entry has.
    const newestPayloads = new Map<string, { account_id: string; aggregate: string; version: number; payload: unknown }>();
    for (const [i, d] of direct.entries()) {
      if (!d) continue;
      const { key: aggregate, version } = aggregates[i] as { key: string; version: number };
      if ((newestPayloads.get(aggregateKey(i))?.version ?? -Infinity) < version) newestPayloads.set(aggregateKey(i), { account_id: d.accountId, aggregate, version, payload: d.payload });
    }
    if (newestPayloads.size) await repo.storeNewerAggregateVersions(tx, [...newestPayloads.values()]);
    // The entries in delivery order: a fresh product message is an entry each (its own product,
    // the replica's prices); a product's price messages of this batch are one (the replica's
    // product and prices, none when the product was never announced).
    const specs: EntrySpec[] = [];
    // The aggregates whose last entry of the batch is a late one, and what their newest entry is.
    const endingLate = new Map<string, EntrySpec>();
    for (const [i, delivery] of deliveries.entries()) {
      const c = changeOfDelivery[i];
      const n = specs.length;
      if (!fresh[i]) continue;
      let spec: EntrySpec | undefined;
      if (!c) {
        const d = direct[i];
        if (d) spec = { n, account_id: d.accountId, event_type: d.eventType, aggregate: aggregates[i]?.key ?? delivery.id, payload: d.payload };
      } else if (c.product) {
        spec = { n, account_id: c.accountId, event_type: "update_sku", aggregate: aggregates[i]!.key, payload: c.product.json, product_id: c.productId };
      } else if (repriced.delete(key(c))) {
        spec = { n, account_id: c.accountId, event_type: "update_sku", aggregate: aggregates[i]!.key, product_id: c.productId };
      }
      if (!spec) continue;
      specs.push(spec);
      // Without a payload: the replica's product, or the order's or trigger's newest payload.
      if (late.has(i)) endingLate.set(aggregateKey(i), { ...spec, payload: undefined });
      else endingLate.delete(aggregateKey(i));
    }
    for (const newestEntry of endingLate.values()) specs.push({ ...newestEntry, n: specs.length });
    if (!specs.length) return;
    await repo.insertEvents(tx, specs);
  },
};
