import type { Migration } from "@analytics/db";

/** Deep pages and counts by index-only scans (libs/db pageOfIds): the ids are in the indexes. */
export const eventPageIndexes: Migration = {
  name: "002_page_indexes",
  async up(db) {
    await db.raw("CREATE INDEX events_account_seq_id ON events (account_id, seq) INCLUDE (id, completed_at, failed_at)");
    await db.raw("CREATE INDEX events_account_type_seq_id ON events (account_id, event_type, seq) INCLUDE (id, completed_at, failed_at)");
    await db.raw("DROP INDEX events_account_seq");
    await db.raw("DROP INDEX events_account_type_seq");
  },
};
