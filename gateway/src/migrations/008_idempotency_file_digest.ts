import type { Migration } from "@analytics/db";

/**
 * The digest of an upload's file (POST /imports), kept with its answer: the file streams past the
 * claim, so a repeat under the key is told the same request only when its file hashes the same.
 */
export const idempotencyFileDigest: Migration = {
  name: "008_idempotency_file_digest",
  async up(db) {
    await db.raw("ALTER TABLE idempotency_keys ADD COLUMN file_digest text");
  },
};
