import { z } from "zod";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { eventsV1, RawJson, restNames, webhookOnlyNames } from "@analytics/contracts";
import { BATCH_MAX } from "../http/batch";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route, type RouteContext } from "../pipeline/route";
import { withCapabilityImageUrl, type ImageCapabilities } from "@analytics/auth";
import { jsonValue } from "../http/values";
import { generalResponseSchema } from "../http/schemas";
import { dataVersionOf, type CallAs } from "../clients";

const { EventState, EventTypeSchema } = eventsV1;

/** The queue's entry types by their REST names: the proto enum EventType, but for the types pushed to webhooks only (import.finished). */
export const eventTypes = Object.values(restNames(EventTypeSchema)).filter((t) => !webhookOnlyNames(EventTypeSchema).includes(t)) as [string, ...string[]];

/** A queue entry as GET /events answers it; also the `data` of a webhook delivery (webhooks.ts). */
export const eventSchema = z
  .object({
    id: z.string().uuid(),
    accountId: z.string().uuid(),
    eventType: z.enum(eventTypes),
    payload: z.unknown().describe("the resource as a GET returns it"),
    createdAt: z.string().datetime(),
    completedAt: z.string().datetime().nullable(),
    failedAt: z.string().datetime().nullable(),
  })
  .meta({ id: "Event" });

const statusItem = z.strictObject({ id: z.string().min(1).max(100), status: z.enum(["completed", "failed"]) });
const statusResult = z.object({ id: z.string(), updated: z.boolean() }).meta({ id: "EventStatusResult" });
const states = { pending: EventState.PENDING, completed: EventState.COMPLETED, failed: EventState.FAILED } as const;

function toRest(e: eventsV1.Event, images: ImageCapabilities) {
  const iso = (t?: Timestamp) => (t ? timestampDate(t).toISOString() : null);
  return {
    id: e.id,
    accountId: e.accountId,
    eventType: e.eventType,
    // The payload as the events service read it from Postgres, never parsed here; a product's
    // image is the capability URL GET /products gives, which needs no token.
    payload: new RawJson(withCapabilityImageUrl(images, e.accountId, e.payloadJson)),
    createdAt: iso(e.createdAt)!,
    completedAt: iso(e.completedAt),
    failedAt: iso(e.failedAt),
  };
}

/** What the event routes register with and call. */
interface Deps {
  ctx: RouteContext;
  events: Client<typeof eventsV1.EventsService>;
  as: CallAs;
  images: ImageCapabilities;
}

const tag = "Events";

/** /v2/api/events -> analytics.events.v1.EventsService */
export function eventRoutes(ctx: RouteContext, events: Client<typeof eventsV1.EventsService>, as: CallAs, images: ImageCapabilities): void {
  const deps: Deps = { ctx, events, as, images };
  listEvents(deps);
  updateEventStatus(deps);
  updateEventStatusBatch(deps);
  updateEventPayload(deps);
}

function listEvents({ ctx, events, as, images }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/events",
    operationId: "listEvents",
    summary: "List the account's queue entries",
    tag,
    auth: "bearer",
    query: {
      ...pageQuery(),
      event_type: z.string().min(1).max(100).optional().describe("e.g. update_sku"),
      status: z.enum(["pending", "completed", "failed"]).optional(),
    },
    // GET /events only reads the queue (marking entries is PATCH): a 304 skips nothing but the query.
    dataVersion: dataVersionOf(as, { events }),
    responses: {
      200: { description: "events in creation order", schema: z.array(eventSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const res = await events.listEvents(
        {
          page: { page: query.page, pageSize: query.pageSize },
          eventType: query.event_type,
          state: query.status ? states[query.status] : EventState.UNSPECIFIED,
        },
        as(caller),
      );
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.events.map((e) => toRest(e, images));
    },
  });
}

function updateEventStatus({ ctx, events, as }: Deps): void {
  route(ctx, {
    method: "PATCH",
    url: "/v2/api/events",
    operationId: "updateEventStatus",
    summary: "Mark one pending event completed or failed (once only)",
    tag,
    auth: "bearer",
    body: statusItem,
    responses: {
      200: { description: "changed", schema: statusResult },
      404: { description: "event not found", schema: generalResponseSchema },
      409: { description: "event already processed", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }) => {
      const res = await events.updateEventStatus({ id: body.id, state: states[body.status] }, as(caller));
      return { id: res.id, updated: res.updated };
    },
  });
}

function updateEventStatusBatch({ ctx, events, as }: Deps): void {
  route(ctx, {
    method: "PATCH",
    url: "/v2/api/events/batch",
    operationId: "updateEventStatusBatch",
    summary: "Mark many events; unknown or already processed ones answer updated=false",
    tag,
    auth: "bearer",
    body: z.array(statusItem).min(1).max(BATCH_MAX),
    responses: {
      200: { description: "one result per item, in request order", schema: z.array(statusResult) },
      400: { description: "bad body", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }) => {
      const res = await events.batchUpdateEventStatus({ items: body.map((i) => ({ id: i.id, state: states[i.status] })) }, as(caller));
      return res.results.map((r) => ({ id: r.id, updated: r.updated }));
    },
  });
}

function updateEventPayload({ ctx, events, as, images }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/events/:id",
    operationId: "updateEventPayload",
    summary: "Replace an event's payload",
    tag,
    auth: "bearer",
    params: { id: z.string().min(1).max(100) },
    body: z.strictObject({
      // Any size within the body's limits: a payload is passed on as JSON text, never converted field by field.
      payload: jsonValue({ maxFields: Infinity }).refine((v) => v !== null && v !== undefined, "payload is required and may not be null"),
    }),
    responses: {
      200: { description: "the updated event", schema: eventSchema },
      400: { description: "invalid body or payload", schema: generalResponseSchema },
      404: { description: "event not found", schema: generalResponseSchema },
    },
    handler: async ({ params, body, caller }) => {
      const res = await events.updateEventPayload({ id: params.id, payloadJson: JSON.stringify(body.payload) }, as(caller));
      return toRest(res.event!, images);
    },
  });
}
