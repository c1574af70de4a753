import { stringifyRest } from "@analytics/contracts";
import type { Db, Tx } from "@analytics/db";
import { isUuid, jsonArrayInSlices, lockKeys, pageOfIds, withAccountVersion } from "@analytics/db";
import { INBOX_RETENTION_MS } from "@analytics/inbox";
import type { Page } from "@analytics/rpc";

/**
 * The queue's SQL: its entries (a page, processing, payloads), the consumer's replicas of products
 * and prices, and the order of each aggregate's versions. Inserting an entry writes its webhook
 * deliveries in the same statement (insertEvents); the rest of the webhooks' SQL is in webhooks.ts.
 */

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
export async function listEvents(db: Db, f: EventFilter, page: Page) {
  const ids = pageOfIds(filtered(db, f), page);
  const [{ rows, version }, [{ count }]] = await Promise.all([
    // The account's data version read with the page (its snapshot): the page's weak ETag.
    withAccountVersion<EventRow>(db, f.accountId, db("events").select(columns(db), "seq").whereIn("id", ids), "seq"),
    filtered(db, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count), version };
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

// ---------------------------------------------------------------------------------------------
// The queue consumer's replica and entries (migrations 003 and 004). Rows travel as one jsonb
// parameter, written by stringifyRest so that RestDecimal payloads keep their digits.

const json = (rows: unknown) => stringifyRest(rows);

/** Transaction locks on the aggregates' keys, taken in one order. */
export async function lockAggregates(tx: Tx, keys: string[]): Promise<void> {
  await lockKeys(tx, keys);
}

/** An aggregate's place in the queue's order: a product, price, purchase order or stock trigger of an account. */
export type SequenceKey = { account_id: string; aggregate: string };

/** A version waiting for its predecessor (migration 014), its message as it came. */
export interface HeldRow extends SequenceKey {
  version: number;
  entry_aggregate: string;
  message_id: string;
  subject: string;
  occurred_at: string;
  payload: Buffer;
  /** Held longer than the bound asked for (sequenceState's `expiredAfterMs`). */
  expired: boolean;
}

const keyOf = (k: SequenceKey) => `${k.account_id}/${k.aggregate}`;

/**
 * The last version that passed of each aggregate (`<account>/<aggregate>`; absent: none yet) and
 * the versions held for them, oldest first; with `expiredAfterMs`, each held row says whether it
 * has waited longer (by the database's clock).
 */
export async function sequenceState(tx: Tx, keys: SequenceKey[], expiredAfterMs?: number): Promise<{ last: Map<string, number>; held: HeldRow[] }> {
  if (!keys.length) return { last: new Map(), held: [] };
  const { rows: last } = await tx.raw(
      `SELECT s.account_id, s.aggregate, s.version FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text)
       JOIN queue_sequences s ON s.account_id = x.account_id AND s.aggregate = x.aggregate`,
    [json(keys)],
  );
  const { rows: held } = await tx.raw(
    `SELECT h.account_id, h.aggregate, h.version, h.entry_aggregate, h.message_id, h.subject, h.occurred_at, h.payload,
         COALESCE(h.held_at < now() - (?::float8 * interval '1 millisecond'), false) AS expired
       FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text)
       JOIN held_versions h ON h.account_id = x.account_id AND h.aggregate = x.aggregate
       ORDER BY h.account_id, h.aggregate, h.version`,
    [expiredAfterMs ?? null, json(keys)],
  );
  return {
    last: new Map((last as (SequenceKey & { version: string })[]).map((r) => [keyOf(r), Number(r.version)])),
    held: (held as (HeldRow & { version: string })[]).map((r) => ({ ...r, version: Number(r.version) })),
  };
}

/** Moves each aggregate's last passed version on (never back). */
export async function advanceSequences(tx: Tx, rows: (SequenceKey & { version: number })[]): Promise<void> {
  if (!rows.length) return;
  await tx.raw(
    `INSERT INTO queue_sequences (account_id, aggregate, version)
     SELECT account_id, aggregate, version FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, version bigint)
     ON CONFLICT (account_id, aggregate) DO UPDATE SET version = excluded.version WHERE queue_sequences.version < excluded.version`,
    [json(rows)],
  );
}

/** Holds versions until their predecessors pass (a version held already keeps its row and time). */
export async function holdVersions(tx: Tx, rows: Omit<HeldRow, "expired">[]): Promise<void> {
  if (!rows.length) return;
  await tx.raw(
    `INSERT INTO held_versions (account_id, aggregate, version, entry_aggregate, message_id, subject, occurred_at, payload)
     SELECT x.account_id, x.aggregate, x.version, x.entry_aggregate, x.message_id, x.subject, x.occurred_at, decode(x.payload, 'base64')
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, version bigint, entry_aggregate text, message_id text, subject text, occurred_at text, payload text)
     ON CONFLICT (account_id, aggregate, version) DO NOTHING`,
    [json(rows.map((r) => ({ ...r, payload: r.payload.toString("base64") })))],
  );
}

/** Forgets held versions that passed or were passed by. */
export async function releaseHeld(tx: Tx, rows: (SequenceKey & { version: number })[]): Promise<void> {
  if (!rows.length) return;
  await tx.raw(
    `DELETE FROM held_versions h USING jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, version bigint)
     WHERE h.account_id = x.account_id AND h.aggregate = x.aggregate AND h.version = x.version`,
    [json(rows)],
  );
}

/** Up to `limit` aggregates with a version held longer than `holdMs`, with the aggregate their entries lock. */
export async function expiredHolds(db: Db, holdMs: number, limit: number): Promise<(SequenceKey & { entry_aggregate: string })[]> {
  const { rows } = await db.raw(
    `SELECT DISTINCT account_id, aggregate, entry_aggregate FROM held_versions
     WHERE held_at < now() - (?::float8 * interval '1 millisecond') LIMIT ?`,
    [holdMs, limit],
  );
  return rows;
}

/** How many versions are held now and how long the oldest has waited (the metrics). */
export async function holdStats(db: Db): Promise<{ held: number; oldest_seconds: number }> {
  const { rows } = await db.raw("SELECT count(*)::int AS held, COALESCE(extract(epoch FROM now() - min(held_at)), 0)::float8 AS oldest_seconds FROM held_versions");
  return rows[0];
}

/**
 * Forgets the versions queued over `olderThanMs` ago (8 days by default, like the inbox: the stream
 * keeps messages 7 days, so no such version is delivered again). Answers how many.
 */
export async function pruneQueuedVersions(db: Db, olderThanMs = INBOX_RETENTION_MS): Promise<number> {
  return db("queued_versions").where("queued_at", "<", new Date(Date.now() - olderThanMs)).delete();
}

/** Stores each product unless the replica holds it at a version as new. */
export async function storeNewerProducts(tx: Tx, rows: { account_id: string; product_id: string; version: number; product: unknown }[]): Promise<void> {
  await tx.raw(
    `INSERT INTO product_replica (account_id, product_id, version, product)
     SELECT account_id, product_id, version, product FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid, version bigint, product jsonb)
     ON CONFLICT (account_id, product_id) DO UPDATE SET version = excluded.version, product = excluded.product
     WHERE product_replica.version < excluded.version`,
    [await jsonArrayInSlices(rows, stringifyRest)],
  );
}

/** The integer ids (REST `id`) of replica products, by `accountId/productId`; products the replica lacks are left out. */
export async function replicaProductSeqs(tx: Tx, refs: { accountId: string; productId: string }[]): Promise<Map<string, bigint>> {
  const known = refs.filter((r) => isUuid(r.productId)).map((r) => ({ account_id: r.accountId, product_id: r.productId }));
  if (!known.length) return new Map();
  const { rows }: { rows: { account_id: string; product_id: string; seq: string | null }[] } = await tx.raw(
    `SELECT DISTINCT r.account_id, r.product_id, r.product->>'id' AS seq
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid)
     JOIN product_replica r ON r.account_id = x.account_id AND r.product_id = x.product_id`,
    [json(known)],
  );
  return new Map(rows.filter((r) => r.seq && /^[1-9][0-9]*$/.test(r.seq)).map((r) => [`${r.account_id}/${r.product_id}`, BigInt(r.seq!)]));
}

export interface PriceEntryRow {
  account_id: string;
  price_id: string;
  product_id: string;
  version: string;
  list_order: string;
  price_order: string;
  deleted: boolean;
  price: unknown;
}

/** Stores each price unless the replica holds it at a version as new; returns the products of those stored. */
export async function storeNewerPrices(tx: Tx, rows: PriceEntryRow[]): Promise<{ account_id: string; product_id: string }[]> {
  const { rows: stored } = await tx.raw(
    `INSERT INTO price_entry_replica AS r (account_id, price_id, product_id, version, list_order, price_order, deleted, price)
     SELECT account_id, price_id, product_id, version, list_order, price_order, deleted, price
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, price_id uuid, product_id uuid, version bigint, list_order bigint,
       price_order bigint, deleted boolean, price jsonb)
     ON CONFLICT (account_id, price_id) DO UPDATE SET version = excluded.version, list_order = excluded.list_order,
       price_order = excluded.price_order, deleted = excluded.deleted, price = excluded.price
     WHERE r.version < excluded.version
     RETURNING r.account_id, r.product_id`,
    [json(rows)],
  );
  return stored;
}

/**
 * What one queue entry is made of, in queue order: a whole payload, or a product to compose (the
 * replica's, when no payload is given); `aggregate` is its product, purchase order or trigger
 * (webhook deliveries keep its order).
 */
export type EntrySpec = { n: number; account_id: string; event_type: string; aggregate: string; payload?: unknown; product_id?: string };

/**
 * Inserts the entries in order, and for each one a pending delivery to every enabled webhook
 * endpoint of its account that subscribes to its type, in the same statement (the deliveries are
 * the push's outbox: written with the entry or not at all). Postgres composes each update_sku
 * payload (the product and its live prices, in list order) inside the INSERT; a product never
 * announced makes none.
 */
export async function insertEvents(tx: Tx, specs: EntrySpec[]): Promise<void> {
  await tx.raw(
    `WITH specs AS MATERIALIZED (
       SELECT gen_random_uuid() AS id, x.* FROM jsonb_to_recordset(?::jsonb) AS x(n int, account_id uuid, event_type text, aggregate text, payload jsonb, product_id uuid)
     ), entries AS (
       INSERT INTO events (id, account_id, event_type, payload)
       SELECT x.id, x.account_id, x.event_type,
         CASE WHEN x.product_id IS NULL THEN x.payload
         ELSE COALESCE(x.payload, p.product) || jsonb_build_object('prices', COALESCE(
           (SELECT jsonb_agg(e.price ORDER BY e.list_order, e.price_order) FROM price_entry_replica e
            WHERE e.account_id = x.account_id AND e.product_id = x.product_id AND NOT e.deleted), '[]'::jsonb)) END
       FROM specs x
       LEFT JOIN product_replica p ON p.account_id = x.account_id AND p.product_id = x.product_id
       WHERE COALESCE(x.payload, p.product) IS NOT NULL
       ORDER BY x.n
       RETURNING id, seq, account_id, event_type
     )
     INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, aggregate)
     SELECT w.id, e.id, e.seq, s.aggregate
     FROM entries e JOIN specs s ON s.id = e.id
     JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.enabled AND (cardinality(w.event_types) = 0 OR e.event_type = ANY (w.event_types))`,
    [json(specs)],
  );
}
