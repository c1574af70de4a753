import { stringifyRest, type eventsV1 } from "@analytics/contracts";
import type { Db, Row, Tx } from "@analytics/db";
import { isUuid, REVISION_COLUMN } from "@analytics/db";
import type { Page } from "@analytics/rpc";
import { deliveriesTable, endpointsTable } from "../resources";

type WebhookEndpoint = eventsV1.WebhookEndpoint;
type WebhookDelivery = eventsV1.WebhookDelivery;

/**
 * The webhooks' SQL: endpoints (migration 006), their deliveries and a worker's rounds, which
 * run the functions of ../sql/webhook-rounds.ts. A delivery is written with its event: a queue
 * entry (queue.ts, insertEvents), or an event pushed to webhooks only (insertWebhookEvents).
 */

const json = (rows: unknown) => stringifyRest(rows);

/** Endpoints are WebhookEndpoint messages: a row's columns of endpointsTable (it has more). */
const endpointOf = (row: Row) => endpointsTable.messageOf(row);

export async function countEndpoints(tx: Tx, accountId: string): Promise<number> {
  const [{ n }] = await tx("webhook_endpoints").where({ account_id: accountId }).count({ n: "*" });
  return Number(n);
}

export async function insertEndpoint(tx: Tx, accountId: string, endpoint: WebhookEndpoint): Promise<WebhookEndpoint> {
  const [stored] = await tx("webhook_endpoints").insert({ ...endpointsTable.rowOf(endpoint), account_id: accountId }).returning("*");
  return endpointOf(stored);
}

export async function listEndpoints(db: Db, accountId: string): Promise<WebhookEndpoint[]> {
  const rows: Row[] = await db("webhook_endpoints").where({ account_id: accountId }).orderBy([{ column: "created_at" }, { column: "id" }]);
  return rows.map(endpointOf);
}

/** An endpoint and its revision (If-Match). */
export async function findEndpoint(db: Db | Tx, accountId: string, id: string): Promise<{ endpoint: WebhookEndpoint; revision: string } | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db("webhook_endpoints").select("*", db.raw(REVISION_COLUMN)).where({ account_id: accountId, id }).first();
  return row && { endpoint: endpointOf(row), revision: row.revision };
}

/** The columns a write of an endpoint replaces: its fields an account writes (not the read-only ones). */
const writable = endpointsTable.updated;

/**
 * Replaces what an account writes; enabled=true clears the reason it was disabled and its failing
 * streak. With `ifRevision` (If-Match) only that revision of the row is written: one statement, so
 * no other write lands between the check and this one.
 */
