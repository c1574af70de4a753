import { randomUUID } from "node:crypto";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { Knex } from "knex";
import type { Logger } from "pino";
import { MAX_MESSAGE_BYTES, type Bus, type BusMessage } from "@analytics/bus";
import type { Topic } from "@analytics/contracts";
import { mapInSlices, type Db, type Migration } from "@analytics/db";
import { infrastructureKind, invalid, type FieldViolation } from "@analytics/errors";
import { endSpan, SpanKind, startSpan, traceHeaders } from "@analytics/telemetry";

/**
 * Transactional outbox: a change and the message announcing it are written in one transaction;
 * the relay publishes rows afterwards, so a message is never lost when the bus is down and never
 * sent for a change that rolled back.
 *
 * What holds (docs/messaging.md, "What holds, and where"):
 * - every committed change is published at least once (duplicates carry the same id);
 * - per aggregate, messages are published in commit order: a row the bus refuses holds back the
 *   later rows of its aggregate (not the whole outbox) until it goes out or is dead-lettered;
 * - consumers still apply by `version`, because a dead-lettered row or a replay can reorder;
 * - an outage is no row's fault: while the bus is unreachable (or, in-process, a consumer's
 *   database is), nothing is counted toward dead-lettering; the relay waits and tries again.
 */
