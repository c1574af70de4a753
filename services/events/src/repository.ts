import { stringifyRest } from "@analytics/contracts";
import type { Db, Tx } from "@analytics/db";
import { isUuid, jsonArrayInSlices, lockKeys, pageOfIds, REVISION_COLUMN } from "@analytics/db";
import { INBOX_RETENTION_MS } from "@analytics/inbox";
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

// ---------------------------------------------------------------------------------------------
// Webhook endpoints and deliveries (migration 006).

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string;
  event_types: string[];
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function countEndpoints(tx: Tx, accountId: string): Promise<number> {
  const [{ n }] = await tx("webhook_endpoints").where({ account_id: accountId }).count({ n: "*" });
  return Number(n);
}

export async function insertEndpoint(tx: Tx, row: Pick<EndpointRow, "id" | "account_id" | "url" | "description" | "event_types" | "secret">): Promise<EndpointRow> {
  const [stored] = await tx("webhook_endpoints").insert(row).returning("*");
  return stored;
}

export async function listEndpoints(db: Db, accountId: string): Promise<EndpointRow[]> {
  return db("webhook_endpoints").where({ account_id: accountId }).orderBy([{ column: "created_at" }, { column: "id" }]);
}

/** An endpoint and its revision (If-Match). */
export async function findEndpoint(db: Db | Tx, accountId: string, id: string): Promise<(EndpointRow & { revision: string }) | undefined> {
  if (!isUuid(id)) return undefined;
  return db("webhook_endpoints").select("*", db.raw(REVISION_COLUMN)).where({ account_id: accountId, id }).first();
}

/**
 * Replaces what an account sets; enabled=true clears the reason it was disabled and its failing
 * streak. With `ifRevision` (If-Match) only that revision of the row is written: one statement, so
 * no other write lands between the check and this one.
 */
export async function updateEndpoint(
  db: Db,
  accountId: string,
  id: string,
  change: { url: string; event_types: string[]; description?: string; enabled?: boolean },
  ifRevision?: string,
): Promise<EndpointRow | undefined> {
  if (!isUuid(id)) return undefined;
  const set: Record<string, unknown> = { url: change.url, event_types: change.event_types, updated_at: db.fn.now() };
  if (change.description !== undefined) set.description = change.description;
  if (change.enabled === true) Object.assign(set, { enabled: true, disabled_reason: null, failing_since: null });
  if (change.enabled === false) Object.assign(set, { enabled: false, disabled_reason: "by request" });
  const [row] = await endpointAt(db, accountId, id, ifRevision).update(set).returning("*");
  return row;
}

export async function deleteEndpoint(db: Db, accountId: string, id: string, ifRevision?: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  return (await endpointAt(db, accountId, id, ifRevision).delete()) > 0;
}

/** An endpoint's row, only at this revision (If-Match) when one is named. */
function endpointAt(db: Db, accountId: string, id: string, ifRevision: string | undefined) {
  const q = db("webhook_endpoints").where({ account_id: accountId, id });
  return ifRevision === undefined ? q : q.whereRaw("xmin = ?::xid", [ifRevision]);
}

/** A new secret; the current one keeps signing until `previousValidMs` from now. */
export async function rotateSecret(db: Db, accountId: string, id: string, secret: string, previousValidMs: number): Promise<EndpointRow | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.raw(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = now() + (? * interval '1 millisecond'),
       secret = ?, updated_at = now()
     WHERE account_id = ? AND id = ? RETURNING *`,
    [previousValidMs, secret, accountId, id],
  );
  return rows[0];
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_status_code: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date;
  created_at: Date;
  /** Its attempts, oldest first (the last MAX_LOGGED_ATTEMPTS), as recordAttempts wrote them. */
  attempt_log: LoggedAttempt[];
}

/** One attempt in a delivery's log (timestamps as ISO text: jsonb). */
export interface LoggedAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  next_retry_at: string | null;
}

/** A delivery's log keeps its last attempts: the schedule makes 8, a manual retry starts it over. */
export const MAX_LOGGED_ATTEMPTS = 20;

const DELIVERY_COLUMNS = `d.id, d.event_id, e.event_type, d.status, d.attempts, d.last_status_code, d.last_duration_ms, d.last_error,
  d.last_attempt_at, d.next_attempt_at, d.created_at, d.attempt_log`;

/** An endpoint's deliveries, newest first, and their total. */
export async function listDeliveries(db: Db, endpointId: string, page: Page): Promise<{ rows: DeliveryRow[]; total: number }> {
  const [{ rows }, { rows: count }] = await Promise.all([
    db.raw(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.endpoint_id = ? ORDER BY d.seq DESC LIMIT ? OFFSET ?`,
      [endpointId, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    db.raw("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ?", [endpointId]),
  ]);
  return { rows, total: count[0].n };
}

