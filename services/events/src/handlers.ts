import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { eventsV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import type { Db } from "@analytics/db";
import { invalid } from "@analytics/errors";
import { accountVersionHandler, answerDataVersion, pageOf } from "@analytics/rpc";
import * as events from "./events";
import type { EventRow, EventState, ProcessedState } from "./repository/queue";
import * as webhooks from "./webhooks";

const { EventsService, EventSchema, EventState: State, WebhookEndpointSchema } = eventsV1;

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
const shown = (endpoint: eventsV1.WebhookEndpoint, withSecret = false): eventsV1.WebhookEndpoint => (withSecret ? endpoint : { ...endpoint, secret: undefined });

/**
 * A request's endpoint. Without `endpoint`, its deprecated fields: a gateway from before
 * `endpoint` sends only those while a rolling update is under way (none of them: an empty
 * endpoint, which its rules refuse).
 */
const endpointOf = (req: { endpoint?: eventsV1.WebhookEndpoint; url: string; eventTypes: string[]; description?: string }) =>
  req.endpoint ?? create(WebhookEndpointSchema, { url: req.url, eventTypes: req.eventTypes, description: req.description });

/** Thin Connect handlers: proto in, plain function, proto out. */
export function eventsRoutes(db: Db, settings: { allowPrivate: boolean }) {
  return (router: ConnectRouter) =>
    router.service(EventsService, {
      getAccountVersion: accountVersionHandler(db),
      async listEvents(req, ctx) {
        const { accountId } = callerOf(ctx);
        const { rows, total, version } = await events.listEvents(
          db,
          { accountId, eventType: req.eventType, state: stateNames[req.state] },
          pageOf(req.page),
        );
        answerDataVersion(ctx, version);
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
        return { endpoint: shown(await webhooks.createEndpoint(db, callerOf(ctx).accountId, endpointOf(req), settings.allowPrivate), true) };
      },
      async listWebhookEndpoints(_req, ctx) {
        const endpoints = await webhooks.listEndpoints(db, callerOf(ctx).accountId);
        return { endpoints: endpoints.map((e) => shown(e)) };
      },
      async getWebhookEndpoint(req, ctx) {
        const { endpoint, revision } = await webhooks.getEndpoint(db, callerOf(ctx).accountId, req.id);
        return { endpoint: shown(endpoint), revision };
      },
      async updateWebhookEndpoint(req, ctx) {
        return { endpoint: shown(await webhooks.updateEndpoint(db, callerOf(ctx).accountId, req.id, endpointOf(req), req.enabled, settings.allowPrivate, req.ifRevision)) };
      },
      async deleteWebhookEndpoint(req, ctx) {
        await webhooks.deleteEndpoint(db, callerOf(ctx).accountId, req.id, req.ifRevision);
        return {};
      },
      async rotateWebhookSecret(req, ctx) {
        return { endpoint: shown(await webhooks.rotateSecret(db, callerOf(ctx).accountId, req.id), true) };
      },
      async listWebhookDeliveries(req, ctx) {
        const { deliveries, total } = await webhooks.listDeliveries(db, callerOf(ctx).accountId, req.endpointId, pageOf(req.page));
        return { deliveries, totalCount: BigInt(total) };
      },
      async retryWebhookDelivery(req, ctx) {
        return { delivery: await webhooks.retryDelivery(db, callerOf(ctx).accountId, req.endpointId, req.deliveryId) };
      },
    });
}
