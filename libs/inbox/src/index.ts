import type { BusMessage } from "@analytics/bus";
import type { Db, Migration, Tx } from "@analytics/db";

/**
 * Consumer-side de-duplication: a message's id is recorded in the same transaction as its effect,
 * so a redelivered message (the bus delivers at least once) changes nothing the second time.
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

/** Runs `effect` once per message id; answers false (doing nothing) for a message already processed. */
export async function processOnce(db: Db, message: BusMessage, effect: (tx: Tx) => Promise<void>): Promise<boolean> {
  return db.transaction(async (tx) => {
    const inserted = await tx("inbox")
      .insert({ message_id: message.id, subject: message.subject })
      .onConflict("message_id")
      .ignore()
      .returning("message_id");
    if (inserted.length === 0) return false;
    await effect(tx);
    return true;
  });
}
