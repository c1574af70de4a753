import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { eventsV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { conflict, invalid, notFound } from "@analytics/errors";
import { notWritten, type Page } from "@analytics/rpc";
import { urlProblem } from "./outbound";
import { lockAggregates } from "./repository/queue";
import * as repo from "./repository/webhooks";
import { endpointsTable } from "./resources";

const { WebhookEndpointSchema } = eventsV1;
type WebhookEndpoint = eventsV1.WebhookEndpoint;

/** Webhook endpoints (CONTRACT.md, "Webhooks: the event queue pushed"): the account's side. */

export const MAX_ENDPOINTS_PER_ACCOUNT = 10;
/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3600_000;

/** Standard Webhooks' secret form: "whsec_" and 24 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

/**
 * The webhook-signature header: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` under each
 * secret, space-separated (a receiver accepts any one that verifies).
 */
export function signature(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((s) => `v1,${createHmac("sha256", Buffer.from(s.replace(/^whsec_/, ""), "base64")).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`)
    .join(" ");
}

/** Standard Webhooks' retry schedule: the waits after the 1st, 2nd, ... failed attempt; after the last, the delivery has failed. */
export const RETRY_SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000];
/** An endpoint whose every attempt has failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600_000;

/** The wait after failed attempt number `attempt` (1-based), about the schedule's (±10 %), or undefined: no more attempts. */
export function retryDelayMs(attempt: number, random = Math.random): number | undefined {
  const base = RETRY_SCHEDULE_MS[attempt - 1];
  return base === undefined ? undefined : Math.round(base * (0.9 + 0.2 * random()));
}

/**
 * An endpoint as an account writes it: its rules (the proto's: url required and at most 2000
 * characters, event types of the EventType enum, description) and a URL the service may call.
 * The event types are kept once each.
 */
function checked(endpoint: WebhookEndpoint, allowPrivate: boolean): WebhookEndpoint {
  const violations = endpointsTable.violations(endpoint);
  const problem = violations.some((v) => v.path === "url") ? undefined : urlProblem(endpoint.url, allowPrivate);
  if (problem) violations.unshift({ path: "url", message: problem });
  if (violations.length) throw invalid(`${violations[0].path} ${violations[0].message}`, violations);
  return { ...endpoint, eventTypes: [...new Set(endpoint.eventTypes)] };
}

/** Creates an endpoint (at most MAX_ENDPOINTS_PER_ACCOUNT per account, counted under the account's lock). */
export async function createEndpoint(db: Db, accountId: string, input: WebhookEndpoint, allowPrivate: boolean): Promise<WebhookEndpoint> {
  const endpoint = create(WebhookEndpointSchema, { ...checked(input, allowPrivate), id: randomUUID(), secret: newSecret(), enabled: true, disabledReason: undefined });
  return db.transaction(async (tx) => {
    await lockAggregates(tx, [`events.webhooks:${accountId}`]);
    if ((await repo.countEndpoints(tx, accountId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
      throw conflict(`an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints`);
    }
    return repo.insertEndpoint(tx, accountId, endpoint);
  });
}

export async function getEndpoint(db: Db, accountId: string, id: string): Promise<{ endpoint: WebhookEndpoint; revision: string }> {
  const found = await repo.findEndpoint(db, accountId, id);
  if (!found) throw notFound("webhook endpoint not found");
  return found;
}

/**
 * Replaces what an account writes of an endpoint; `enabled` true re-enables it, false disables it.
 * `ifRevision` (If-Match): the revision the client read; a row at another one (or none) is left alone.
 */
export async function updateEndpoint(db: Db, accountId: string, id: string, input: WebhookEndpoint, enabled: boolean | undefined, allowPrivate: boolean, ifRevision?: string): Promise<WebhookEndpoint> {
  const endpoint = await repo.updateEndpoint(db, accountId, id, checked(input, allowPrivate), enabled, ifRevision);
  if (!endpoint) throw notWritten("webhook endpoint", ifRevision);
  return endpoint;
}

export async function deleteEndpoint(db: Db, accountId: string, id: string, ifRevision?: string): Promise<void> {
  if (!(await repo.deleteEndpoint(db, accountId, id, ifRevision))) throw notWritten("webhook endpoint", ifRevision);
}

export async function rotateSecret(db: Db, accountId: string, id: string): Promise<WebhookEndpoint> {
  const endpoint = await repo.rotateSecret(db, accountId, id, newSecret(), PREVIOUS_SECRET_VALID_MS);
  if (!endpoint) throw notFound("webhook endpoint not found");
  return endpoint;
}

export async function listDeliveries(db: Db, accountId: string, endpointId: string, page: Page) {
  await getEndpoint(db, accountId, endpointId);
  return repo.listDeliveries(db, endpointId, page);
}

/**
 * A manual retry: a failed or pending delivery is sent again now, its schedule started over. A
 * delivered one is a 409 (CONTRACT.md is silent): sending it again could put an older state of a
 * product after a newer one the endpoint already has. So is one being attempted at this moment.
 */
export async function retryDelivery(db: Db, accountId: string, endpointId: string, deliveryId: string) {
  await getEndpoint(db, accountId, endpointId);
  const result = await repo.retryDelivery(db, endpointId, deliveryId);
  if (!result) throw notFound("webhook delivery not found");
  if ("refused" in result) {
    throw conflict(result.refused === "delivered" ? "the delivery has been delivered; only a pending or failed one is retried" : "an attempt of the delivery is under way; its outcome shows in the delivery log");
  }
  return result.delivery;
}

export const listEndpoints = (db: Db, accountId: string) => repo.listEndpoints(db, accountId);
