import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { eventsV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import type { Db } from "@analytics/db";
import { invalid } from "@analytics/errors";
import { accountVersionHandler, pageOf } from "@analytics/rpc";
import * as events from "./events";
import type { EventRow, EventState, ProcessedState } from "./repository/queue";
import type { DeliveryRow, EndpointRow } from "./repository/webhooks";
import * as webhooks from "./webhooks";

const { EventsService, EventSchema, EventState: State, WebhookEndpointSchema, WebhookDeliverySchema } = eventsV1;

const stateNames: Record<number, EventState | undefined> = {
  [State.PENDING]: "pending",
  [State.COMPLETED]: "completed",
  [State.FAILED]: "failed",
};

function processedState(state: eventsV1.EventState, path: string): ProcessedState {
  const name = stateNames[state];
  if (name === "completed" || name === "failed") return name;
  throw invalid("status must be completed or failed", [{ path, message: "must be completed or failed" }]);
}

export function toProto(row: EventRow): eventsV1.Event {
  return create(EventSchema, {
    id: row.id,
    accountId: row.account_id,
    eventType: row.event_type,
    payloadJson: row.payload,
    createdAt: timestampFromDate(row.created_at),
    completedAt: row.completed_at ? timestampFromDate(row.completed_at) : undefined,
    failedAt: row.failed_at ? timestampFromDate(row.failed_at) : undefined,
  });
}

/** An endpoint; its secret only where it is shown (create, rotate). */
function endpointToProto(row: EndpointRow, withSecret = false): eventsV1.WebhookEndpoint {
  return create(WebhookEndpointSchema, {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    description: row.description,
    secret: withSecret ? row.secret : undefined,
    enabled: row.enabled,
    disabledReason: row.disabled_reason ?? undefined,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

function deliveryToProto(row: DeliveryRow): eventsV1.WebhookDelivery {
  return create(WebhookDeliverySchema, {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempt: row.attempts,
    statusCode: row.last_status_code ?? undefined,
    durationMs: row.last_duration_ms ?? undefined,
    error: row.last_error ?? undefined,
    lastAttemptAt: row.last_attempt_at ? timestampFromDate(row.last_attempt_at) : undefined,
    nextRetryAt: row.status === "pending" ? timestampFromDate(row.next_attempt_at) : undefined,
    createdAt: timestampFromDate(row.created_at),
    attempts: row.attempt_log.map((a) => ({
      attempt: a.attempt,
      attemptedAt: timestampFromDate(new Date(a.at)),
      statusCode: a.status_code ?? undefined,
      durationMs: a.duration_ms ?? undefined,
      error: a.error ?? undefined,
      nextRetryAt: a.next_retry_at ? timestampFromDate(new Date(a.next_retry_at)) : undefined,
    })),
  });
}

/** Thin Connect handlers: proto in, plain function, proto out. */
export function eventsRoutes(db: Db, settings: { allowPrivate: boolean }) {
  return (router: ConnectRouter) =>
    router.service(EventsService, {
      getAccountVersion: accountVersionHandler(db),
      async listEvents(req, ctx) {
        const { accountId } = callerOf(ctx);
        const { rows, total } = await events.listEvents(
          db,
          { accountId, eventType: req.eventType, state: stateNames[req.state] },
          pageOf(req.page),
        );
        return { events: rows.map(toProto), totalCount: BigInt(total) };
      },
      async updateEventStatus(req, ctx) {
        await events.processEvent(db, callerOf(ctx).accountId, req.id, processedState(req.state, "status"));
        return { id: req.id, updated: true };
      },
      async batchUpdateEventStatus(req, ctx) {
        const items = req.items.map((i, n) => ({ id: i.id, state: processedState(i.state, `[${n}].status`) }));
        return { results: await events.processEvents(db, callerOf(ctx).accountId, items) };
      },
      async updateEventPayload(req, ctx) {
        const row = await events.replacePayload(db, callerOf(ctx).accountId, req.id, req.payloadJson);
        return { event: toProto(row) };
      },
      async createWebhookEndpoint(req, ctx) {
        const row = await webhooks.createEndpoint(db, callerOf(ctx).accountId, { url: req.url, eventTypes: req.eventTypes, description: req.description }, settings.allowPrivate);
        return { endpoint: endpointToProto(row, true) };
      },
      async listWebhookEndpoints(_req, ctx) {
        const rows = await webhooks.listEndpoints(db, callerOf(ctx).accountId);
        return { endpoints: rows.map((r) => endpointToProto(r)) };
      },
      async getWebhookEndpoint(req, ctx) {
        const row = await webhooks.getEndpoint(db, callerOf(ctx).accountId, req.id);
        return { endpoint: endpointToProto(row), revision: row.revision };
      },
      async updateWebhookEndpoint(req, ctx) {
        const input = { url: req.url, eventTypes: req.eventTypes, description: req.description, enabled: req.enabled };
        return { endpoint: endpointToProto(await webhooks.updateEndpoint(db, callerOf(ctx).accountId, req.id, input, settings.allowPrivate, req.ifRevision)) };
      },
      async deleteWebhookEndpoint(req, ctx) {
        await webhooks.deleteEndpoint(db, callerOf(ctx).accountId, req.id, req.ifRevision);
        return {};
      },
      async rotateWebhookSecret(req, ctx) {
        return { endpoint: endpointToProto(await webhooks.rotateSecret(db, callerOf(ctx).accountId, req.id), true) };
      },
      async listWebhookDeliveries(req, ctx) {
        const { rows, total } = await webhooks.listDeliveries(db, callerOf(ctx).accountId, req.endpointId, pageOf(req.page));
        return { deliveries: rows.map(deliveryToProto), totalCount: BigInt(total) };
      },
      async retryWebhookDelivery(req, ctx) {
        return { delivery: deliveryToProto(await webhooks.retryDelivery(db, callerOf(ctx).accountId, req.endpointId, req.deliveryId)) };
      },
    });
}
