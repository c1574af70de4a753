import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { callerOf, type Caller } from "@analytics/auth";
import {
  AppendImportChunkRequestSchema,
  ImportChunkResultsSchema,
  ImportSchema,
  ImportService,
  type AppendImportChunkRequest,
  type Import,
  type ImportLineResult,
  topics,
} from "@analytics/contracts";
import { inTransaction, isUuid, type Db, type Migration, type Tx } from "@analytics/db";
import { conflict, infrastructureKind, invalid, notFound } from "@analytics/errors";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { enqueue, outboxEntry, type OutboxRelay } from "@analytics/outbox";
import { gaugeReadOnScrape } from "@analytics/telemetry";
import { Counter, type Registry } from "prom-client";

/** A service's context (index.ts ServiceContext, declared here too: index.ts re-exports this file). */
interface ServiceContext {
  db: Db;
  relay: OutboxRelay;
  logger: Logger;
}

/**
 * Import jobs (CONTRACT "Imports", docs/imports.md), the same in every service that owns an
 * imported resource: the job, its chunks and their results in the owner's schema, the
 * ImportService calls the gateway makes, and the worker that applies a chunk at a time.
 */

/** A BatchResponse item as a batch call answers it. */
export interface LineOutcome {
  statusCode: number;
  reference: string;
  referenceField: string;
  message: string;
}

/** An imported resource of the owning service. */
export interface ImportResource {
  /**
   * Applies the valid lines of a chunk (`items`: the resource's batch request, serialized) with
   * the batch call's own function, in the chunk's transaction (`ctx.db` is it): one outcome per item,
   * in order. Lines repeating a key apply in file order (importRuns). `caller` is the job's creator
   * (its account and API key), as the batch call's would be.
   */
  apply(ctx: ServiceContext, caller: Caller, items: Uint8Array): Promise<LineOutcome[]>;
}

/** Attempts at a chunk whose apply fails (an error that is not a crash nor an outage) before its job fails. */
export const MAX_CHUNK_ATTEMPTS = 5;

export const IMPORT_FINAL_STATUSES = ["completed", "completed_with_errors", "failed", "cancelled"];
/** Results are kept this long after a job ends (resultsExpireAt). */
const RESULTS_DAYS = 7;
/**
 * An unsealed job none of whose chunks arrived for this long (the default of IMPORT_UPLOAD_IDLE_SECONDS) has lost its
 * upload (its gateway was killed mid-file): the sweep fails it. A live upload appends a chunk at
 * least every 1000 lines, awaiting each.
 */
export const IMPORT_UPLOAD_IDLE_MS = 3_600_000;
/** How often a worker sweeps (stopped uploads, expired results). */
const SWEEP_EVERY_MS = 60_000;

/** The migration that makes an owning service's job tables, under its own migration `name`. */
export const importTables = (name: string): Migration => ({
  name,
  async up(db) {
    await db.raw(`
      CREATE TABLE import_jobs (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        resource text NOT NULL,
        format text NOT NULL,
        status text NOT NULL DEFAULT 'queued',
        -- The whole file has arrived: the worker may take the job.
        sealed boolean NOT NULL DEFAULT false,
        lines_total bigint,
        chunks_total integer,
        -- The chunks applied: the next one is chunks_done (committed with each chunk).
        chunks_done integer NOT NULL DEFAULT 0,
        -- Failed attempts at chunk chunks_done (not crashes, not outages: errors of the apply itself).
        chunk_failures integer NOT NULL DEFAULT 0,
        lines_processed bigint NOT NULL DEFAULT 0,
        lines_succeeded bigint NOT NULL DEFAULT 0,
        lines_failed bigint NOT NULL DEFAULT 0,
        message text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        started_at timestamptz,
        finished_at timestamptz,
        results_expire_at timestamptz,
        -- When the worker last applied a chunk of it: the least recently served job goes next.
        touched_at timestamptz
      );
      CREATE INDEX import_jobs_by_account ON import_jobs (account_id, created_at DESC, id DESC);
      CREATE INDEX import_jobs_waiting ON import_jobs (account_id, resource, created_at) WHERE sealed AND status IN ('queued', 'running');
      CREATE TABLE import_chunks (
        import_id uuid NOT NULL REFERENCES import_jobs ON DELETE CASCADE,
        seq integer NOT NULL,
        -- The AppendImportChunkRequest as sent; emptied once applied.
        chunk bytea,
        -- ImportChunkResults of the applied chunk, in line order.
        results bytea,
        PRIMARY KEY (import_id, seq)
      );
    `);
  },
});