/**
 * Makes a delivery pending and due now, its schedule started again: only one not delivered and
 * not being attempted right now (a live lease). Otherwise says why not; undefined: no such delivery.
 * A failed one is sent out of its product's order: the later entries went on after its final
 * failure, so it is a re-send of what the receiver missed and holds none of them back.
 */
export async function retryDelivery(db: Db, endpointId: string, id: string): Promise<{ row: DeliveryRow } | { refused: "delivered" | "in flight" } | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.raw(
    `WITH d AS (
       UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = NULL, lease_token = NULL,
         out_of_order = out_of_order OR status = 'failed'
       WHERE endpoint_id = ? AND id = ? AND status <> 'delivered' AND (lease_until IS NULL OR lease_until < now()) RETURNING *
     )
     SELECT ${DELIVERY_COLUMNS} FROM d JOIN events e ON e.id = d.event_id`,
    [endpointId, id],
  );
  if (rows[0]) return { row: rows[0] };
  const found: { status: string } | undefined = await db("webhook_deliveries").select("status").where({ endpoint_id: endpointId, id }).first();
  if (!found) return undefined;
  return { refused: found.status === "delivered" ? "delivered" : "in flight" };
}

/** A delivery a worker holds, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  attempts: number;
  url: string;
  secrets: string[];
  event_id: string;
  account_id: string;
  event_type: string;
  payload: string;
  created_at: Date;
  completed_at: Date | null;
  failed_at: Date | null;
}

export interface ClaimOptions {
  /** The process's free slots: at most this many are claimed. */
  limit: number;
  perEndpoint: number;
  leaseMs: number;
  token: string;
  /** The process's attempts in flight per endpoint (none by default): how the free slots are shared (claimDue). */
  inFlight?: ReadonlyMap<string, number>;
}

/** webhook_claim_due's arguments (webhook_round ends with the same): the in-flight counts as two arrays. */
function claimArgs(opts: ClaimOptions): (number | string | string[] | number[])[] {
  const held = [...(opts.inFlight ?? new Map<string, number>())].filter(([, n]) => n > 0);
  return [opts.limit, opts.perEndpoint, opts.leaseMs, opts.token, held.map(([id]) => id), held.map(([, n]) => n)];
}

/**
 * Leases up to `limit` due deliveries for `leaseMs` and returns them (webhook_claim_due, migration
 * 013). Due: pending, its time come, not leased, its endpoint enabled, and the oldest pending one
 * in order of its endpoint and aggregate (a later entry of a product waits for the earlier one's
 * outcome), or a failed one retried by hand (out of order). At most `perEndpoint` of an endpoint
 * are leased at once, counting the leases every worker holds: the endpoints are claimed under a
 * transaction lock each (claims of one endpoint take turns), and the leases are counted by the
 * next statement, whose snapshot has every claim committed before the lock was granted; so two
 * replicas never exceed the limit together.
 *
 * The process's free slots are shared (webhook_claim_due, migration 013): handed out level by
 * level over the endpoints with due deliveries (each one's first attempt in flight in this process
 * before any one's second). An endpoint's first attempt in flight may take any free slot; its k-th
 * (k ≥ 2) starts only while fewer than T/2 · (1 − (k−2)/(2·perEndpoint)) are in flight (T: the
 * process's total, `limit` plus `inFlight`). So endpoints that never answer, each holding its
 * slots for up to 15 s, hold more than one each in half the process at most, and the rest is one
 * slot each for endpoints that have none: a quick endpoint of another account still gets slots
 * while they hold theirs.
 */
export async function claimDue(db: Db | Tx, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { rows } = await db.raw("SELECT * FROM webhook_claim_due(?, ?, ?, ?, ?::uuid[], ?::int[])", claimArgs(opts));
  return rows;
}

