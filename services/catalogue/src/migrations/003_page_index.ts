import type { Migration } from "@analytics/db";

/**
 * Pages in creation order reach page N by an index-only scan of (account_id, seq) with the id
 * included, and the total is counted on it too (libs/db pageOfIds).
 */
export const productPageIndex: Migration = {
  name: "003_page_index",
  async up(db) {
    await db.raw("CREATE INDEX products_account_seq_id ON products (account_id, seq) INCLUDE (id)");
    await db.raw("DROP INDEX products_account_seq");
  },
};
