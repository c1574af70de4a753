import { AsyncLocalStorage } from "node:async_hooks";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { performance } from "node:perf_hooks";
import knex, { type Knex } from "knex";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { Logger } from "pino";
import { stalledSince, watchStalls } from "./stalls";

export type Db = Knex;
export type Tx = Knex.Transaction;

export { ACCOUNT_VERSION_SQL, accountVersion, BUMP_ACCOUNT_VERSIONS_FUNCTION, bumpAccountVersions, createAccountVersions, createAccountVersionsTable, withAccountVersion } from "./account-versions";
export { jsonProblems, unstorableText } from "./storable";
export { jsonArrayInSlices, mapInSlices, SLICE_ITEMS } from "./slices";
export { STALL_MS } from "./stalls";
export { TableSpec, fieldViolations, tableSpec, type Row, type TableSpecOptions } from "./table";

// bigint counts come back as JS numbers (the edge keeps them within 2^53); numeric (money,
// prices, rates) comes back as its exact decimal text, never a binary float.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface DbOptions {
  url: string;
  /** The Postgres schema the service owns; it is the search path, so queries name bare tables. */
  schema: string;
  poolMax?: number;
  applicationName?: string;
  /** Longest wait for a pooled connection (or a new one), so a dead or frozen server fails fast. */
  acquireTimeoutMs?: number;
  /** Longest statement: Postgres cancels it (statement_timeout), and the driver gives up a little later on a server that no longer answers at all. */
  statementTimeoutMs?: number;
}

/** A pooled pg client as knex marks it: its id, and the error that made it unusable. */
type PooledClient = pg.Client & { __knexUid: string; __knex__disposed?: unknown };

export const DB_DEFAULTS = { acquireTimeoutMs: 5_000, statementTimeoutMs: 15_000, poolMax: 10 };

export function createDb({
  url,
  schema,
  poolMax = DB_DEFAULTS.poolMax,
  applicationName = schema,
  acquireTimeoutMs = DB_DEFAULTS.acquireTimeoutMs,
  statementTimeoutMs = DB_DEFAULTS.statementTimeoutMs,
}: DbOptions): Db {
  assertIdentifier(schema);
  const db = knex({
    client: "pg",
    connection: {
      connectionString: url,
      application_name: applicationName,
      statement_timeout: statementTimeoutMs,
      // A frozen server never sends the cancellation: the client stops waiting on its own.
      query_timeout: statementTimeoutMs + 1_000,
      connectionTimeoutMillis: acquireTimeoutMs,
    },
    searchPath: [schema],
    pool: {
      min: 0,
      max: poolMax,
      acquireTimeoutMillis: acquireTimeoutMs,
      createTimeoutMillis: acquireTimeoutMs,
      // Only a connection outside any transaction is handed out. After a freeze the driver gives
      // up on a statement and then on its ROLLBACK, which, queued behind the statement, is never
      // sent: once the server runs again, that session sits in an open (or aborted) transaction,
      // and every query on it would fail (25P02). Such a connection is closed instead, which ends
      // its transaction on the server.
      validate: (connection: pg.Client) => {
        const status = connection.getTransactionStatus();
        return status === null || status === "I";
      },
      afterCreate: (connection: PooledClient, done: (error: Error | null, connection: PooledClient) => void) => {
        const uid = connection.__knexUid;
        live.set(uid, connection);
        connection.once("end", () => live.delete(uid));
        done(null, connection);
      },
    },
  });
  // A connection whose statement failed because the connection did (the server terminated the
  // session) is never handed out again. The driver learns that the socket closed only a moment
  // later; until then the pool would give the dead connection to the next call, which would fail
  // as well. knex's own check (`__knex__disposed`, set once the driver saw the end) drops it.
  const live = new Map<string, PooledClient>();
  db.client.on("query-error", (error: unknown, query: { __knexUid?: string }) => {
    const connection = query.__knexUid === undefined ? undefined : live.get(query.__knexUid);
    if (connection && connectionLost(error)) connection.__knex__disposed ??= error;
  });
  // A wait for a pooled connection (or a new one's connecting) that failed while this process
  // stood still (SIGSTOP, a paused node) timed out on the clock alone: the connection handed back
  // or the server's answer that came meanwhile is read only after the timer has fired. Nothing has
  // run yet, so it is tried once more.
  watchStalls();
  const acquire = db.client.acquireConnection.bind(db.client);
  db.client.acquireConnection = async () => {
    const started = performance.now();
    try {
      return await acquire();
    } catch (error) {
      if (stalledSince(started)) return acquire();
      throw error;
    }
  };
  return db;
}