/**
 * The job columns added after importTables (the catalogue and orders ran it first; the other
 * owners run both in a row): the creator's API key (a purchase order's creator is one, as in its
 * batch) and when the upload last appended a chunk (the sweep fails an upload that stopped).
 */
export const importJobColumns = (name: string): Migration => ({
  name,
  async up(db) {
    await db.raw(`
      ALTER TABLE import_jobs ADD COLUMN api_key_id text NOT NULL DEFAULT '';
      ALTER TABLE import_jobs ADD COLUMN appended_at timestamptz;
      CREATE INDEX import_jobs_uploading ON import_jobs (created_at) WHERE NOT sealed AND status = 'queued';
      CREATE INDEX import_jobs_results_expiring ON import_jobs (results_expire_at) WHERE results_expire_at IS NOT NULL;
    `);
  },
});

type JobRow = {
  id: string;
  account_id: string;
  api_key_id: string;
  resource: string;
  format: string;
  status: string;
  sealed: boolean;
  lines_total: string | null;
  chunks_total: number | null;
  chunks_done: number;
  chunk_failures: number;
  lines_processed: string;
  lines_succeeded: string;
  lines_failed: string;
  message: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  results_expire_at: Date | null;
};

const at = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

export function importFromRow(r: JobRow): Import {
  return create(ImportSchema, {
    id: r.id,
    resource: r.resource,
    format: r.format,
    status: r.status,
    linesTotal: r.sealed && r.lines_total !== null ? BigInt(r.lines_total) : undefined,
    linesProcessed: BigInt(r.lines_processed),
    linesSucceeded: BigInt(r.lines_succeeded),
    linesFailed: BigInt(r.lines_failed),
    createdAt: at(r.created_at),
    startedAt: at(r.started_at),
    finishedAt: at(r.finished_at),
    resultsExpireAt: at(r.results_expire_at),
    message: r.message,
  });
}

/** The caller's job, locked for the rest of `tx` when `lock` (waits for the chunk in flight). */
async function jobOf(db: Db | Tx, accountId: string, id: string, lock = false): Promise<JobRow> {
  if (!isUuid(id)) throw notFound(`no import ${id}`);
  const query = db<JobRow>("import_jobs").where({ id, account_id: accountId }).first();
  const row = await (lock ? query.forUpdate() : query);
  if (!row) throw notFound(`no import ${id}`);
  return row;
}

/** What else the statement that updates a job writes (a WITH clause: the chunk's results). */
type JobUpdate = <Q extends Knex.QueryBuilder>(q: Q) => Q;
const withNothing: JobUpdate = (q) => q;

/**
 * Ends a job in a final `status` (with the other columns of `set`) and announces it
 * (analytics.imports.import.finished: the events service's import.finished webhooks) in the same
 * transaction: every final state is reached here, so the message is written once per job, with
 * the job as it ended, or not at all. `also`: what else that statement writes.
 */
async function finish(tx: Tx, id: string, status: string, set: Record<string, unknown> = {}, also: JobUpdate = withNothing): Promise<JobRow> {
  const [row] = await also(tx<JobRow>("import_jobs").where({ id }))
    .update({ ...set, status, finished_at: new Date(), results_expire_at: new Date(Date.now() + RESULTS_DAYS * 86_400_000) })
    .returning("*");
  await enqueue(tx, [outboxEntry(topics.importFinished, row.account_id, row.id, { accountId: row.account_id, import: importFromRow(row) })]);
  return row;
}

