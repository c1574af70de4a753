import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { eventsV1, fieldRules, fromRestJson, toRestJson } from "@analytics/contracts";
import { generalResponse } from "@analytics/errors";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route, type RouteContext } from "../pipeline/route";
import { answerRevision } from "../http/conditional";
import { generalResponseSchema } from "../http/schemas";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import type { CallAs } from "../clients";
import { eventSchema, eventTypes } from "./events";
import { importSchema } from "./imports";

/**
 * /v2/api/webhooks -> analytics.events.v1.EventsService (CONTRACT.md, "Webhooks: the event queue
 * pushed"). The URL's scheme and address are judged by the events service, which knows whether
 * private addresses are allowed (WEBHOOK_ALLOW_PRIVATE).
 */

const { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema } = eventsV1;

/** Bodies: the WebhookEndpoint message's writable fields and rules (read-only ones accepted, ignored). */
const endpointBody = requestShape(WebhookEndpointSchema, { timestamp: z.string().datetime() });

/** An endpoint as answered; its secret is there only where it is shown (created, rotated), never null. */
const endpointSchema = z.object(answerShape(WebhookEndpointSchema, { omit: ["secret"] })).meta({ id: "WebhookEndpoint" });
const endpointWithSecretSchema = endpointSchema
  .extend({ secret: z.string().optional().describe(fieldRules(WebhookEndpointSchema.field.secret).description) })
  .meta({ id: "WebhookEndpointWithSecret" });

const attemptSchema = z.object(answerShape(WebhookAttemptSchema)).meta({ id: "WebhookAttempt" });
const deliverySchema = z
  .object(answerShape(WebhookDeliverySchema, { fields: { attempts: z.array(attemptSchema).describe(fieldRules(WebhookDeliverySchema.field.attempts).description) } }))
  .meta({ id: "WebhookDelivery" });

/** The body of a delivery (CONTRACT: `{id, type, timestamp, data}`), as the events service's worker writes it. */
const queueEntrySchema = z
  .object({
    id: z.string().uuid().describe("the entry's id, also the webhook-id header"),
    type: z.enum(eventTypes).describe("the entry's eventType"),
    timestamp: z.string().datetime().describe("when the entry was queued (its createdAt)"),
    data: eventSchema,
  })
  .describe("a queue entry pushed; `data` is the entry exactly as GET /v2/api/events answers it")
  .meta({ id: "WebhookQueueEntry" });

const exampleEntry = {
  id: "0b8e6c1e-3f4a-4c2b-9a55-6d2f1e7a9c10",
  accountId: "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
  eventType: "update_sku",
  payload: { key: "K1", productName: "Shirt", prices: [] },
  createdAt: "2026-03-01T10:00:00.000Z",
  completedAt: null,
  failedAt: null,
};

/** The headers of every push (Standard Webhooks), `webhook-id` described as `idDescription`. */
const pushHeaders = (idDescription: string) => ({
  "webhook-id": { description: idDescription, schema: z.string().uuid() },
  "webhook-timestamp": {
    description: "the attempt's time, in seconds since the Unix epoch; reject one far from your clock (a replay)",
    schema: z.string().regex(/^[0-9]{1,12}$/).max(12),
  },
  "webhook-signature": {
    description:
      "space-separated signatures `v1,<base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body>`, one per secret (two for 24 hours after a rotation), each keyed by the base64 after `whsec_` of a secret; accept the request when one matches",
    schema: z.string().regex(/^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$/).max(200),
  },
});

/** What each answer to a push means; `afterLast`: what happens once a delivery's last attempt failed. */
const pushResponses = (afterLast: string) => ({
  "2XX": { description: "any 2xx within 15 s: delivered (the answer's body is not read beyond 64 KiB, nor used)" },
  "410": {
    description: "Gone: the endpoint is disabled at once (disabledReason gone); nothing more is sent until a PUT with enabled=true, and then its pending deliveries resume",
  },
  default: {
    description: `any other status (a 3xx too: redirects are not followed), or no answer within 15 s: the attempt failed, and is retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; after the last the delivery has failed${afterLast}. An endpoint failing every attempt for 5 days is disabled (disabledReason failing).`,
  },
});