export const outboxMigration: Migration = {
  name: "000_outbox",
  async up(db) {
    await db.schema.createTable("outbox", (t) => {
      t.uuid("id").primary();
      // Publication order: the order in which changes wrote their rows. Writes of one aggregate
      // are serialized by its row lock, so within an aggregate this is commit order.
      t.bigIncrements("seq", { primaryKey: false });
      t.text("subject").notNullable();
      t.uuid("account_id").notNullable();
      t.jsonb("data").notNullable();
      t.timestamp("occurred_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.timestamp("published_at", { useTz: true });
      t.integer("attempts").notNullable().defaultTo(0);
      t.timestamp("next_attempt_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.text("last_error");
    });
    await db.raw("CREATE INDEX outbox_pending ON outbox (seq) WHERE published_at IS NULL");
  },
  async down(db) {
    await db.schema.dropTable("outbox");
  },
};

/** Typed messages: the proto payload, the aggregate it orders by, and a dead-letter state. */
export const outboxTypedMigration: Migration = {
  name: "000_outbox_typed",
  async up(db) {
    await db.raw(`
      ALTER TABLE outbox ALTER COLUMN data DROP NOT NULL;
      ALTER TABLE outbox ADD COLUMN payload bytea, ADD COLUMN aggregate text NOT NULL DEFAULT '', ADD COLUMN dead_at timestamptz;
      DROP INDEX outbox_pending;
      CREATE INDEX outbox_pending ON outbox (seq) WHERE published_at IS NULL AND dead_at IS NULL;
      CREATE INDEX outbox_pending_aggregate ON outbox (aggregate, seq) WHERE published_at IS NULL AND dead_at IS NULL;
    `);
  },
};

/** The trace context of the request that made the change, for the message's trace headers. */
export const outboxTraceMigration: Migration = {
  name: "000_outbox_with_trace",
  async up(db) {
    await db.raw("ALTER TABLE outbox ADD COLUMN trace jsonb");
  },
};

/** Dead-lettered rows by a partial index: the metrics count them on every scrape, among a day of published rows. */
export const outboxDeadIndexMigration: Migration = {
  name: "000_outbox_with_dead_index",
  async up(db) {
    await db.raw("CREATE INDEX IF NOT EXISTS outbox_dead ON outbox (seq) WHERE dead_at IS NOT NULL");
  },
};

/**
 * Pending rows by account: the relay takes a share of every account's rows per batch (relayOnce),
 * finding the accounts by skipping through this index rather than reading every pending row.
 */
export const outboxPendingByAccountMigration: Migration = {
  name: "000_outbox_with_waiting_by_account",
  async up(db) {
    await db.raw("CREATE INDEX IF NOT EXISTS outbox_pending_account ON outbox (account_id, seq) WHERE published_at IS NULL AND dead_at IS NULL");
  },
};

/** Every outbox migration, for a service's migration list. */
export const outboxMigrations: Migration[] = [outboxMigration, outboxTypedMigration, outboxTraceMigration, outboxDeadIndexMigration, outboxPendingByAccountMigration];

/** Messages over this size are refused at write time: NATS would never accept them. */
export const MAX_OUTBOX_MESSAGE_BYTES = MAX_MESSAGE_BYTES - 16 * 1024;

/**
 * The encoded size at most of a resource that each of its changes announces whole (a product, a
 * transaction, a distribution order row): half of what the bus carries, which leaves room for
 * what its message adds (ids, timestamps, a transaction's shipments). A larger one could be
 * stored but never announced, so it is that item's 400 instead of failing its whole batch.
 */
export const MAX_ANNOUNCED_RESOURCE_BYTES = 512 * 1024;

/** The item's problem when a resource of `size` bytes encoded is over MAX_ANNOUNCED_RESOURCE_BYTES. */
export function announcedSizeProblem(size: number, resource: string): FieldViolation | undefined {
  if (size <= MAX_ANNOUNCED_RESOURCE_BYTES) return undefined;
  return { path: "", message: `the ${resource} is too large to announce (${size} bytes encoded, at most ${MAX_ANNOUNCED_RESOURCE_BYTES})` };
}

export interface OutboxEntry<D extends DescMessage = DescMessage> {
  topic: Topic<D>;
  accountId: string;
  /** The id of the changed thing; with the subject's entity it names the aggregate. */
  aggregateId: string;
  message: MessageInitShape<D>;
}

/** One outbox entry, typed by its topic. */
export function outboxEntry<D extends DescMessage>(topic: Topic<D>, accountId: string, aggregateId: string, message: MessageInitShape<D>): OutboxEntry<D> {
  return { topic, accountId, aggregateId, message };
}

/** The encoded message of an entry (services check sizes per item with it before writing). */
export function encodeEntry(entry: OutboxEntry): Uint8Array {
  return toBinary(entry.topic.schema, create(entry.topic.schema, entry.message));
}

/** `sku:<id>`: the subject's entity and the aggregate's id. */
export const aggregateOf = (entry: Pick<OutboxEntry, "topic" | "aggregateId">) => `${entry.topic.subject.split(".")[2]}:${entry.aggregateId}`;

/** An outbox row ready to insert: its message encoded and its size checked. */
export interface EncodedEntry {
  id: string;
  subject: string;
  account_id: string;
  aggregate: string;
  payload: Uint8Array;
}

/** Encodes entries for enqueueEncoded; a message over MAX_OUTBOX_MESSAGE_BYTES is the change's 400. */
export function encodeEntries(entries: OutboxEntry[]): EncodedEntry[] {
  return entries.map((entry) => encodedEntry(entry, encodeEntry(entry)));
}

/**
 * The outbox row of an entry whose message is `payload`, encoded by the caller (spliced from
 * bytes it holds, say); a message over MAX_OUTBOX_MESSAGE_BYTES is the change's 400.
 */
export function encodedEntry(entry: Pick<OutboxEntry, "topic" | "accountId" | "aggregateId">, payload: Uint8Array): EncodedEntry {
  if (payload.length > MAX_OUTBOX_MESSAGE_BYTES) {
    throw invalid(`the change is too large to announce (${payload.length} bytes, at most ${MAX_OUTBOX_MESSAGE_BYTES})`);
  }
  return { id: randomUUID(), subject: entry.topic.subject, account_id: entry.accountId, aggregate: aggregateOf(entry), payload };
}

/**
 * Writes messages inside the caller's transaction, in order (unnest keeps it, so seq follows
 * `entries`), in one statement; returns their ids. Encoded in slices (mapInSlices): a batch's
 * 1000 messages in one go held the process's other requests waiting.
 */
export async function enqueue(tx: Knex.Transaction | Knex, entries: OutboxEntry[]): Promise<string[]> {
  return enqueueEncoded(tx, (await mapInSlices(entries, (entry) => encodeEntries([entry]))).flat());
}

/** enqueue of entries encoded beforehand (encodeEntries), for a writer that encodes while Postgres works. */
export async function enqueueEncoded(tx: Knex.Transaction | Knex, rows: EncodedEntry[]): Promise<string[]> {
  if (!rows.length) return [];
  // Payloads travel as one binary parameter (pg sends a Buffer as bytea without escaping), cut
  // back into rows by start and length: half the bytes of hex text, and nothing for either side
  // to encode or decode. A bytea[] parameter would be escaped element by element.
  let offset = 0;
  const starts = rows.map((r) => {
    const start = offset + 1; // substring counts from 1
    offset += r.payload.length;
    return start;
  });
  // The request's trace (none while tracing is off) travels with its messages to every consumer.
  const trace = traceHeaders();
  await tx.raw(
    `INSERT INTO outbox (id, subject, account_id, aggregate, payload, trace)
     SELECT id, subject, account_id, aggregate, substring(?::bytea FROM start FOR length), ?::jsonb
     FROM unnest(?::uuid[], ?::text[], ?::uuid[], ?::text[], ?::int[], ?::int[]) AS m(id, subject, account_id, aggregate, start, length)`,
    [
      Buffer.concat(rows.map((r) => r.payload)),
      trace.traceparent ? JSON.stringify(trace) : null,
      rows.map((r) => r.id),
      rows.map((r) => r.subject),
      rows.map((r) => r.account_id),
      rows.map((r) => r.aggregate),
      starts,
      rows.map((r) => r.payload.length),
    ],
  );
  return rows.map((r) => r.id);
}

/**
 * Writes the entries of every row a source reads page by page (`pageAfter` the last row of the
 * previous page, undefined for the first; an empty page ends it): one page in memory at a time,
 * whatever the table's size. For a migration that re-announces what a service stores (a backfill
 * for a consumer that started reading a subject after the stream forgot its messages). Answers
 * how many entries it wrote.
 */
export async function enqueueInPages<R>(tx: Knex.Transaction | Knex, pageAfter: (last: R | undefined) => Promise<R[]>, entriesOf: (rows: R[]) => Promise<OutboxEntry[]>): Promise<number> {
  let written = 0;
  for (let page = await pageAfter(undefined); page.length; page = await pageAfter(page[page.length - 1])) {
    written += (await enqueue(tx, await entriesOf(page))).length;
  }
  return written;
}

export interface RelayOptions {
  db: Db;
  bus: Bus;
  logger?: Logger;
  pollMs?: number;
  batchSize?: number;
  /** Published rows are deleted after this long. */
  retentionMs?: number;
  /** Attempts before a row is dead-lettered (kept, no longer retried, logged and counted). */
  maxAttempts?: number;
}

/**
 * Rows the relay claims at most per transaction. Another account's row committed while a claim
 * is being published waits for that claim, then leaves in the next (every account with pending
 * rows has a share of it): about two claims of a bulk load's rows. 100 rather than 500
 * (the fairness bench): that wait is a few hundred ms shorter at p99 while one account loads
 * 100,000 products, and the load's own messages are not slower to leave.
 */
export const RELAY_BATCH = 100;

/**
 * With the in-process bus a claim is also its consumers' batch (a row is published once every
 * consumer handled it), so claims of 100 make five consumer transactions where one did: the
 * queue's lag behind 10,000 writes went from 1.12× to 1.46× (the queue-lag bench). JetStream's
 * consumers fetch their own batches, whatever the claim.
 */
export const IN_PROCESS_RELAY_BATCH = 500;

/** Delay before the n-th retry of a row the bus refused: 0.2 s doubling to 60 s. */
export function backoffMs(attempts: number): number {
  return Math.min(60_000, 200 * 2 ** Math.max(0, attempts - 1));
}

/** Delay before the relay tries again during the n-th failed try of an outage: 0.2 s doubling to 10 s. */
export function outageWaitMs(tries: number): number {
  return Math.min(10_000, 200 * 2 ** Math.max(0, tries - 1));
}

/** A claim the bus refused as a whole because it is unreachable: the claim is rolled back, untouched. */
export class BusUnavailable extends Error {
  constructor(override readonly cause: Error) {
    super(`the bus is unavailable: ${cause.message}`);
  }
}

export interface RelayStats {
  published: number;
  refused: number;
  deadLettered: number;
  /** Claims given back untouched because the bus (or a consumer's database) was unavailable. */
  unavailable: number;
}

interface OutboxRow {
  id: string;
  seq: number;
  subject: string;
  account_id: string;
  aggregate: string;
  payload: Buffer;
  occurred_at: Date;
  attempts: number;
  trace: Record<string, string> | null;
}

export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = true;
  private lastCleanup = 0;
  /** Failed tries of the current outage (0: none). */
  private outage = 0;
  readonly stats: RelayStats = { published: 0, refused: 0, deadLettered: 0, unavailable: 0 };

  private readonly claimSize: number;

  constructor(private readonly options: RelayOptions) {
    this.claimSize = options.batchSize ?? (options.bus.kind === "in-process" ? IN_PROCESS_RELAY_BATCH : RELAY_BATCH);
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Called after a commit that wrote outbox rows, so they leave now rather than at the next poll. */
  kick(): void {
    // During an outage the next try is already scheduled: new rows wait with the others.
    if (this.stopped || this.outage) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      if (this.running) return void (this.again = true);
      let wait: number | undefined;
      this.running = this.drain()
        .then(() => {
          if (this.outage) this.options.logger?.info({ tries: this.outage }, "outbox relay: the bus is back");
          this.outage = 0;
        })
        .catch((error) => {
          if (!(error instanceof BusUnavailable)) return void this.options.logger?.error({ err: error }, "outbox relay failed");
          this.outage++;
          this.stats.unavailable++;
          wait = outageWaitMs(this.outage);
          // Once when it starts, then now and then: an outage can last hours.
          if (this.outage === 1 || this.outage % 30 === 0) this.options.logger?.warn({ err: error.cause, tries: this.outage }, "outbox relay: the bus is unavailable; rows wait for it");
        })
        .finally(() => {
          this.running = undefined;
          if (this.stopped) return;
          const now = this.again && wait === undefined;
          this.again = false;
          this.schedule(wait ?? (now ? 0 : (this.options.pollMs ?? 250)));
        });
    }, ms);
    this.timer.unref?.();
  }

  private async drain(): Promise<void> {
    while (!this.stopped && (await this.relayOnce()) > 0) {
      /* keep going while batches leave */
    }
    const retention = this.options.retentionMs ?? 24 * 3600_000;
    if (Date.now() - this.lastCleanup > 60_000) {
      this.lastCleanup = Date.now();
      await this.options.db("outbox")
        .whereNotNull("published_at")
        .where("published_at", "<", new Date(Date.now() - retention))
        .delete();
    }
  }

  /**
   * Publishes one batch of due rows and returns how many left. Every account with pending rows
   * gets a share of the batch (its oldest due rows, in seq order), so one account's bulk load of
   * 100,000 rows does not hold back another's single change; the accounts whose oldest pending
   * row is oldest come first when there are more accounts than rows in a batch. Rows are claimed
   * with SKIP LOCKED, so several relays (replicas) share the work without publishing a row
   * twice. Within the batch the first row of every aggregate is published at once (many
   * PubAcks in flight), then the second of each, and so on; a refused row holds back the later
   * rows of its aggregate, and only those.
   */
  async relayOnce(): Promise<number> {
    const { db, bus, logger } = this.options;
    return db.transaction(async (tx) => {
      const claimed: OutboxRow[] = (await tx.raw(CLAIM_FAIRLY, [this.claimSize, this.claimSize])).rows;
      if (!claimed.length) return 0;

      // An aggregate whose earliest pending row is not in this claim (waiting for its retry, or
      // being published by another relay) must wait: its later rows would overtake it.
      const aggregates = [...new Set(claimed.map((r) => r.aggregate))];
      const firstPending = new Map<string, number>(
        (
          await tx.raw(
            `SELECT aggregate, min(seq) AS seq FROM outbox
             WHERE aggregate = ANY(?) AND published_at IS NULL AND dead_at IS NULL GROUP BY aggregate`,
            [aggregates],
          )
        ).rows.map((r: { aggregate: string; seq: number }) => [r.aggregate, Number(r.seq)]),
      );
      const chains = new Map<string, OutboxRow[]>();
      for (const row of claimed) {
        const chain = chains.get(row.aggregate) ?? [];
        if (!chain.length && firstPending.get(row.aggregate) !== Number(row.seq)) continue;
        chains.set(row.aggregate, [...chain, row]);
      }

      const published: string[] = [];
      const refused: { row: OutboxRow; error: Error }[] = [];
      for (let wave = 0; ; wave++) {
        const rows = [...chains.values()].flatMap((chain) => (chain[wave] ? [chain[wave]] : []));
        if (!rows.length) break;
        // A traced change's publication is a span of its trace; consumers continue from it.
        const spans = rows.map((row) => (row.trace ? startSpan(`publish ${row.subject}`, SpanKind.PRODUCER, row.trace, { "messaging.system": bus.kind, "messaging.destination.name": row.subject, "messaging.message.id": row.id }) : undefined));
        const outcomes = await bus.publish(rows.map((row, i) => toBusMessage(row, spans[i] ? traceHeaders(spans[i]) : undefined)));
        outcomes.forEach((error, i) => endSpan(spans[i], error));
        outcomes.forEach((error, i) => {
          if (!error) return void published.push(rows[i].id);
          refused.push({ row: rows[i], error });
          chains.delete(rows[i].aggregate);
        });
      }

      // Nothing went out and the bus is unreachable, or every refusal says a database is down: an
      // outage, not these rows' fault. Rolling the claim back leaves them as they were.
      if (!published.length && refused.length && (await this.unavailable(refused.map((r) => r.error)))) throw new BusUnavailable(refused[0].error);
      if (published.length) await tx("outbox").whereIn("id", published).update({ published_at: tx.fn.now() });
      const maxAttempts = this.options.maxAttempts ?? 25;
      for (const { row, error } of refused) {
        const attempts = row.attempts + 1;
        const dead = attempts >= maxAttempts;
        const message = String(error.message ?? error).slice(0, 500);
        if (dead) logger?.error({ id: row.id, subject: row.subject, aggregate: row.aggregate, attempts, err: error }, "outbox row dead-lettered");
        else logger?.warn({ id: row.id, subject: row.subject, attempts, err: error }, "outbox publish refused; will retry");
        await tx("outbox")
          .where({ id: row.id })
          .update({ attempts, last_error: message, next_attempt_at: new Date(Date.now() + backoffMs(attempts)), dead_at: dead ? tx.fn.now() : null });
        this.stats.refused++;
        if (dead) this.stats.deadLettered++;
      }
      this.stats.published += published.length;
      return published.length;
    });
  }

  private async unavailable(errors: Error[]): Promise<boolean> {
    if (errors.every((e) => infrastructureKind(e) === "unavailable")) return true;
    return this.options.bus.ping().then(
      () => false,
      () => true,
    );
  }
}

