import { createHmac, randomBytes, randomUUID } from "node:crypto";
import type { Db } from "@analytics/db";
import { changed, conflict, invalid, notFound } from "@analytics/errors";
import type { Page } from "@analytics/rpc";
import { urlProblem } from "./outbound";
import { lockAggregates } from "./repository/queue";
import * as repo from "./repository/webhooks";
import type { EndpointRow } from "./repository/webhooks";

/** Webhook endpoints (CONTRACT.md, "Webhooks: the event queue pushed"): the account's side. */

export const MAX_ENDPOINTS_PER_ACCOUNT = 10;
export const EVENT_TYPES = ["update_sku", "draft_po_change", "sku_warehouse_settings_change"] as const;
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

export interface EndpointInput {
  url: string;
  eventTypes: string[];
  description?: string;
}

function checked(input: EndpointInput, allowPrivate: boolean): EndpointInput {
  const problem = urlProblem(input.url, allowPrivate);
  if (problem) throw invalid(`url ${problem}`, [{ path: "url", message: problem }]);
  input.eventTypes.forEach((t, i) => {
    if (!(EVENT_TYPES as readonly string[]).includes(t)) throw invalid(`eventTypes[${i}] must be one of ${EVENT_TYPES.join(", ")}`, [{ path: `eventTypes[${i}]`, message: `must be one of ${EVENT_TYPES.join(", ")}` }]);
  });
  return { ...input, eventTypes: [...new Set(input.eventTypes)] };
}

/** Creates an endpoint (at most MAX_ENDPOINTS_PER_ACCOUNT per account, counted under the account's lock). */
export async function createEndpoint(db: Db, accountId: string, input: EndpointInput, allowPrivate: boolean): Promise<EndpointRow> {
  const { url, eventTypes, description } = checked(input, allowPrivate);
  return db.transaction(async (tx) => {
    await lockAggregates(tx, [`events.webhooks:${accountId}`]);
    if ((await repo.countEndpoints(tx, accountId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
      throw conflict(`an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints`);
    }
    return repo.insertEndpoint(tx, { id: randomUUID(), account_id: accountId, url, description: description ?? "", event_types: eventTypes, secret: newSecret() });
  });
}

export async function getEndpoint(db: Db, accountId: string, id: string): Promise<EndpointRow & { revision: string }> {
  const row = await repo.findEndpoint(db, accountId, id);
  if (!row) throw notFound("webhook endpoint not found");
  return row;
}

/** `ifRevision` (If-Match): the revision the client read; a row at another one (or none) is left alone. */
export async function updateEndpoint(db: Db, accountId: string, id: string, input: EndpointInput & { enabled?: boolean }, allowPrivate: boolean, ifRevision?: string): Promise<EndpointRow> {
  const { url, eventTypes, description } = checked(input, allowPrivate);
  const row = await repo.updateEndpoint(db, accountId, id, { url, event_types: eventTypes, description, enabled: input.enabled }, ifRevision);
  if (!row) throw gone(ifRevision);
  return row;
}

export async function deleteEndpoint(db: Db, accountId: string, id: string, ifRevision?: string): Promise<void> {
  if (!(await repo.deleteEndpoint(db, accountId, id, ifRevision))) throw gone(ifRevision);
}

/** No row written: not found, or (a conditional write) no longer at the revision named. */
const gone = (ifRevision: string | undefined) => (ifRevision === undefined ? notFound("webhook endpoint not found") : changed("webhook endpoint changed since the revision the request named"));

export async function rotateSecret(db: Db, accountId: string, id: string): Promise<EndpointRow> {
  const row = await repo.rotateSecret(db, accountId, id, newSecret(), PREVIOUS_SECRET_VALID_MS);
  if (!row) throw notFound("webhook endpoint not found");
  return row;
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
  return result.row;
}

export const listEndpoints = (db: Db, accountId: string) => repo.listEndpoints(db, accountId);