/** The push itself (CONTRACT "Webhooks: the event queue pushed"), in the document's top-level `webhooks`. */
function documentQueueEntry(ctx: RouteContext): void {
  ctx.openapi.webhook({
    name: "queueEntry",
    operationId: "receiveQueueEntry",
    summary: "A queue entry pushed to a registered endpoint",
    tag,
    description: [
      "Each queue entry of a type the endpoint subscribes to is POSTed to the endpoint's URL as `{id, type, timestamp, data}`, signed as Standard Webhooks (standardwebhooks.com: its published libraries verify it unchanged).",
      "Per product (per purchase order, per stock trigger) entries arrive in queue order: a later entry is sent only once the earlier one succeeded or finally failed. Delivery is at least once: an entry may come again with the same `webhook-id` (after a lost answer or a restart); de-duplicate on it.",
      "Only entries queued while the endpoint exists, is enabled and subscribes to their type are pushed: entries queued while it is disabled are never pushed later (read them with GET /v2/api/events). Deliveries already pending when it was disabled wait, and resume when a PUT enables it again.",
    ].join("\n\n"),
    headers: pushHeaders("the entry's id, the same on every attempt and re-send: de-duplicate on it"),
    body: queueEntrySchema,
    bodyExample: { id: exampleEntry.id, type: exampleEntry.eventType, timestamp: exampleEntry.createdAt, data: exampleEntry },
    responses: pushResponses(" and the product's next entry goes"),
  });
}

/** The push of import.finished (CONTRACT "Imports": a webhook-only type, no queue entry): `data` is the Import object. */
const importFinishedSchema = z
  .object({
    id: z.string().uuid().describe("the event's id, also the webhook-id header"),
    type: z.literal("import.finished"),
    timestamp: z.string().datetime().describe("when the events service made the event, once the job had ended"),
    data: importSchema,
  })
  .describe("an import job that reached a final state; `data` is the job exactly as GET /v2/api/imports/{id} answers it")
  .meta({ id: "WebhookImportFinished" });

const exampleImport = {
  id: "7f3c9a2e-1b4d-4e6f-8a0b-2c4d6e8f0a1b",
  resource: "products",
  format: "ndjson",
  status: "completed_with_errors",
  linesTotal: 1000,
  linesProcessed: 1000,
  linesSucceeded: 998,
  linesFailed: 2,
  createdAt: "2026-03-01T10:00:00.000Z",
  startedAt: "2026-03-01T10:00:01.000Z",
  finishedAt: "2026-03-01T10:00:03.000Z",
  resultsExpireAt: "2026-03-08T10:00:03.000Z",
  message: "",
};

/** The push of a finished import, in the document's top-level `webhooks` beside the queue's. */
function documentImportFinished(ctx: RouteContext): void {
  ctx.openapi.webhook({
    name: "importFinished",
    operationId: "receiveImportFinished",
    summary: "An import job reached a final state (event type import.finished)",
    tag,
    description: [
      "When an import job ends (`completed`, `completed_with_errors`, `failed` or `cancelled`), each enabled endpoint subscribing to `import.finished` (or to every type) is POSTed `{id, type, timestamp, data}`, signed as Standard Webhooks, `data` the Import object as GET /v2/api/imports/{id} answers it.",
      "It is pushed only: no entry on the event queue (GET /v2/api/events); the job itself is the record to read. Delivery is at least once, with the same `webhook-id` on every attempt and re-send; de-duplicate on it.",
    ].join("\n\n"),
    headers: pushHeaders("the event's id, the same on every attempt and re-send: de-duplicate on it"),
    body: importFinishedSchema,
    bodyExample: { id: "3a1f5c7e-9b2d-4f6a-8c0e-1d3f5a7c9e2b", type: "import.finished", timestamp: exampleImport.finishedAt, data: exampleImport },
    responses: pushResponses(""),
  });
}

/** The endpoint a body writes (its read-only fields dropped). */
const endpointOf = (body: Record<string, unknown>) => fromRestJson(WebhookEndpointSchema, withoutReadOnly(WebhookEndpointSchema, body));
/**
 * A write's endpoint, and the same in the request's deprecated fields, which an events service
 * from before `endpoint` reads while a rolling update is under way.
 */
const written = (endpoint: eventsV1.WebhookEndpoint) => ({ endpoint, url: endpoint.url, eventTypes: endpoint.eventTypes, description: endpoint.description });

function endpointToRest(e: eventsV1.WebhookEndpoint) {
  const { secret, ...endpoint } = toRestJson(WebhookEndpointSchema, e);
  return secret === null ? endpoint : { ...endpoint, secret };
}

const deliveryToRest = (d: eventsV1.WebhookDelivery) => toRestJson(WebhookDeliverySchema, d);

const tag = "Webhooks";
const id = { id: z.string().min(1).max(100) };
const badRequest = { description: "invalid body or parameter", schema: generalResponseSchema };
const notFound = { description: "no such endpoint of the account", schema: generalResponseSchema };

