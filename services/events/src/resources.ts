import { eventsV1, restNames, webhookOnlyNames } from "@analytics/contracts";
import { tableSpec } from "@analytics/db";

const { DeliveryStatusSchema, EventTypeSchema, WebhookDeliverySchema, WebhookEndpointSchema } = eventsV1;

/** The queue's entry types by their REST names, from the proto enum (`EVENT_TYPE.UPDATE_SKU` is "update_sku"). */
export const EVENT_TYPE = restNames(EventTypeSchema);
/** Event types pushed to webhooks only, never queue entries (`webhook_only` in the enum): import.finished. */
export const WEBHOOK_ONLY_TYPES: ReadonlySet<string> = new Set(webhookOnlyNames(EventTypeSchema));
/** A webhook delivery's states by their REST names. */
export const DELIVERY_STATUS = restNames(DeliveryStatusSchema);

/**
 * webhook_endpoints: the columns of the WebhookEndpoint message (its rules in the proto say which
 * are stored and how); the table also has account_id, the previous secret and the failing streak,
 * which no statement takes from a message.
 */
export const endpointsTable = tableSpec(WebhookEndpointSchema, "webhook_endpoints", { assigned: ["created_at", "updated_at"] });

/**
 * webhook_deliveries, read as WebhookDelivery messages (the worker writes them in SQL): columns
 * named for the last attempt, and the event's type from its entry (repository/webhooks.ts).
 */
export const deliveriesTable = tableSpec(WebhookDeliverySchema, "webhook_deliveries", {
  columnNames: { attempt: "attempts", status_code: "last_status_code", duration_ms: "last_duration_ms", error: "last_error", next_retry_at: "next_attempt_at", attempts: "attempt_log" },
});
