import type { Knex } from "knex";
import { eventually } from "./wait";

/**
 * Runs `read` while `write` is held uncommitted in a transaction that first took the schema's
 * account_versions exclusively, and commits the write once a statement of `read` waits for that
 * table: the moment a version read apart from the data would see the write while the data does
 * not (libs/rpc data-version.ts: the tag must never be newer than the data). What `read` answers
 * then shows whether its version and its data came from one snapshot, or the version before.
 */
export async function readWhileAWriteCommits<T>(db: Knex, write: (tx: Knex.Transaction) => Promise<unknown>, read: () => Promise<T>): Promise<T> {
  const tx = await db.transaction();
  try {
    await tx.raw("LOCK TABLE account_versions IN ACCESS EXCLUSIVE MODE");
    await write(tx);
    const reading = read();
    // Awaited below; a failure before then must not go unhandled.
    reading.catch(() => undefined);
    await eventually(
      async () => (await db.raw("SELECT 1 FROM pg_locks WHERE relation = 'account_versions'::regclass AND NOT granted")).rows.length > 0,
      10_000,
      "a statement of the read waiting for account_versions",
    );
    await tx.commit();
    return await reading;
  } finally {
    if (!tx.isCompleted()) await tx.rollback();
  }
}
