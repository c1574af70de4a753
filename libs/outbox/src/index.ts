import { randomUUID } from "node:crypto";
import type { Knex } from "knex";
import type { Logger } from "pino";
import type { Bus, BusMessage } from "@analytics/bus";
import type { Db, Migration } from "@analytics/db";
import { stringifyRest } from "@analytics/contracts";

/**
 * Transactional outbox: a change and the message announcing it are written in one transaction;
 * the relay publishes rows afterwards, so a message is never lost when the bus is down and never
 * sent for a change that rolled back.
 */
export const outboxMigration: Migration = {
  name: "000_outbox",
  async up(db) {
    await db.schema.createTable("outbox", (t) => {
      t.uuid("id").primary();
      // Publication order: the order in which changes committed their rows.
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

export interface OutboxMessage {
  subject: string;
  accountId: string;
  data: unknown;
}

/** Writes messages inside the caller's transaction; returns their ids. */
export async function enqueue(tx: Knex.Transaction | Knex, messages: OutboxMessage[]): Promise<string[]> {
  if (!messages.length) return [];
  const rows = messages.map((m) => ({
    id: randomUUID(),
    subject: m.subject,
    account_id: m.accountId,
    data: stringifyRest(m.data),
  }));
  await tx("outbox").insert(rows);
  return rows.map((r) => r.id);
}

export interface RelayOptions {
  db: Db;
  bus: Bus;
  logger?: Logger;
  pollMs?: number;
  batchSize?: number;
  /** Published rows are deleted after this long. */
  retentionMs?: number;
}

/** Delay before the n-th retry of a row the bus refused: 0.2 s doubling to 60 s. */
export function backoffMs(attempts: number): number {
  return Math.min(60_000, 200 * 2 ** Math.max(0, attempts - 1));
}

export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = true;
  private lastCleanup = 0;

  constructor(private readonly options: RelayOptions) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Called after a commit that wrote outbox rows, so they leave now rather than at the next poll. */
  kick(): void {
    if (this.stopped) return;
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
      this.running = this.drain()
        .catch((error) => this.options.logger?.error({ err: error }, "outbox relay failed"))
        .finally(() => {
          this.running = undefined;
          if (this.stopped) return;
          const now = this.again;
          this.again = false;
          this.schedule(now ? 0 : (this.options.pollMs ?? 250));
        });
    }, ms);
    this.timer.unref?.();
  }

  private async drain(): Promise<void> {
    while (!this.stopped && (await this.relayOnce()) > 0) {
      /* keep going while full batches leave */
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
   * Publishes one batch of due rows in order and returns how many left. Rows are locked with
   * SKIP LOCKED so several relays (replicas) share the work without publishing a row twice; a row
   * the bus refuses stops the batch (later rows wait, keeping order) and is retried with backoff.
   */
  async relayOnce(): Promise<number> {
    const { db, bus, logger } = this.options;
    return db.transaction(async (tx) => {
      const rows: { id: string; subject: string; account_id: string; data: unknown; occurred_at: Date; attempts: number }[] =
        await tx("outbox")
          .select("id", "subject", "account_id", "data", "occurred_at", "attempts")
          .whereNull("published_at")
          .where("next_attempt_at", "<=", tx.fn.now())
          .orderBy("seq")
          .limit(this.options.batchSize ?? 100)
          .forUpdate()
          .skipLocked();
      const published: string[] = [];
      for (const row of rows) {
        const message: BusMessage = {
          id: row.id,
          subject: row.subject,
          accountId: row.account_id,
          occurredAt: row.occurred_at.toISOString(),
          data: row.data,
        };
        try {
          await bus.publish(message);
          published.push(row.id);
        } catch (error) {
          const attempts = row.attempts + 1;
          logger?.warn({ err: error, id: row.id, subject: row.subject, attempts }, "outbox publish failed; will retry");
          await tx("outbox")
            .where({ id: row.id })
            .update({
              attempts,
              last_error: String((error as Error)?.message ?? error).slice(0, 500),
              next_attempt_at: new Date(Date.now() + backoffMs(attempts)),
            });
          break;
        }
      }
      if (published.length) {
        await tx("outbox").whereIn("id", published).update({ published_at: tx.fn.now() });
      }
      return published.length === rows.length ? published.length : 0;
    });
  }
}