/** A value of a COPY row: null is SQL NULL, an object is written as its JSON (for json/jsonb columns). */
export type CopyValue = string | number | boolean | Date | object | null | undefined;

/** COPY's text format: backslash, tab, newline and carriage return escaped; \N is NULL. */
function copyText(value: CopyValue): string {
  if (value === null || value === undefined) return "\\N";
  const text = typeof value === "string" ? value : value instanceof Date ? value.toISOString() : typeof value === "object" ? JSON.stringify(value) : String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")) : text;
}

/** Rows per piece of a COPY's data: Postgres takes in the first while the next are written. */
const COPY_ROWS_PER_PIECE = 500;

/** COPY's data for `items`, a piece at a time, with a look at the event loop between pieces. */
async function* copyData<T>(items: readonly T[], rowOf: (item: T) => CopyValue[]): AsyncGenerator<string> {
  for (let from = 0; from < items.length; from += COPY_ROWS_PER_PIECE) {
    if (from) await new Promise((resolve) => setImmediate(resolve));
    let text = "";
    for (const item of items.slice(from, from + COPY_ROWS_PER_PIECE)) text += rowOf(item).map(copyText).join("\t") + "\n";
    yield text;
  }
}

/**
 * Inserts a row per item (`rowOf`, or the items are the rows) with COPY FROM STDIN on the
 * transaction's connection: thousands of rows without a JSON document or parameters for Postgres
 * to expand, the cheapest insert there is. The data is written in pieces of 500 rows, each as it
 * is built, so that Postgres inserts the first while the rest are formed (and the caller, between
 * pieces, does work of its own). COPY has no RETURNING, so callers choose ids themselves. The
 * driver's query timeout covers the COPY like any statement, so a server that stops answering
 * fails it instead of hanging.
 */
export async function copyRows(tx: Tx, table: string, columns: string[], rows: readonly CopyValue[][]): Promise<void>;
export async function copyRows<T>(tx: Tx, table: string, columns: string[], items: readonly T[], rowOf: (item: T) => CopyValue[]): Promise<void>;
export async function copyRows<T>(tx: Tx, table: string, columns: string[], items: readonly T[], rowOf?: (item: T) => CopyValue[]): Promise<void> {
  if (!items.length) return;
  [table, ...columns].forEach(assertIdentifier);
  const client = (await tx.client.acquireConnection()) as pg.Client;
  const sql = `COPY ${table} (${columns.join(", ")}) FROM STDIN`;
  // Seen like any statement by whoever listens to the database's query events (counts, logs).
  tx.client.emit("query", { sql, bindings: [], method: "copy" });
  const copy = client.query(copyFrom(sql));
  await pipeline(Readable.from(copyData(items, rowOf ?? ((row) => row as CopyValue[]))), copy);
}

