import { productToRest, purchaseOrderToRest, stockTriggerToRest, RestDecimal, stringifyRest, topics, type pricingV1 } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { isTopic, type ConsumerDefinition, type Delivery } from "@analytics/rpc";
import type { NewEvent } from "./repository";

/**
 * Which integration messages become queue entries (CONTRACT.md, "Event types"), and with what
 * payload: the resource as a GET returns it. A product change and a price change are both an
 * `update_sku` with the product and its prices, composed from the replica both feed
 * (migrations/003_product_replica.ts). A message that is no event for the account (a purchase
 * order that never was a draft, a price of a product never announced) makes none.
 */

/** A product's `prices` entry, as GET /products shows it. */
const productPrice = (p: pricingV1.Price) => ({
  listExternalID: p.listExternalId,
  price: new RestDecimal(p.price?.value ?? "0"),
  currency: p.currency,
  vat: p.vat ? new RestDecimal(p.vat.value) : null,
  customPrices: Object.fromEntries(Object.entries(p.customPrices).map(([k, v]) => [k, new RestDecimal(v.value)])),
});

/** One price as the replica keeps it (migrations/004_price_entries.ts). */
type PriceEntry = { priceId: string; version: string; listOrder: string; priceOrder: string; deleted: boolean; price: unknown };
type Change = { accountId: string; productId: string; product?: { version: number; json: Record<string, unknown> }; price?: PriceEntry };

function changeOf(delivery: Delivery): Change | undefined {
  for (const topic of topics.catalogueSkuTopics) {
    if (isTopic(delivery, topic) && delivery.message.product) {
      const json = productToRest(delivery.message.product);
      return { accountId: delivery.accountId, productId: delivery.message.product.id, product: { version: Number(delivery.message.version), json } };
    }
  }
  for (const topic of topics.pricingPriceTopics) {
    // A message from before prices travelled one by one has no price_id: nothing to apply.
    if (isTopic(delivery, topic) && delivery.message.priceId && delivery.message.price) {
      const m = delivery.message;
      const price = {
        priceId: m.priceId,
        version: String(m.version),
        listOrder: String(m.listOrder),
        priceOrder: String(m.priceOrder),
        deleted: topic === topics.pricingPriceDeleted,
        price: productPrice(m.price!),
      };
      return { accountId: delivery.accountId, productId: m.productId, price };
    }
  }
  return undefined;
}

/**
 * The aggregate a delivery changes (a product for product and price messages alike) and, where
 * the queue orders by it, the version its message carries. A price message's version is that of
 * its price row, which the price replica applies by; it has none here.
 */
function aggregateOf(delivery: Delivery, change: Change | undefined): { key: string; version?: number } | undefined {
  if (change) return { key: `sku:${change.productId}`, version: change.product?.version };
  for (const topic of [topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated]) {
    if (isTopic(delivery, topic)) return { key: `purchase_order:${delivery.message.purchaseOrderId}`, version: Number(delivery.message.version) };
  }
  for (const topic of topics.inventoryStockTriggerTopics) {
    if (isTopic(delivery, topic)) return { key: `stock_trigger:${delivery.message.stockTriggerId}`, version: Number(delivery.message.version) };
  }
  return undefined;
}

/** Entries whose message carries the whole payload (no replica needed). */
function directEntryOf(delivery: Delivery): NewEvent | undefined {
  const entry = (eventType: string, payload: unknown) => ({ accountId: delivery.accountId, eventType, payload });
  for (const topic of [topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated]) {
    // A draft purchase order is created or changed, or leaves draft.
    if (isTopic(delivery, topic) && (delivery.message.wasDraft || delivery.message.isDraft) && delivery.message.purchaseOrder) {
      return entry("draft_po_change", purchaseOrderToRest(delivery.message.purchaseOrder));
    }
  }
  for (const topic of topics.inventoryStockTriggerTopics) {
    if (isTopic(delivery, topic) && delivery.message.trigger) {
      return entry("sku_warehouse_settings_change", stockTriggerToRest(delivery.message.trigger));
    }
  }
  return undefined;
}

/** The subjects that can make entries (each a durable consumer of the events service). */
export const queueTopics = [
  ...topics.catalogueSkuTopics,
  ...topics.pricingPriceTopics,
  topics.ordersPurchaseOrderCreated,
  topics.ordersPurchaseOrderUpdated,
  ...topics.inventoryStockTriggerTopics,
];

