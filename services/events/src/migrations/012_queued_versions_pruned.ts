import type { Migration } from "@analytics/db";

/**
 * When each version got its entry, so that queued_versions is pruned like the inbox (a version
 * older than the stream's retention is never delivered again): without it the table grew by a row
 * for every product, order and trigger write, forever. A BRIN index: the column only grows, and
 * each insert costs it next to nothing. Rows from before take the migration's time.
 */
export const queuedVersionsPruned: Migration = {
  name: "012_queued_versions_pruned",
  async up(db) {
    await db.raw(`
      ALTER TABLE queued_versions ADD COLUMN queued_at timestamptz NOT NULL DEFAULT now();
      CREATE INDEX queued_versions_queued_at ON queued_versions USING brin (queued_at);
    `);
  },
  async down(db) {
    await db.raw("ALTER TABLE queued_versions DROP COLUMN queued_at");
  },
};
