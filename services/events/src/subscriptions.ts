import { catalogueV1, inventoryV1, ordersV1, RestDecimal, stringifyRest, toRestJson, topics, type pricingV1 } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { isTopic, type ConsumerDefinition, type Delivery } from "@analytics/rpc";
import { insertEvents, type NewEvent } from "./repository";

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

type Change = { accountId: string; productId: string; product?: { version: number; json: Record<string, unknown> }; prices?: unknown[] };

function changeOf(delivery: Delivery): Change | undefined {
  for (const topic of topics.catalogueSkuTopics) {
    if (isTopic(delivery, topic) && delivery.message.product) {
      const json = toRestJson(catalogueV1.ProductSchema, delivery.message.product);
      return { accountId: delivery.accountId, productId: delivery.message.product.id, product: { version: Number(delivery.message.version), json } };
    }
  }
  for (const topic of topics.pricingPriceTopics) {
    if (isTopic(delivery, topic)) return { accountId: delivery.accountId, productId: delivery.message.productId, prices: delivery.message.productPrices.map(productPrice) };
  }
  return undefined;
}

/** Entries whose message carries the whole payload (no replica needed). */
function directEntryOf(delivery: Delivery): NewEvent | undefined {
  const entry = (eventType: string, payload: unknown) => ({ accountId: delivery.accountId, eventType, payload });
  for (const topic of [topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated]) {
    // A draft purchase order is created or changed, or leaves draft.
    if (isTopic(delivery, topic) && (delivery.message.wasDraft || delivery.message.isDraft) && delivery.message.purchaseOrder) {
      return entry("draft_po_change", toRestJson(ordersV1.PurchaseOrderSchema, delivery.message.purchaseOrder));
    }
  }
  for (const topic of topics.inventoryStockTriggerTopics) {
    if (isTopic(delivery, topic) && delivery.message.trigger) {
      return entry("sku_warehouse_settings_change", toRestJson(inventoryV1.StockTriggerSchema, delivery.message.trigger));
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

/**
 * One consumer: a batch of new messages updates the replica (four statements) and becomes its
 * entries in one more. Several price messages of one product in a batch (one price batch) make
 * one entry, the product with its prices after the last of them.
 */
export const queueConsumer: ConsumerDefinition = {
  name: "queue",
  topics: queueTopics,
  handle: async (tx: Tx, deliveries) => {
    const changeOfDelivery = deliveries.map(changeOf);
    const changes = changeOfDelivery.filter((c) => c !== undefined);
    const key = (c: { accountId: string; productId: string }) => `${c.accountId}/${c.productId}`;
    const products = new Map<string, Change>();
    const prices = new Map<string, Change>();
    for (const c of changes) (c.product ? products : prices).set(key(c), c);
    if (products.size) {
      await tx.raw(
        `INSERT INTO product_replica (account_id, product_id, version, product)
         SELECT account_id, product_id, version, product FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid, version bigint, product jsonb)
         ON CONFLICT (account_id, product_id) DO UPDATE SET version = excluded.version, product = excluded.product
         WHERE product_replica.version <= excluded.version`,
        [json([...products.values()].map((c) => ({ account_id: c.accountId, product_id: c.productId, version: c.product!.version, product: c.product!.json })))],
      );
    }
    if (prices.size) {
      await tx.raw(
        `INSERT INTO price_replica (account_id, product_id, prices)
         SELECT account_id, product_id, prices FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid, prices jsonb)
         ON CONFLICT (account_id, product_id) DO UPDATE SET prices = excluded.prices`,
        [json([...prices.values()].map((c) => ({ account_id: c.accountId, product_id: c.productId, prices: c.prices })))],
      );
    }
    // Each changed product as it now stands: its stored product and prices, in one read.
    const touched = [...new Map(changes.map((c) => [key(c), c])).values()];
    const { rows } = !touched.length ? { rows: [] } : await tx.raw(
      `SELECT x.account_id, x.product_id, p.product, COALESCE(r.prices, '[]'::jsonb) AS prices
       FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid)
       JOIN product_replica p ON p.account_id = x.account_id AND p.product_id = x.product_id
       LEFT JOIN price_replica r ON r.account_id = x.account_id AND r.product_id = x.product_id`,
      [json(touched.map((c) => ({ account_id: c.accountId, product_id: c.productId })))],
    );
    const current = new Map(
      (rows as { account_id: string; product_id: string; product: Record<string, unknown>; prices: unknown[] }[]).map((r) => [
        `${r.account_id}/${r.product_id}`,
        { ...r.product, prices: r.prices },
      ]),
    );
    // A product message is an entry each (as before); a product's price messages of this batch are one.
    const entries: NewEvent[] = [];
    const pricedOnce = new Set<string>();
    for (const [i, delivery] of deliveries.entries()) {
      const c = changeOfDelivery[i];
      if (!c) {
        const direct = directEntryOf(delivery);
        if (direct) entries.push(direct);
        continue;
      }
      const k = key(c);
      if (!c.product && pricedOnce.has(k)) continue;
      if (!c.product) pricedOnce.add(k);
      const payload = c.product ? { ...c.product.json, prices: current.get(k)?.prices ?? [] } : current.get(k);
      if (payload) entries.push({ accountId: c.accountId, eventType: "update_sku", payload });
    }
    await insertEvents(tx, entries);
  },
};