const json = (rows: unknown) => stringifyRest(rows);

/** What one queue entry is made of, in delivery order: a whole payload, or a product to compose. */
type EntrySpec = { n: number; account_id: string; event_type: string; payload?: unknown; product_id?: string };

/**
 * One consumer: a batch of new messages updates the replica and becomes its entries, a handful of
 * statements in all (inbox, locks, versions, products, prices, entries). Postgres composes each
 * update_sku payload (the product and its live prices, in list order) inside the INSERT: with
 * many price lists a batch's payloads are megabytes that never pass through this process. A price
 * message makes an entry only when it changed the replica (a stale or replayed one does not), and
 * several price messages of one product in a batch (one price batch) make one entry, the product
 * with its prices after the last of them.
 *
 * Order per aggregate: messages of one product, purchase order or stock trigger can arrive out of
 * their write order (a batch redelivered after the replica holding it died, two replicas pulling
 * from one consumer, created and updated on consumers of their own). So batches that share an
 * aggregate run one after the other (a transaction lock per aggregate, taken in one order), and a
 * product, purchase-order or trigger message makes an entry only when its version is newer than
 * any the queue has seen of its aggregate: the newest entry always shows the newest write.
 */
export const queueConsumer: ConsumerDefinition = {
  name: "queue",
  topics: queueTopics,
  handle: async (tx: Tx, deliveries) => {
    const changeOfDelivery = deliveries.map(changeOf);
    const aggregates = deliveries.map((d, i) => aggregateOf(d, changeOfDelivery[i]));
    const aggregateKey = (i: number) => `${deliveries[i].accountId}/${aggregates[i]!.key}`;
    const present = deliveries.flatMap((_, i) => (aggregates[i] ? [i] : []));
    await tx.raw("SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM (SELECT k FROM unnest(?::text[]) AS k ORDER BY k) AS s", [
      [...new Set(present.map((i) => `events.queue:${aggregateKey(i)}`))],
    ]);
    // The newest version seen of each aggregate, then each message in delivery order: fresh only when newer.
    const newest = await newestVersions(
      tx,
      present.filter((i) => aggregates[i]!.version !== undefined).map((i) => ({ accountId: deliveries[i].accountId, aggregate: aggregates[i]!.key, productId: changeOfDelivery[i]?.productId })),
    );
    const fresh = deliveries.map((_, i) => {
      const version = aggregates[i]?.version;
      if (version === undefined) return true;
      const known = newest.get(aggregateKey(i));
      if (known !== undefined && version <= known) return false;
      newest.set(aggregateKey(i), version);
      return true;
    });
    const key = (c: { accountId: string; productId: string }) => `${c.accountId}/${c.productId}`;
    const products = new Map<string, Change>();
    const prices = new Map<string, Change>();
    const seen = new Map<string, { account_id: string; aggregate: string; version: number }>();
    // The newest message of each product and the newest of each price; the newest version of each order and trigger.
    for (const [i, c] of changeOfDelivery.entries()) {
      if (!fresh[i]) continue;
      if (!c) {
        if (aggregates[i]) seen.set(aggregateKey(i), { account_id: deliveries[i].accountId, aggregate: aggregates[i]!.key, version: aggregates[i]!.version! });
      } else if (c.product) products.set(key(c), c);
      else {
        const k = `${c.accountId}/${c.price!.priceId}`;
        if (!prices.has(k) || BigInt(prices.get(k)!.price!.version) < BigInt(c.price!.version)) prices.set(k, c);
      }
    }
    if (products.size) {
      await tx.raw(
        `INSERT INTO product_replica (account_id, product_id, version, product)
         SELECT account_id, product_id, version, product FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid, version bigint, product jsonb)
         ON CONFLICT (account_id, product_id) DO UPDATE SET version = excluded.version, product = excluded.product
         WHERE product_replica.version < excluded.version`,
        [json([...products.values()].map((c) => ({ account_id: c.accountId, product_id: c.productId, version: c.product!.version, product: c.product!.json })))],
      );
    }
    if (seen.size) {
      await tx.raw(
        `INSERT INTO aggregate_versions (account_id, aggregate, version)
         SELECT account_id, aggregate, version FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, version bigint)
         ON CONFLICT (account_id, aggregate) DO UPDATE SET version = excluded.version
         WHERE aggregate_versions.version < excluded.version`,
        [json([...seen.values()])],
      );
    }
    // The products whose prices this batch changed (a price row inserted, or replaced by a newer version).
    const repriced = new Set<string>();
    if (prices.size) {
      const { rows } = await tx.raw(
        `INSERT INTO price_entry_replica AS r (account_id, price_id, product_id, version, list_order, price_order, deleted, price)
         SELECT account_id, price_id, product_id, version, list_order, price_order, deleted, price
         FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, price_id uuid, product_id uuid, version bigint, list_order bigint,
           price_order bigint, deleted boolean, price jsonb)
         ON CONFLICT (account_id, price_id) DO UPDATE SET version = excluded.version, list_order = excluded.list_order,
           price_order = excluded.price_order, deleted = excluded.deleted, price = excluded.price
         WHERE r.version < excluded.version
         RETURNING r.account_id, r.product_id`,
        [
          json(
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
          ),
        ],
      );
      for (const r of rows as { account_id: string; product_id: string }[]) repriced.add(key({ accountId: r.account_id, productId: r.product_id }));
    }
    // The entries in delivery order: a fresh product message is an entry each (its own product,
    // the replica's prices); a product's price messages of this batch are one (the replica's
    // product and prices, none when the product was never announced).
    const specs: EntrySpec[] = [];
    for (const [i, delivery] of deliveries.entries()) {
      const c = changeOfDelivery[i];
      const n = specs.length;
      if (!fresh[i]) continue;
      if (!c) {
        const direct = directEntryOf(delivery);
        if (direct) specs.push({ n, account_id: direct.accountId, event_type: direct.eventType, payload: direct.payload });
      } else if (c.product) {
        specs.push({ n, account_id: c.accountId, event_type: "update_sku", payload: c.product.json, product_id: c.productId });
      } else if (repriced.delete(key(c))) {
        specs.push({ n, account_id: c.accountId, event_type: "update_sku", product_id: c.productId });
      }
    }
    if (!specs.length) return;
    await tx.raw(
      `INSERT INTO events (id, account_id, event_type, payload)
       SELECT gen_random_uuid(), x.account_id, x.event_type,
         CASE WHEN x.product_id IS NULL THEN x.payload
         ELSE COALESCE(x.payload, p.product) || jsonb_build_object('prices', COALESCE(
           (SELECT jsonb_agg(e.price ORDER BY e.list_order, e.price_order) FROM price_entry_replica e
            WHERE e.account_id = x.account_id AND e.product_id = x.product_id AND NOT e.deleted), '[]'::jsonb)) END
       FROM jsonb_to_recordset(?::jsonb) AS x(n int, account_id uuid, event_type text, payload jsonb, product_id uuid)
       LEFT JOIN product_replica p ON p.account_id = x.account_id AND p.product_id = x.product_id
       WHERE x.product_id IS NULL OR x.payload IS NOT NULL OR p.product IS NOT NULL
       ORDER BY x.n`,
      [json(specs)],
    );
  },
};

/**
 * The newest version the queue has seen of each aggregate (`<account>/<aggregate>`): a product's
 * from its replica, a purchase order's or trigger's from aggregate_versions.
 */
async function newestVersions(tx: Tx, aggregates: { accountId: string; aggregate: string; productId?: string }[]): Promise<Map<string, number>> {
  if (!aggregates.length) return new Map();
  const { rows } = await tx.raw(
    `SELECT x.account_id, x.aggregate, COALESCE(p.version, v.version) AS version
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, product_id uuid)
     LEFT JOIN product_replica p ON p.account_id = x.account_id AND p.product_id = x.product_id
     LEFT JOIN aggregate_versions v ON x.product_id IS NULL AND v.account_id = x.account_id AND v.aggregate = x.aggregate
     WHERE p.version IS NOT NULL OR v.version IS NOT NULL`,
    [json(aggregates.map((a) => ({ account_id: a.accountId, aggregate: a.aggregate, product_id: a.productId ?? null })))],
  );
  return new Map((rows as { account_id: string; aggregate: string; version: number }[]).map((r) => [`${r.account_id}/${r.aggregate}`, Number(r.version)]));
}