export async function updateEndpoint(db: Db, accountId: string, id: string, endpoint: WebhookEndpoint, enabled?: boolean, ifRevision?: string): Promise<WebhookEndpoint | undefined> {
  if (!isUuid(id)) return undefined;
  const row = endpointsTable.rowOf(endpoint);
  const set: Record<string, unknown> = { ...Object.fromEntries(writable.map((c) => [c, row[c]])), updated_at: db.fn.now() };
  if (enabled === true) Object.assign(set, { enabled: true, disabled_reason: null, failing_since: null });
  if (enabled === false) Object.assign(set, { enabled: false, disabled_reason: "by request" });
  const [stored] = await endpointAt(db, accountId, id, ifRevision).update(set).returning("*");
  return stored && endpointOf(stored);
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
export async function rotateSecret(db: Db, accountId: string, id: string, secret: string, previousValidMs: number): Promise<WebhookEndpoint | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.raw(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = now() + (? * interval '1 millisecond'),
       secret = ?, updated_at = now()
     WHERE account_id = ? AND id = ? RETURNING *`,
    [previousValidMs, secret, accountId, id],
  );
  return rows[0] && endpointOf(rows[0]);
}

/** An event pushed to webhooks only (webhook_events, migration 016): its payload is the delivery's data. */
export type WebhookEventSpec = { account_id: string; event_type: string; aggregate: string; payload: unknown };

/**
 * Inserts events pushed to webhooks only, never queue entries (EventType's webhook_only types), and
 * in the same statement a pending delivery to every enabled endpoint of the account that
 * subscribes to the type, as insertEvents does for an entry: written with the event or not at all.
 */
export async function insertWebhookEvents(tx: Tx, specs: WebhookEventSpec[]): Promise<void> {
  if (!specs.length) return;
  await tx.raw(
    `WITH made AS (
       INSERT INTO webhook_events (id, account_id, event_type, aggregate, payload)
       SELECT gen_random_uuid(), x.account_id, x.event_type, x.aggregate, x.payload
       FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, event_type text, aggregate text, payload jsonb)
       RETURNING id, seq, account_id, event_type, aggregate
     )
     INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, aggregate)
     SELECT w.id, m.id, m.seq, m.aggregate FROM made m
     JOIN webhook_endpoints w ON w.account_id = m.account_id AND w.enabled AND (cardinality(w.event_types) = 0 OR m.event_type = ANY (w.event_types))`,
    [json(specs)],
  );
}

/** A delivery's log keeps its last attempts: the schedule makes 8, a manual retry starts it over. */
export const MAX_LOGGED_ATTEMPTS = 20;

/** A delivery's event (alias d): its queue entry e, or its event pushed to webhooks only p. */
const EVENT_JOIN = "LEFT JOIN events e ON e.id = d.event_id LEFT JOIN webhook_events p ON p.id = d.event_id";

/**
 * A delivery's row (alias d, its event e or p: EVENT_JOIN) as a WebhookDelivery: the event's type; the next attempt
 * only while pending; the attempt log (as webhook_record_attempts writes each attempt, timestamps
 * as JSON text) with the message's names.
 */
const DELIVERY_COLUMNS = deliveriesTable.select("d", {
  event_type: "COALESCE(e.event_type, p.event_type)",
  next_attempt_at: "CASE WHEN d.status = 'pending' THEN d.next_attempt_at END",
  attempt_log: `(SELECT COALESCE(jsonb_agg(jsonb_build_object('attempt', a->'attempt', 'attemptedAt', a->'at', 'statusCode', a->'status_code',
    'durationMs', a->'duration_ms', 'error', a->'error', 'nextRetryAt', a->'next_retry_at') ORDER BY n), '[]') FROM jsonb_array_elements(d.attempt_log) WITH ORDINALITY AS l(a, n))`,
});
const deliveryOf = (row: Row) => deliveriesTable.messageOf(row);

/** An endpoint's deliveries, newest first, and their total. */
export async function listDeliveries(db: Db, endpointId: string, page: Page): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
  const [{ rows }, { rows: count }] = await Promise.all([
    db.raw(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d ${EVENT_JOIN}
       WHERE d.endpoint_id = ? ORDER BY d.seq DESC LIMIT ? OFFSET ?`,
      [endpointId, page.pageSize, (page.page - 1) * page.pageSize],
    ),
    db.raw("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ?", [endpointId]),
  ]);
  return { deliveries: rows.map(deliveryOf), total: count[0].n };
}

/**
 * Makes a delivery pending and due now, its schedule started again: only one not delivered and
 * not being attempted right now (a live lease). Otherwise says why not; undefined: no such delivery.
 * A failed one is sent out of its product's order: the later entries went on after its final
 * failure, so it is a re-send of what the receiver missed and holds none of them back.
 */
export async function retryDelivery(db: Db, endpointId: string, id: string): Promise<{ delivery: WebhookDelivery } | { refused: "delivered" | "in flight" } | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.raw(
    `WITH d AS (
       UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = NULL, lease_token = NULL,
         out_of_order = out_of_order OR status = 'failed'
       WHERE endpoint_id = ? AND id = ? AND status <> 'delivered' AND (lease_until IS NULL OR lease_until < now()) RETURNING *
     )
     SELECT ${DELIVERY_COLUMNS} FROM d ${EVENT_JOIN}`,
    [endpointId, id],
  );
  if (rows[0]) return { delivery: deliveryOf(rows[0]) };
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
 * Leases up to `limit` due deliveries for `leaseMs` and returns them (webhook_claim_due,
 * ../sql/webhook-rounds.ts). Due: pending, its time come, not leased, its endpoint enabled, and the oldest pending one
 * in order of its endpoint and aggregate (a later entry of a product waits for the earlier one's
 * outcome), or a failed one retried by hand (out of order). At most `perEndpoint` of an endpoint
 * are leased at once, counting the leases every worker holds: the endpoints are claimed under a
 * transaction lock each (claims of one endpoint take turns), and the leases are counted by the
 * next statement, whose snapshot has every claim committed before the lock was granted; so two
 * replicas never exceed the limit together.
 *
 * The process's free slots are shared (webhook_claim_due): handed out level by
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
 * A worker's round in one statement (webhook_round, ../sql/webhook-rounds.ts): records `finished`
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
 * lease ran out records nothing), in one statement (webhook_record_attempts, ../sql/webhook-rounds.ts): each
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

