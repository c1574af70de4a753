import type { BusMessage } from "@analytics/bus";
import type { Db, Migration, Tx } from "@analytics/db";

/**
 * Consumer-side de-duplication: a message's id is recorded, per consumer, in the same
 * transaction as its effect, so a redelivered message (the bus delivers at least once) changes
 * nothing the second time, and two consumers of one service each see every message.
 */
export const inboxMigration: Migration = {
  name: "000_inbox",
  async up(db) {
    await db.schema.createTable("inbox", (t) => {
      t.text("message_id").primary();
      t.text("subject").notNullable();
      t.timestamp("received_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    });
  },
  async down(db) {
    await db.schema.dropTable("inbox");
  },
};

/** The inbox keyed by (consumer, message id), with an index for pruning. */
export const inboxPerConsumerMigration: Migration = {
  name: "000_inbox_per_consumer",
  async up(db) {
    await db.raw(`
      ALTER TABLE inbox ADD COLUMN consumer text NOT NULL DEFAULT '';
      ALTER TABLE inbox DROP CONSTRAINT inbox_pkey;
      ALTER TABLE inbox ADD PRIMARY KEY (consumer, message_id);
      CREATE INDEX inbox_received ON inbox (received_at);
    `);
  },
};

/** Both inbox migrations, for a service's migration list. */
export const inboxMigrations: Migration[] = [inboxMigration, inboxPerConsumerMigration];

/**
 * Runs `effect` once for the messages of a batch that `consumer` has not processed yet, in one
 * transaction with their inbox rows. A message repeated within the batch counts once. Returns
 * the messages that were new.
 */
export async function processBatchOnce(
  db: Db,
  consumer: string,
  messages: BusMessage[],
  effect: (tx: Tx, fresh: BusMessage[]) => Promise<void>,
): Promise<BusMessage[]> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.raw(
      `INSERT INTO inbox (consumer, message_id, subject)
       SELECT ?, id, subject FROM unnest(?::text[], ?::text[]) AS m(id, subject)
       ON CONFLICT (consumer, message_id) DO NOTHING
       RETURNING message_id`,
      [consumer, messages.map((m) => m.id), messages.map((m) => m.subject)],
    );
    const inserted = new Set<string>(rows.map((r: { message_id: string }) => r.message_id));
    const fresh = messages.filter((m) => inserted.delete(m.id));
    if (fresh.length) await effect(tx, fresh);
    return fresh;
  });
}

/** Runs `effect` once per (consumer, message id); answers false (doing nothing) for a repeat. */
export async function processOnce(db: Db, consumer: string, message: BusMessage, effect: (tx: Tx) => Promise<void>): Promise<boolean> {
  const fresh = await processBatchOnce(db, consumer, [message], (tx) => effect(tx));
  return fresh.length > 0;
}

/**
 * How long a consumer remembers a message: past the stream's max_age (7 days by default) no
 * message is delivered again, and the outbox has stopped retrying it.
 */
export const INBOX_RETENTION_MS = 8 * 24 * 3600_000;

/** Forgets inbox rows older than `olderThanMs` (INBOX_RETENTION_MS by default). */
export async function pruneInbox(db: Db, olderThanMs = INBOX_RETENTION_MS): Promise<number> {
  return db("inbox").where("received_at", "<", new Date(Date.now() - olderThanMs)).delete();
}