/** A migration of one service; names sort in the order they run. */
export interface Migration {
  name: string;
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

/**
 * Creates the service's schema and runs its pending migrations. Migrations are imported modules
 * (not files found at run time) so that the bundled service carries them.
 */
export async function migrate(db: Db, schema: string, migrations: Migration[]): Promise<string[]> {
  assertIdentifier(schema);
  return whileMigrationLockHeld(db, schema, () => runMigrations(db, schema, migrations));
}

/**
 * The migrations of `migrations` not yet applied in `schema` (all of them on a fresh database).
 * Applied ones the list does not know (a newer release's) do not count: this release's code
 * runs on a schema migrated by a newer one, as during a rolling update.
 */
export async function pendingMigrations(db: Db, schema: string, migrations: Migration[]): Promise<string[]> {
  assertIdentifier(schema);
  const { rows } = await db.raw("SELECT to_regclass(?) IS NOT NULL AS present", [`"${schema}".knex_migrations`]);
  const applied = rows[0].present ? new Set((await db.withSchema(schema).from("knex_migrations").select("name")).map((r: { name: string }) => r.name)) : new Set<string>();
  return migrations.map((m) => m.name).filter((name) => !applied.has(name)).sort();
}

/** How often a replica asks again for the lock another replica's migrations hold. */
const MIGRATION_LOCK_POLL_MS = 100;

/**
 * Runs `work` holding the schema's migration lock, a session advisory lock on a connection of its
 * own: replicas starting together on a fresh database migrate one after the other (the later ones
 * find nothing left to do) instead of racing on CREATE SCHEMA or knex's own tables, or failing on
 * knex's "already locked". Each try is a short statement, so no statement timeout cuts a long wait
 * for another replica's index build; a replica that dies releases the lock with its session.
 */
async function whileMigrationLockHeld<T>(db: Db, schema: string, work: () => Promise<T>): Promise<T> {
  const lock = `migrations:${schema}`;
  const connection = (await db.client.acquireConnection()) as pg.Client;
  try {
    while (!(await connection.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [lock])).rows[0].ok) {
      await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
    }
    try {
      return await work();
    } finally {
      await connection.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [lock]);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

async function runMigrations(db: Db, schema: string, migrations: Migration[]): Promise<string[]> {
  await db.raw(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const byName = new Map(migrations.map((m) => [m.name, m]));
  const [, applied] = (await db.migrate.latest({
    schemaName: schema,
    tableName: "knex_migrations",
    migrationSource: {
      getMigrations: async () => [...byName.keys()].sort(),
      getMigrationName: (name: string) => name,
      getMigration: async (name: string) => {
        const m = byName.get(name)!;
        // A migration (an index build on a large table) may take longer than a request's
        // statement timeout; it runs in its own transaction, so the exemption ends with it.
        const unbounded = (step: (db: Knex) => Promise<void>) => async (db: Knex) => {
          await db.raw("SET LOCAL statement_timeout = 0");
          await step(db);
        };
        return { up: unbounded(m.up), down: unbounded(m.down ?? (async () => undefined)) };
      },
    },
  })) as [number, string[]];
  return applied;
}

export type MigrationMode = "apply" | "verify";

/** How often a process in verify mode looks again whether the migration Job has run. */
const SCHEMA_POLL_MS = 500;

/**
 * Brings `schema` to `migrations` before the process serves. apply: runs the pending ones (under
 * the schema's lock). verify: runs none and waits until every one is applied (by the chart's
 * migration Job, `main.js migrate-only`); the ports stay closed meanwhile, so the pod is not ready.
 */
export async function prepareSchema(db: Db, schema: string, migrations: Migration[], mode: MigrationMode = "apply", logger?: Logger, pollMs = SCHEMA_POLL_MS): Promise<void> {
  if (mode === "apply") {
    const applied = await migrate(db, schema, migrations);
    if (applied.length) logger?.info({ applied }, "migrations applied");
    return;
  }
  let waitingFor = "";
  for (;;) {
    const pending = await pendingMigrations(db, schema, migrations);
    if (!pending.length) return;
    // Logged when the list changes, not at every look.
    if (pending.join() !== waitingFor) logger?.warn({ schema, pending }, "MIGRATIONS=verify: waiting for the migration Job to apply these");
    waitingFor = pending.join();
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * `node <main.js> migrate-only`: the deployable's pending migrations in `schema` (the chart's
 * migration Job, before an install or upgrade). Needs the database's URL only. Its exit code: 0 when
 * the schema is current, 1 when migrating failed (logged).
 */
export async function migrateOnly(options: Pick<DbOptions, "url" | "acquireTimeoutMs" | "statementTimeoutMs">, schema: string, migrations: Migration[], logger: Logger): Promise<0 | 1> {
  const db = createDb({ url: options.url, schema, applicationName: `${schema}-migrate`, acquireTimeoutMs: options.acquireTimeoutMs, statementTimeoutMs: options.statementTimeoutMs, poolMax: 2 });
  try {
    const applied = await migrate(db, schema, migrations);
    logger.info({ schema, applied }, applied.length ? "migrations applied" : "schema already current");
    return 0;
  } catch (error) {
    logger.fatal({ err: error, schema }, "migrations failed");
    return 1;
  } finally {
    await db.destroy();
  }
}

/** Serialization failure and deadlock: Postgres rolled the transaction back, and running it again may well succeed. */
const RETRIABLE = new Set(["40001", "40P01"]);
const isRetriable = (error: unknown) => RETRIABLE.has((error as { code?: string })?.code ?? "");

/**
 * Runs `operation` again (up to `attempts` times in all, after a short random pause) when Postgres
 * aborted it as a serialization failure or deadlock victim (or `retriable` says so). The last
 * failure is thrown; libs/errors maps it to 503.
 */
export async function retrying<T>(operation: () => Promise<T>, attempts = 3, retriable: (error: unknown) => boolean = isRetriable): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= attempts || !retriable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, attempt * (10 + Math.random() * 40)));
    }
  }
}

