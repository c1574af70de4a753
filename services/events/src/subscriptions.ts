import type { BusMessage, SubscriptionSpec } from "@analytics/bus";
import type { Db } from "@analytics/db";
import { processOnce } from "@analytics/inbox";
import { insertEvent } from "./repository";

/**
 * Which integration messages become queue entries (CONTRACT.md, "Event types"). `payload` picks
 * the resource as a GET returns it from the message data, or undefined when the message is not
 * an event for the account (a purchase order that never was a draft).
 */
export const eventTypeRules: { subject: string; eventType: string; payload(data: any): unknown }[] = [
  { subject: "analytics.catalogue.sku.*", eventType: "update_sku", payload: (d) => d?.product },
  {
    subject: "analytics.orders.purchase_order.*",
    eventType: "draft_po_change",
    payload: (d) => (d?.wasDraft || d?.isDraft ? d.purchaseOrder : undefined),
  },
  { subject: "analytics.inventory.stock_trigger.*", eventType: "sku_warehouse_settings_change", payload: (d) => d?.stockTrigger },
];

/** The queue entry a message makes, if any. */
function eventOf(message: BusMessage, rule: (typeof eventTypeRules)[number]) {
  const payload = rule.payload(message.data);
  if (payload === undefined || payload === null) return undefined;
  return { accountId: message.accountId, eventType: rule.eventType, payload };
}

/** One durable consumer ("events") per rule; the inbox makes a redelivered message a no-op. */
export function queueSubscriptions(db: Db): SubscriptionSpec[] {
  return eventTypeRules.map((rule) => ({
    durable: "events",
    subjects: [rule.subject],
    handler: async (message: BusMessage) => {
      await processOnce(db, message, async (tx) => {
        const event = eventOf(message, rule);
        if (event) await insertEvent(tx, event);
      });
    },
  }));
}