/** Every chunk of a job merged with its applied lines: one result per line, in line order. */
function chunkResults(chunk: AppendImportChunkRequest, applied: LineOutcome[]): ImportLineResult[] {
  const results = applied.map((o, i) => ({ line: chunk.itemLines[i], ...o }));
  return [...chunk.rejected, ...results].sort((a, b) => Number(a.line - b.line)) as ImportLineResult[];
}

const succeeded = (r: { statusCode: number }) => r.statusCode < 300;

/**
 * The consecutive runs of `keys` in which no key repeats: a batch answers a repeated key 409, an
 * import applies it again, later (a later line for the same key wins). Each run is one batch call.
 */
export function importRuns(keys: string[]): [from: number, to: number][] {
  const runs: [number, number][] = [];
  let seen = new Set<string>();
  let from = 0;
  keys.forEach((key, i) => {
    if (!seen.has(key)) return void seen.add(key);
    runs.push([from, i]);
    from = i;
    seen = new Set([key]);
  });
  if (keys.length) runs.push([from, keys.length]);
  return runs;
}

/**
 * A chunk's items applied in runs where no key repeats, each run one call of the batch function
 * (`write`), in order: where a batch refuses a repeated key (409), an import applies it again
 * later in the same transaction, so a later line for the same key wins.
 */
export async function applyInRuns<T>(items: T[], keyOf: (item: T) => string, write: (run: T[]) => Promise<LineOutcome[]>): Promise<LineOutcome[]> {
  const outcomes: LineOutcome[] = [];
  for (const [from, to] of importRuns(items.map(keyOf))) outcomes.push(...(await write(items.slice(from, to))));
  return outcomes;
}

/** One owning service's jobs: its resources, the gateway's calls, and the worker's wake-up. */
export class ImportJobs {
  private wakers = new Set<() => void>();

  constructor(readonly resources: Record<string, ImportResource>) {}

  /** Wakes the worker (a job was sealed). */
  wake(): void {
    for (const w of this.wakers) w();
  }