/**
 * The call being served: its signal (its deadline passed, its caller hung up, the server is
 * stopping) and its deadline (a performance.now() time). libs/rpc runs each call's handler within
 * it; a transaction of the call never commits once the signal has fired, and its statements are
 * cancelled by Postgres when the deadline passes.
 */
interface Call {
  signal: AbortSignal;
  deadline?: number;
}
const currentCall = new AsyncLocalStorage<Call>();

/** Runs `run` as part of a call that ends when `signal` fires, at the latest `timeoutMs` from now. */
export function duringCall<T>(signal: AbortSignal, run: () => T, timeoutMs?: number): T {
  return currentCall.run({ signal, deadline: timeoutMs === undefined ? undefined : performance.now() + timeoutMs }, run);
}

/** A transaction rolled back because its call had ended: nothing was written (libs/errors: 503). */
export class CallEndedError extends Error {
  readonly code = CALL_ENDED;
  constructor() {
    super("the call ended (its deadline passed) before the write was committed; nothing was written");
    this.name = "CallEndedError";
  }
}
export const CALL_ENDED = "CALL_ENDED";

/**
 * COMMIT was sent and its answer never came (the connection broke, the server stopped answering):
 * the write may or may not be in the database (libs/errors: the gateway's 504 outcome unknown).
 */
export class OutcomeUnknownError extends Error {
  readonly code = OUTCOME_UNKNOWN;
  constructor(cause: unknown) {
    super("the connection was lost while committing; the write may or may not have been applied", { cause });
    this.name = "OutcomeUnknownError";
  }
}
export const OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN";

/**
 * The connection, not the statement, failed: the server terminated the session (57P01..57P03,
 * class 08), the socket broke, the driver gave up waiting, or the client had already seen its
 * connection die ("not queryable"). A transaction that fails so before COMMIT was sent is rolled
 * back by the server; an answer Postgres gave to COMMIT itself (a serialization failure) is
 * certain, one that never came is not.
 */
export function connectionLost(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === "string" && (/^(57P0[1-3]|08...)$/.test(e.code) || NETWORK_ERRORS.has(e.code))) return true;
  return typeof e?.message === "string" && LOST_CONNECTION.test(e.message);
}
const NETWORK_ERRORS = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT", "ECONNREFUSED", "EHOSTUNREACH"]);
const LOST_CONNECTION = /Connection terminated|not queryable|Query read timeout/;

/**
 * One transaction, retried whole on a serialization failure or deadlock, and on a connection that
 * broke before COMMIT was sent (the next try gets a fresh one): `work` must only touch the
 * database. Within a call (duringCall) it is rolled back instead of committed once the call has
 * ended, so that whoever answered "not done" (the caller's deadline) told the truth. A COMMIT
 * whose answer is lost is never retried: OutcomeUnknownError.
 */
export function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>, attempts = 3): Promise<T> {
  const call = currentCall.getStore();
  return retrying(() => transactionOnce(db, work, call), attempts, (error) => isRetriable(error) || (!(error instanceof OutcomeUnknownError) && connectionLost(error)));
}

async function transactionOnce<T>(db: Db, work: (tx: Tx) => Promise<T>, call: Call | undefined): Promise<T> {
  if (call?.signal.aborted) throw new CallEndedError();
  let committing = false;
  let failed: { error: unknown } | undefined;
  try {
    return await db.transaction(async (tx) => {
      await endStatementsAtDeadline(db, tx, call);
      let result: T;
      try {
        result = await work(tx);
      } catch (error) {
        failed = { error };
        throw error;
      }
      // The last moment the write can still be taken back.
      if (call?.signal.aborted) throw (failed = { error: new CallEndedError() }).error;
      committing = true;
      return result;
    });
  } catch (error) {
    if (committing && connectionLost(error)) throw new OutcomeUnknownError(error);
    // knex answers with the ROLLBACK's error when that fails too (the connection died meanwhile):
    // the work's own error says what happened; nothing was committed either way.
    if (failed && error !== failed.error) throw failed.error;
    throw error;
  }
}

