import { stringifyRest } from "@analytics/contracts";
import type { Db, Tx } from "@analytics/db";
import { isUuid, lockKeys, pageOfIds } from "@analytics/db";
import type { Page } from "@analytics/rpc";

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

// ---------------------------------------------------------------------------------------------
// The queue consumer's replica and entries (migrations 003 and 004). Rows travel as one jsonb
// parameter, written by stringifyRest so that RestDecimal payloads keep their digits.

const json = (rows: unknown) => stringifyRest(rows);

/** Transaction locks on the aggregates' keys, taken in one order. */
export async function lockAggregates(tx: Tx, keys: string[]): Promise<void> {
  await lockKeys(tx, keys);
}

/**
 * The newest version the queue has seen of each aggregate (`<account>/<aggregate>`): a product's
 * from its replica, a purchase order's or trigger's from aggregate_versions.
 */
export async function newestVersions(tx: Tx, aggregates: { accountId: string; aggregate: string; productId?: string }[]): Promise<Map<string, number>> {
  if (!aggregates.length) return new Map();
  const { rows } = await tx.raw(
    `SELECT x.account_id, x.aggregate, COALESCE(p.version, v.version) AS version
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, product_id uuid)
     LEFT JOIN product_replica p ON p.account_id = x.account_id AND p.product_id = x.product_id
     LEFT JOIN aggregate_versions v ON x.product_id IS NULL AND v.account_id = x.account_id AND v.aggregate = x.aggregate
     WHERE p.version IS NOT NULL OR v.version IS NOT NULL`,
    [json(aggregates.map((a) => ({ account_id: a.accountId, aggregate: a.aggregate, product_id: a.productId ?? null })))],
  );
  return new Map((rows as { account_id: string; aggregate: string; version: number }[]).map((r) => [`${r.account_id}/${r.aggregate}`, Number(r.version)]));
}

/** Stores each product unless the replica holds it at a version as new. */
export async function storeNewerProducts(tx: Tx, rows: { account_id: string; product_id: string; version: number; product: unknown }[]): Promise<void> {
  await tx.raw(
    `INSERT INTO product_replica (account_id, product_id, version, product)
     SELECT account_id, product_id, version, product FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, product_id uuid, version bigint, product jsonb)
     ON CONFLICT (account_id, product_id) DO UPDATE SET version = excluded.version, product = excluded.product
     WHERE product_replica.version < excluded.version`,
    [json(rows)],
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

/** Records each aggregate's version unless one as new is recorded. */
export async function storeNewerAggregateVersions(tx: Tx, rows: { account_id: string; aggregate: string; version: number }[]): Promise<void> {
  await tx.raw(
    `INSERT INTO aggregate_versions (account_id, aggregate, version)
     SELECT account_id, aggregate, version FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, aggregate text, version bigint)
     ON CONFLICT (account_id, aggregate) DO UPDATE SET version = excluded.version
     WHERE aggregate_versions.version < excluded.version`,
    [json(rows)],
  );
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

/** What one queue entry is made of, in delivery order: a whole payload, or a product to compose. */
export type EntrySpec = { n: number; account_id: string; event_type: string; payload?: unknown; product_id?: string };

/**
 * Inserts the entries in order. Postgres composes each update_sku payload (the product and its
 * live prices, in list order) inside the INSERT; a product never announced makes none.
 */
export async function insertEvents(tx: Tx, specs: EntrySpec[]): Promise<void> {
  await tx.raw(
    `INSERT INTO events (id, account_id, event_type, payload)
     SELECT gen_random_uuid(), x.account_id, x.event_type,
       CASE WHEN x.product_id IS NULL THEN x.payload
       ELSE COALESCE(x.payload, p.product) || jsonb_build_object('prices', COALESCE(
         (SELECT jsonb_agg(e.price ORDER BY e.list_order, e.price_order) FROM price_entry_replica e
          WHERE e.account_id = x.account_id AND e.product_id = x.product_id AND NOT e.deleted), '[]'::jsonb)) END
     FROM jsonb_to_recordset(?::jsonb) AS x(n int, account_id uuid, event_type text, payload jsonb, product_id uuid)
     LEFT JOIN product_replica p ON p.account_id = x.account_id AND p.product_id = x.product_id
     WHERE x.product_id IS NULL OR x.payload IS NOT NULL OR p.product IS NOT NULL
     ORDER BY x.n`,
    [json(specs)],
  );
}

/** The version of the account's queue (0 before its first entry), moved on by the triggers of migration 006. */
export async function accountVersion(db: Db, accountId: string): Promise<bigint> {
  const { rows } = await db.raw("SELECT coalesce((SELECT version FROM account_versions WHERE account_id = ?), 0)::text AS version", [accountId]);
  return BigInt(rows[0].version);
}