  /** Resolves after `ms`, or sooner when woken. */
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
      signal.addEventListener("abort", done);
    });
  }

  /** The ImportService calls, each on the caller's account. */
  handlers(ctx: ServiceContext): Partial<ServiceImpl<typeof ImportService>> {
    const { db } = ctx;
    return {
      createImport: async (req, c) => {
        if (!this.resources[req.resource]) throw invalid(`resource ${req.resource} is not imported by this service`);
        const { accountId, apiKeyId } = callerOf(c);
        const [row] = await db<JobRow>("import_jobs").insert({ id: randomUUID(), account_id: accountId, api_key_id: apiKeyId, resource: req.resource, format: req.format }).returning("*");
        return { import: importFromRow(row) };
      },
      appendImportChunk: async (req, c) =>
        // With the job locked: a cancel or the sweep (which lock it too) cannot end it between the
        // check and the insert, leaving a chunk to a finished job.
        inTransaction(db, async (tx) => {
          const job = await jobOf(tx, callerOf(c).accountId, req.importId, true);
          if (job.sealed || job.status !== "queued") throw conflict(`import ${job.id} takes no more chunks (${job.status})`);
          const appended = await tx("import_chunks").insert({ import_id: job.id, seq: req.seq, chunk: Buffer.from(toBinary(AppendImportChunkRequestSchema, req)) }).onConflict(["import_id", "seq"]).ignore().returning("seq");
          // A repeated append (a retried call) is refused, never applied twice.
          if (!appended.length) throw conflict(`chunk ${req.seq} of import ${job.id} has been appended already`);
          await tx("import_jobs").where({ id: job.id }).update({ appended_at: new Date() });
          return {};
        }),
      sealImport: async (req, c) => {
        const accountId = callerOf(c).accountId;
        const row = await inTransaction(db, async (tx) => {
          const job = await jobOf(tx, accountId, req.importId, true);
          if (job.sealed || job.status !== "queued") return job;
          const sealed = { sealed: true, lines_total: String(req.linesTotal), chunks_total: req.chunksTotal };
          if (req.failure === undefined) return (await tx<JobRow>("import_jobs").where({ id: job.id }).update(sealed).returning("*"))[0];
          // The file could not be read: nothing of it is applied.
          await tx("import_chunks").where({ import_id: job.id }).delete();
          return finish(tx, job.id, "failed", { ...sealed, message: req.failure });
        });
        if (row.status === "queued") this.wake();
        else ctx.relay.kick();
        return { import: importFromRow(row) };
      },
      getImport: async (req, c) => ({ import: importFromRow(await jobOf(db, callerOf(c).accountId, req.importId)) }),
      listImports: async (req, c) => {
        const mine = () => db<JobRow>("import_jobs").where({ account_id: callerOf(c).accountId }).modify((q) => void (req.status !== undefined && q.where({ status: req.status })));
        const [rows, [{ count }]] = await Promise.all([mine().orderBy([{ column: "created_at", order: "desc" }, { column: "id", order: "desc" }]).limit(req.limit), mine().count({ count: "*" })]);
        return { imports: rows.map(importFromRow), totalCount: Number(count) };
      },
      cancelImport: async (req, c) => {
        const accountId = callerOf(c).accountId;
        const answer = await inTransaction(db, async (tx) => {
          // Locked: waits for the chunk in flight, which stays applied.
          const job = await jobOf(tx, accountId, req.importId, true);
          if (IMPORT_FINAL_STATUSES.includes(job.status)) return { import: importFromRow(job), finished: true };
          await tx("import_chunks").where({ import_id: job.id }).whereNull("results").delete();
          return { import: importFromRow(await finish(tx, job.id, "cancelled", { message: "cancelled" })), finished: false };
        });
        if (!answer.finished) ctx.relay.kick();
        return answer;
      },
      streamImportResults: async function* (req, c) {
        const job = await jobOf(db, callerOf(c).accountId, req.importId);
        const keep = req.outcome === "all" ? () => true : req.outcome === "succeeded" ? succeeded : (r: ImportLineResult) => !succeeded(r);
        for (let from = 0; ; from += 20) {
          const chunks = await db("import_chunks").where({ import_id: job.id }).whereNotNull("results").where("seq", ">=", from).where("seq", "<", from + 20).orderBy("seq").select("results");
          if (!chunks.length && from >= (job.chunks_total ?? 0)) return;
          const results = chunks.flatMap((ch: { results: Buffer }) => fromBinary(ImportChunkResultsSchema, ch.results).results.filter(keep));
          if (results.length) yield { results };
        }
      },
    };
  }

  /**
   * Applies the next chunk of one job, in one transaction with the chunk's writes, outbox rows
   * and results and the job's progress: a process killed at any point applied all of the chunk or
   * none of it, and the next step resumes at the first chunk not committed. The job taken is the
   * oldest sealed unfinished one of its account and resource (one runs at a time per account and
   * resource; the next waits queued), the least recently served first; SKIP LOCKED lets other
   * replicas take other jobs meanwhile. False when no job waits.
   */
  async step(ctx: ServiceContext, applied?: (resource: string, lines: number) => void): Promise<boolean> {
    let taken: { job: JobRow; firstLine?: bigint } | undefined;
    const worked = await inTransaction(ctx.db, async (tx) => {
      // The job with its next chunk, in one statement.
      const { rows } = await tx.raw<{ rows: (JobRow & { next_chunk: Buffer | null })[] }>(`
        SELECT j.*, c.chunk AS next_chunk FROM import_jobs j LEFT JOIN import_chunks c ON c.import_id = j.id AND c.seq = j.chunks_done
        WHERE j.sealed AND j.status IN ('queued', 'running')
          AND NOT EXISTS (SELECT 1 FROM import_jobs o WHERE o.account_id = j.account_id AND o.resource = j.resource AND o.sealed
                          AND o.status IN ('queued', 'running') AND (o.created_at, o.id) < (j.created_at, j.id))
        ORDER BY j.touched_at NULLS FIRST, j.created_at LIMIT 1 FOR UPDATE OF j SKIP LOCKED`);
      if (!rows[0]) return false;
      const { next_chunk: stored, ...job } = rows[0];
      let counts = { processed: 0, ok: 0 };
      let results: Buffer | undefined;
      if (stored) {
        const chunk = fromBinary(AppendImportChunkRequestSchema, stored);
        taken = { job, firstLine: [...chunk.itemLines, ...chunk.rejected.map((r) => r.line)].sort((a, b) => Number(a - b))[0] };
        const applied = chunk.itemLines.length ? await this.resources[job.resource].apply({ db: tx, relay: ctx.relay, logger: ctx.logger }, { accountId: job.account_id, apiKeyId: job.api_key_id }, chunk.items) : [];
        const lines = chunkResults(chunk, applied);
        results = Buffer.from(toBinary(ImportChunkResultsSchema, create(ImportChunkResultsSchema, { results: lines })));
        counts = { processed: lines.length, ok: lines.filter(succeeded).length };
      }
      const done = job.chunks_done + 1 >= (job.chunks_total ?? 0);
      const failed = Number(job.lines_failed) + counts.processed - counts.ok;
      const progress = {
        chunks_done: job.chunks_done + 1,
        chunk_failures: 0,
        lines_processed: tx.raw("lines_processed + ?", [counts.processed]),
        lines_succeeded: tx.raw("lines_succeeded + ?", [counts.ok]),
        lines_failed: failed,
        started_at: job.started_at ?? new Date(),
        touched_at: new Date(),
      };
      // The chunk's results (its input dropped) written by the statement that advances the job.
      const saved = results;
      const withResults: JobUpdate = saved ? (q) => q.with("applied", (c) => c.from("import_chunks").where({ import_id: job.id, seq: job.chunks_done }).update({ chunk: null, results: saved })) as typeof q : withNothing;
      if (done) await finish(tx, job.id, failed ? "completed_with_errors" : "completed", progress, withResults);
      else await withResults(tx("import_jobs").where({ id: job.id }).update({ ...progress, status: "running" }));
      if (!job.started_at) ctx.logger.info({ importId: job.id, accountId: job.account_id, resource: job.resource, linesTotal: job.lines_total }, "import started");
      if (done) ctx.logger.info({ importId: job.id, accountId: job.account_id, resource: job.resource, linesTotal: job.lines_total, linesFailed: failed }, "import finished");
      return { resource: job.resource, lines: counts.processed };
    }).catch(async (error: unknown) => {
      // An outage only delays the chunk; anything else (a unique violation that will repeat too) is an attempt.
      const kind = infrastructureKind(error);
      if (taken && kind !== "unavailable" && kind !== "outcome_unknown") await this.chunkFailed(ctx, taken.job, taken.firstLine);
      throw error;
    });
    if (!worked) return false;
    ctx.relay.kick();
    applied?.(worked.resource, worked.lines);
    return true;
  }

  /**
   * Counts a failed attempt at the job's next chunk (its transaction rolled back); at
   * MAX_CHUNK_ATTEMPTS the job fails, naming the chunk's first line: the chunks before it stay
   * applied, and the account's next job may run.
   */
  private async chunkFailed(ctx: ServiceContext, job: JobRow, firstLine: bigint | undefined): Promise<void> {
    const failed = await inTransaction(ctx.db, async (tx) => {
      const [row] = await tx<JobRow>("import_jobs").where({ id: job.id, chunks_done: job.chunks_done }).whereIn("status", ["queued", "running"]).increment("chunk_failures", 1).returning("*");
      if (!row || row.chunk_failures < MAX_CHUNK_ATTEMPTS) return false;
      const message = `line ${firstLine ?? "?"}: its chunk could not be applied (${MAX_CHUNK_ATTEMPTS} attempts); the lines before it are applied`;
      await finish(tx, job.id, "failed", { message });
      await tx("import_chunks").where({ import_id: job.id }).whereNull("results").delete();
      ctx.logger.error({ importId: job.id, accountId: job.account_id, resource: job.resource, line: String(firstLine) }, "import failed: a chunk could not be applied");
      return true;
    });
    if (failed) ctx.relay.kick();
  }

  /**
   * Fails the jobs whose upload stopped (unsealed, no chunk for `uploadIdleMs`: their chunks are
   * dropped, nothing of them was applied) and drops the results of jobs past resultsExpireAt (the
   * job stays: its results answer 410). Idempotent: any replica may run it any time.
   */
  async sweep(ctx: ServiceContext, uploadIdleMs = IMPORT_UPLOAD_IDLE_MS): Promise<{ stopped: number; expired: number }> {
    const stopped = await inTransaction(ctx.db, async (tx) => {
      const idle = tx.raw("now() - make_interval(secs => ?)", [uploadIdleMs / 1000]);
      const rows = await tx<JobRow>("import_jobs")
        .where({ sealed: false, status: "queued" })
        .where(tx.raw("coalesce(appended_at, created_at)"), "<", idle)
        .forUpdate()
        .skipLocked()
        .select("id", "account_id", "resource");
      const message = `the upload stopped: no part of the file arrived for ${Math.round(uploadIdleMs / 1000)} s; nothing of it is applied`;
      // Through finish, as every final state: the job's import.finished is announced with it.
      for (const r of rows) {
        await finish(tx, r.id, "failed", { message });
        ctx.logger.warn({ importId: r.id, accountId: r.account_id, resource: r.resource }, "import failed: its upload stopped");
      }
      if (rows.length) await tx("import_chunks").whereIn("import_id", rows.map((r) => r.id)).delete();
      return rows.length;
    });
    if (stopped) ctx.relay.kick();
    // From the chunks held (a join on them), not from every job whose results ever expired.
    const { rowCount: expired } = await ctx.db.raw("DELETE FROM import_chunks c USING import_jobs j WHERE j.id = c.import_id AND j.results_expire_at < now()");
    return { stopped, expired };
  }

  /**
   * The worker of the owning service: steps while jobs wait, else sleeps until woken or `pollMs`;
   * sweeps every SWEEP_EVERY_MS.
   */
  worker(pollMs = 1000) {
    return ({ db, logger, relay, metrics, importUploadIdleMs }: { db: Db; logger: Logger; relay?: OutboxRelay; metrics: Registry; importUploadIdleMs?: number }) => {
      if (!relay) throw new Error("the import worker needs its service's outbox relay");
      const ctx: ServiceContext = { db, logger, relay };
      const applied = importMetrics(metrics, db);
      const stopping = new AbortController();
      let swept = 0;
      const running = (async () => {
        while (!stopping.signal.aborted) {
          if (Date.now() - swept >= SWEEP_EVERY_MS) {
            swept = Date.now();
            await this.sweep(ctx, importUploadIdleMs).catch((err: unknown) => ctx.logger.error({ err }, "import sweep failed; trying again later"));
          }
          const worked = await this.step(ctx, applied).catch((err: unknown) => {
            ctx.logger.error({ err }, "import chunk not applied; retrying");
            return false;
          });
          if (!worked) await this.sleep(pollMs, stopping.signal);
        }
      })();
      return {
        stop: async () => {
          stopping.abort();
          await running;
        },
      };
    };
  }
}