/**
 * A statement of the transaction still running when its call's deadline passes (waiting for a
 * lock) is cancelled by Postgres then (57014, a 503: nothing written), so that the service's own
 * answer reaches the caller before the caller gives up with an unknown outcome. One statement more
 * per transaction, only where the call's deadline comes before the statement timeout.
 */
async function endStatementsAtDeadline(db: Db, tx: Tx, call: Call | undefined): Promise<void> {
  if (call?.deadline === undefined) return;
  const left = Math.max(1, Math.floor(call.deadline - performance.now()));
  const statementTimeout = (db.client.config.connection as { statement_timeout?: number }).statement_timeout ?? Number.POSITIVE_INFINITY;
  if (left < statementTimeout) await tx.raw("SELECT set_config('statement_timeout', ?, true)", [`${left}ms`]);
}

export async function ping(db: Db): Promise<void> {
  await db.raw("select 1");
}

/** Schema, table and column names built into SQL must be plain identifiers. */
function assertIdentifier(name: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain schema name: ${name}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A client's id that is not a UUID names nothing: callers answer 404 instead of a cast error. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/**
 * A row's integer id (its bigserial `seq`) as REST sends it: a positive whole number within
 * 2^53, as text. The published client holds ids as integers; UUIDs stay the internal keys.
 */
export function isIntegerId(value: string): boolean {
  return /^[1-9][0-9]{0,15}$/.test(value) && Number(value) <= Number.MAX_SAFE_INTEGER;
}

/**
 * The UUIDs of an account's rows of `table` named by their integer id (REST `id`, the row's
 * `seq`), by that id; ids that are no integer id or name no row are left out.
 */
export async function uuidsOfSeqs(db: Db | Tx, table: string, accountId: string, ids: string[]): Promise<Map<string, string>> {
  const seqs = ids.filter(isIntegerId);
  if (!seqs.length) return new Map();
  const rows: { id: string; seq: string }[] = await db(table).select("id", "seq").where("account_id", accountId).whereIn("seq", seqs);
  return new Map(rows.map((r) => [String(r.seq), r.id]));
}

/**
 * Transaction advisory locks on `keys` (released at commit), taken in one order so that two
 * transactions locking some of the same keys never wait for each other crosswise.
 */
export async function lockKeys(tx: Tx, keys: string[]): Promise<void> {
  if (!keys.length) return;
  await tx.raw("SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM (SELECT k FROM unnest(?::text[]) AS k ORDER BY k) AS s", [keys]);
}

/**
 * The pattern of every paged list (CONTRACT: creation order): rows carry a unique `seq`, the
 * list orders by `seq` alone, an index on (account_id, seq) INCLUDE (id) lets a page's ids be
 * found by an index-only scan (page N does not read the N-1 pages before it), only those rows are
 * then read in full, and the total is counted on the same index, never dragging payloads along.
 * `pageOfIds` is the first step: a subquery of the page's ids for `WHERE id IN (...)`.
 */
export function pageOfIds<Q extends Knex.QueryBuilder>(filtered: Q, page: { page: number; pageSize: number }, seq = "seq", id = "id"): Q {
  const { limit, offset } = pageWindow(page);
  return filtered.clearSelect().select(id).orderBy(seq).limit(limit).offset(offset) as Q;
}

/** Limit/offset of a 1-based page. */
export function pageWindow(page: { page: number; pageSize: number }): { limit: number; offset: number } {
  return { limit: page.pageSize, offset: (page.page - 1) * page.pageSize };
}

/** A row's revision as a select column: Postgres's xmin, which every write of the row changes. */
export const REVISION_COLUMN = "xmin::text AS revision";

/**
 * If-Match made atomic (CONTRACT "Conditional requests"): locks the row `where` of `table` until
 * the transaction ends and answers whether its revision is still `expected` (false when there is
 * no such row), so no write can land between this check and the caller's. A write that names no
 * revision passes unchecked.
 */
export async function lockedAtRevision(tx: Tx, table: string, where: Record<string, unknown>, expected: string | undefined): Promise<boolean> {
  if (expected === undefined) return true;
  const row: { revision: string } | undefined = await tx(table).select(tx.raw(REVISION_COLUMN)).where(where).forUpdate().first();
  return row?.revision === expected;
}