export function webhookRoutes(ctx: RouteContext, events: Client<typeof eventsV1.EventsService>, as: CallAs): void {
  documentQueueEntry(ctx);
  documentImportFinished(ctx);

  route(ctx, {
    method: "POST",
    url: "/v2/api/webhooks",
    operationId: "createWebhookEndpoint",
    summary: "Register an endpoint the account's queue entries are pushed to (at most 10 per account)",
    tag,
    auth: "bearer",
    body: z.strictObject(endpointBody),
    shownOnce: "secret",
    responses: {
      201: { description: "the endpoint, with its secret (shown only here: a replay leaves it out)", schema: endpointWithSecretSchema },
      400: badRequest,
      409: { description: "the account has 10 endpoints already", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const res = await events.createWebhookEndpoint(written(endpointOf(body)), as(caller));
      reply.status(201);
      return endpointToRest(res.endpoint!);
    },
  });

  route(ctx, {
    method: "GET",
    url: "/v2/api/webhooks",
    operationId: "listWebhookEndpoints",
    summary: "The account's webhook endpoints",
    tag,
    auth: "bearer",
    responses: { 200: { description: "the endpoints, oldest first", schema: z.array(endpointSchema) } },
    handler: async ({ caller }) => (await events.listWebhookEndpoints({}, as(caller))).endpoints.map(endpointToRest),
  });

  route(ctx, {
    method: "GET",
    url: "/v2/api/webhooks/:id",
    operationId: "getWebhookEndpoint",
    summary: "One webhook endpoint",
    tag,
    auth: "bearer",
    params: id,
    responses: { 200: { description: "the endpoint", schema: endpointSchema }, 404: notFound },
    handler: async ({ params, caller }, _req, reply) => endpointToRest(answerRevision(reply, await events.getWebhookEndpoint({ id: params.id }, as(caller))).endpoint!),
  });

  route(ctx, {
    method: "PUT",
    url: "/v2/api/webhooks/:id",
    operationId: "updateWebhookEndpoint",
    summary: "Replace an endpoint's URL, event types and description; enabled=true re-enables a disabled one",
    tag,
    auth: "bearer",
    params: id,
    body: z.strictObject({ ...endpointBody, enabled: z.boolean().optional().describe("true re-enables a disabled endpoint; false disables it") }),
    responses: { 200: { description: "the endpoint", schema: endpointSchema }, 400: badRequest, 404: notFound },
    handler: async ({ params, body, caller, ifRevision }) => {
      const req = { id: params.id, ...written(endpointOf(body)), enabled: body.enabled as boolean | undefined, ifRevision };
      return endpointToRest((await events.updateWebhookEndpoint(req, as(caller))).endpoint!);
    },
  });

  route(ctx, {
    method: "DELETE",
    url: "/v2/api/webhooks/:id",
    operationId: "deleteWebhookEndpoint",
    summary: "Delete an endpoint and its delivery log",
    tag,
    auth: "bearer",
    params: id,
    responses: { 200: { description: "deleted", schema: generalResponseSchema }, 404: notFound },
    handler: async ({ params, caller, ifRevision }) => {
      await events.deleteWebhookEndpoint({ id: params.id, ifRevision }, as(caller));
      return generalResponse(200, "deleted");
    },
  });

  route(ctx, {
    method: "POST",
    url: "/v2/api/webhooks/:id/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "A new signing secret; the old one keeps signing beside it for 24 hours",
    tag,
    auth: "bearer",
    params: id,
    shownOnce: "secret",
    responses: { 200: { description: "the endpoint with its new secret (shown only here: a replay leaves it out)", schema: endpointWithSecretSchema }, 404: notFound },
    handler: async ({ params, caller }) => endpointToRest((await events.rotateWebhookSecret({ id: params.id }, as(caller))).endpoint!),
  });

  route(ctx, {
    method: "GET",
    url: "/v2/api/webhooks/:id/deliveries",
    operationId: "listWebhookDeliveries",
    summary: "An endpoint's deliveries, newest first, each with its last attempt and every attempt (time, status code or error, duration, next retry)",
    tag,
    auth: "bearer",
    params: id,
    query: pageQuery(),
    responses: {
      200: { description: "the deliveries", schema: z.array(deliverySchema), headers: pageHeaders },
      400: badRequest,
      404: notFound,
    },
    handler: async ({ params, query, caller }, request, reply) => {
      const res = await events.listWebhookDeliveries({ endpointId: params.id, page: { page: query.page, pageSize: query.pageSize } }, as(caller));
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.deliveries.map(deliveryToRest);
    },
  });

  route(ctx, {
    method: "POST",
    url: "/v2/api/webhooks/:id/deliveries/:deliveryId/retry",
    operationId: "retryWebhookDelivery",
    summary: "Send a pending or failed delivery again now, its retry schedule started over; a failed one goes alone, holding back none of its product's later entries",
    tag,
    auth: "bearer",
    params: { ...id, deliveryId: z.string().min(1).max(100) },
    responses: {
      200: { description: "the delivery, pending", schema: deliverySchema },
      404: { description: "no such endpoint or delivery", schema: generalResponseSchema },
      409: { description: "already delivered (never sent again: an older state could follow a newer one), or an attempt under way", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }) => deliveryToRest((await events.retryWebhookDelivery({ endpointId: params.id, deliveryId: params.deliveryId }, as(caller))).delivery!),
  });
}