/**
 * What an operator watches (docs/imports.md): lines applied by resource, live jobs by state and the
 * age of the oldest queued job (read on scrape, from the live jobs' partial index). Answers the
 * worker's count of applied lines.
 */
function importMetrics(registry: Registry, db: Db) {
  const lines = new Counter({ name: "import_lines_applied_total", help: "Import lines applied (their chunk committed), by resource", labelNames: ["resource"], registers: [registry] });
  gaugeReadOnScrape(registry, "import_jobs", "Sealed import jobs not yet finished, by state", ["status"], async () => {
    const rows: { status: string; n: number }[] = await db("import_jobs").where({ sealed: true }).whereIn("status", ["queued", "running"]).groupBy("status").select("status", db.raw("count(*)::int AS n"));
    return ["queued", "running"].map((status) => ({ labels: { status }, value: rows.find((r) => r.status === status)?.n ?? 0 }));
  });
  gaugeReadOnScrape(registry, "import_oldest_queued_seconds", "Age of the oldest sealed import job waiting queued", [], async () => {
    const row = await db("import_jobs").where({ sealed: true, status: "queued" }).first(db.raw("coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age"));
    return [{ labels: {}, value: Number(row?.age ?? 0) }];
  });
  return (resource: string, applied: number) => lines.inc({ resource }, applied);
}
