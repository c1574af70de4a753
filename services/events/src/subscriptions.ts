import { catalogueV1, inventoryV1, ordersV1, toRestJson, topics } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { isTopic, type ConsumerDefinition, type Delivery } from "@analytics/rpc";
import { insertEvents, type NewEvent } from "./repository";

/**
 * Which integration messages become queue entries (CONTRACT.md, "Event types"), and with what
 * payload: the resource as a GET returns it. A message that is no event for the account (a
 * purchase order that never was a draft) makes none.
 */
export function queueEntryOf(delivery: Delivery): NewEvent | undefined {
  const entry = (eventType: string, payload: unknown) => ({ accountId: delivery.accountId, eventType, payload });
  for (const topic of topics.catalogueSkuTopics) {
    if (isTopic(delivery, topic) && delivery.message.product) {
      return entry("update_sku", toRestJson(catalogueV1.ProductSchema, delivery.message.product));
    }
  }
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
export const queueTopics = [...topics.catalogueSkuTopics, topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated, ...topics.inventoryStockTriggerTopics];

/** One consumer: each batch of new messages becomes its entries in one statement. */
export const queueConsumer: ConsumerDefinition = {
  name: "queue",
  topics: queueTopics,
  handle: async (tx: Tx, deliveries) => {
    await insertEvents(tx, deliveries.map(queueEntryOf).filter((e) => e !== undefined));
  },
};