/**
 * The claim of relayOnce (parameters: the batch size, twice). The accounts with pending rows are
 * found by skipping through outbox_pending_account (one index probe per account, however many
 * rows each has); each of the (at most batch size) accounts with the oldest pending rows then
 * gets an equal share of the batch, its oldest due rows in seq order. Rows of one account keep
 * seq order, and an aggregate belongs to one account, so per-aggregate order is as before.
 */
const CLAIM_FAIRLY = `
  WITH RECURSIVE accounts AS (
    (SELECT account_id, seq FROM outbox WHERE published_at IS NULL AND dead_at IS NULL ORDER BY account_id, seq LIMIT 1)
    UNION ALL
    SELECT later.account_id, later.seq FROM accounts, LATERAL (
      SELECT account_id, seq FROM outbox
      WHERE published_at IS NULL AND dead_at IS NULL AND account_id > accounts.account_id
      ORDER BY account_id, seq LIMIT 1
    ) later
  ), oldest AS (
    SELECT account_id FROM accounts ORDER BY seq LIMIT ?
  ), share AS (
    SELECT greatest(1, ceil(?::numeric / greatest(1, count(*))))::int AS rows FROM oldest
  )
  SELECT claimed.* FROM oldest, share, LATERAL (
    SELECT id, seq, subject, account_id, aggregate, payload, occurred_at, attempts, trace FROM outbox
    WHERE account_id = oldest.account_id AND published_at IS NULL AND dead_at IS NULL AND next_attempt_at <= now()
    ORDER BY seq LIMIT share.rows
    FOR UPDATE SKIP LOCKED
  ) claimed
  ORDER BY claimed.seq`;

function toBusMessage(row: OutboxRow, trace: Record<string, string> | undefined): BusMessage {
  return {
    ...(trace ? { trace } : {}),
    id: row.id,
    subject: row.subject,
    accountId: row.account_id,
    occurredAt: row.occurred_at.toISOString(),
    aggregate: row.aggregate,
    payload: new Uint8Array(row.payload),
  };
}
