import type { Db } from "@analytics/db";
import { isUuid, pageOfIds } from "@analytics/db";

export type EventState = "pending" | "completed" | "failed";
export type ProcessedState = Exclude<EventState, "pending">;

export interface EventRow {
  id: string;
  account_id: string;
  event_type: string;
  /** The payload as JSON text, exactly as stored: passed on without parsing. */
  payload: string;
  created_at: Date;
  completed_at: Date | null;
  failed_at: Date | null;
}

const COLUMNS_SQL = "id, account_id, event_type, payload::text AS payload, created_at, completed_at, failed_at";
const columns = (db: Db) => db.raw(COLUMNS_SQL);

export interface EventFilter {
  accountId: string;
  eventType?: string;
  state?: EventState;
}

function filtered(db: Db, f: EventFilter) {
  const q = db("events").where({ account_id: f.accountId });
  if (f.eventType !== undefined) q.andWhere({ event_type: f.eventType });
  if (f.state === "pending") q.whereNull("completed_at").whereNull("failed_at");
  if (f.state === "completed") q.whereNotNull("completed_at");
  if (f.state === "failed") q.whereNotNull("failed_at");
  return q;
}

/**
 * One page and the filtered total. Two queries on purpose: a `count(*) over ()` beside the page
 * would drag every matching payload through the window.
 */
export async function listEvents(db: Db, f: EventFilter, page: { page: number; pageSize: number }) {
  const ids = pageOfIds(filtered(db, f), page);
  const [rows, [{ count }]] = await Promise.all([
    db("events").select(columns(db)).whereIn("id", ids).orderBy("seq") as Promise<EventRow[]>,
    filtered(db, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

export async function findEvent(db: Db, accountId: string, id: string): Promise<EventRow | undefined> {
  if (!isUuid(id)) return undefined;
  return db("events").select(columns(db)).where({ account_id: accountId, id }).first();
}

const stamp = (state: ProcessedState) =>
  state === "completed" ? { completed_at: new Date(), failed_at: null } : { failed_at: new Date(), completed_at: null };

/**
 * Processes pending events; the WHERE on both timestamps makes the row lock decide: of two
 * concurrent updates exactly one finds the event pending. Returns the ids that changed.
 */
export async function markProcessed(db: Db, accountId: string, items: { id: string; state: ProcessedState }[]): Promise<Set<string>> {
  const valid = items.filter((i) => isUuid(i.id));
  if (!valid.length) return new Set();
  const changed = new Set<string>();
  for (const state of ["completed", "failed"] as const) {
    const ids = valid.filter((i) => i.state === state).map((i) => i.id);
    if (!ids.length) continue;
    const rows: { id: string }[] = await db("events")
      .where({ account_id: accountId })
      .whereIn("id", ids)
      .whereNull("completed_at")
      .whereNull("failed_at")
      .update(stamp(state))
      .returning("id");
    rows.forEach((r) => changed.add(r.id));
  }
  return changed;
}

export async function replacePayload(db: Db, accountId: string, id: string, payload: unknown): Promise<EventRow | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.raw(`UPDATE events SET payload = ?::jsonb WHERE account_id = ? AND id = ? RETURNING ${COLUMNS_SQL}`, [
    JSON.stringify(payload),
    accountId,
    id,
  ]);
  return rows[0];
}

export interface NewEvent {
  accountId: string;
  eventType: string;
  /** The resource as a GET returns it (decimals as RestDecimal keep their digits). */
  payload: unknown;
}