/**
 * A worker's round in one statement (webhook_round, migrations 011 and 013): records `finished`
 * (recordAttempts), then claims what is due for the free slots (claimDue), in one transaction, so
 * the claim counts the slots those attempts freed and sees the products they let go on.
 *
 * The transaction commits without waiting for its WAL flush unless it wrote an endpoint's row. A
 * commit lost to a Postgres crash then costs at most a delivery sent again with the same
 * webhook-id, which the contract allows: a lost lease makes its delivery due again (the attempt's
 * outcome, recorded only under that lease, is dropped; until the attempts under way at the crash
 * end, their endpoint may have more than its limit in flight); a lost success leaves its delivery
 * pending and due, sent again. What is flushed is what would cost more: disabling an endpoint
 * (lost, the endpoint would get further entries after its 410 or its 5 failing days), and starting
 * or ending its failing streak (a lost end would count a success-free streak towards disabling);
 * any failure writes its endpoint's row. Those happen only to an endpoint in trouble, so a healthy
 * busy endpoint's rounds never wait for the disk.
 */
export async function recordAndClaim(db: Db | Tx, finished: FinishedAttempt[], opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { rows } = await db.raw("SELECT * FROM webhook_round(?::jsonb, ?, ?, ?, ?, ?, ?::uuid[], ?::int[])", [json(finished.map(attemptRow)), MAX_LOGGED_ATTEMPTS, ...claimArgs(opts)]);
  return rows;
}

export type AttemptOutcome =
  | { kind: "delivered" }
  /** A 410: the endpoint is disabled at once; the delivery waits, due, for it to be enabled again. */
  | { kind: "gone" }
  | { kind: "failed"; retryInMs?: number; disableIfFailingSinceMs: number };

/** One finished attempt of a delivery a worker holds under `token`, and what its answer means. */
export interface FinishedAttempt {
  id: string;
  token: string;
  startedAt: Date;
  statusCode?: number;
  durationMs: number;
  error?: string;
  outcome: AttemptOutcome;
}

/**
 * Records finished attempts, each of a delivery its worker still holds (`token`; a worker whose
 * lease ran out records nothing), in one statement (webhook_record_attempts, migration 011): each
 * delivery's answer and next state, then each endpoint's once for all its attempts of the batch. A
 * success ends the endpoint's failing streak; a 410 disables it; failures alone start the streak
 * or, 5 days into it, disable it.
 */
export async function recordAttempts(db: Db | Tx, attempts: FinishedAttempt[]): Promise<void> {
  if (!attempts.length) return;
  await db.raw("SELECT webhook_record_attempts(?::jsonb, ?)", [json(attempts.map(attemptRow)), MAX_LOGGED_ATTEMPTS]);
}

/** An attempt as webhook_record_attempts reads it: the delivery's next status and its retry and disabling delays. */
function attemptRow({ id, token, startedAt, statusCode, durationMs, error, outcome }: FinishedAttempt) {
  return {
    id,
    token,
    started_at: startedAt.toISOString(),
    kind: outcome.kind,
    status: outcome.kind === "delivered" ? "delivered" : outcome.kind === "failed" && outcome.retryInMs === undefined ? "failed" : "pending",
    status_code: statusCode ?? null,
    duration_ms: Math.round(durationMs),
    error: error ?? null,
    retry_ms: outcome.kind === "failed" ? (outcome.retryInMs ?? 0) : 0,
    disable_after_ms: outcome.kind === "failed" ? outcome.disableIfFailingSinceMs : 0,
  };
}

/**
 * Per endpoint with pending deliveries (a disabled one's waiting ones too): how many, and the age
 * of the oldest (the metrics). The clause
 * on next_attempt_at (never null) lets it read webhook_deliveries_due (migration 011).
 */
export async function backlogByEndpoint(db: Db): Promise<{ endpoint_id: string; pending: number; oldest_seconds: number }[]> {
  const { rows } = await db.raw(
    `SELECT d.endpoint_id, count(*)::int AS pending, extract(epoch FROM now() - min(d.created_at))::float8 AS oldest_seconds
     FROM webhook_deliveries d WHERE d.status = 'pending' AND d.next_attempt_at IS NOT NULL GROUP BY d.endpoint_id`,
  );
  return rows;
}

