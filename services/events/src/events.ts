import { retrying, type Db } from "@analytics/db";
import { conflict, invalid, notFound } from "@analytics/errors";
import type { Page } from "@analytics/rpc";
import * as repo from "./repository/queue";
import type { EventFilter, EventRow, ProcessedState } from "./repository/queue";

/**
 * The queue operations of the specification, as plain functions over the repository. Writes are
 * single statements, run again on a deadlock or serialization failure (libs/db retrying).
 */

export function listEvents(db: Db, filter: EventFilter, page: Page) {
  return repo.listEvents(db, filter, page);
}

/** PATCH /events: once-only; 404 for an unknown event, 409 for a processed one. */
export async function processEvent(db: Db, accountId: string, id: string, state: ProcessedState): Promise<void> {
  const changed = await retrying(() => repo.markProcessed(db, accountId, [{ id, state }]));
  if (changed.has(id)) return;
  const existing = await repo.findEvent(db, accountId, id);
  if (!existing) throw notFound(`event ${id} not found`);
  throw conflict(`event ${id} was already processed`);
}

/** PATCH /events/batch: one result per item in request order; a repeated id changes once. */
export async function processEvents(db: Db, accountId: string, items: { id: string; state: ProcessedState }[]) {
  const first = new Map<string, number>();
  items.forEach((item, index) => {
    if (!first.has(item.id)) first.set(item.id, index);
  });
  const unique = items.filter((item, index) => first.get(item.id) === index);
  const changed = await retrying(() => repo.markProcessed(db, accountId, unique));
  return items.map((item, index) => ({ id: item.id, updated: first.get(item.id) === index && changed.has(item.id) }));
}

/** PUT /events/{id}: replaces the payload with any JSON value but null. */
export async function replacePayload(db: Db, accountId: string, id: string, payloadJson: string): Promise<EventRow> {
  let payload: unknown;
  try {
    payload = JSON.parse(payloadJson);
  } catch {
    throw invalid("payload is not JSON", [{ path: "payload", message: "must be a JSON value" }]);
  }
  if (payload === null || payload === undefined) {
    throw invalid("payload is required", [{ path: "payload", message: "must be a JSON value other than null" }]);
  }
  const row = await retrying(() => repo.replacePayload(db, accountId, id, payload));
  if (!row) throw notFound(`event ${id} not found`);
  return row;
}
