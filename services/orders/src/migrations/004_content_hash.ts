import type { Migration } from "@analytics/db";

/**
 * Purchase orders keep a SHA-256 of their writable content instead of the content itself (less to
 * write per order). Orders stored before have no hash: their next re-send counts as a change once.
 */
export const purchaseOrderContentHash: Migration = {
  name: "004_content_hash",
  async up(db) {
    await db.raw("ALTER TABLE purchase_orders ADD COLUMN content_hash text NOT NULL DEFAULT ''");
    await db.raw("ALTER TABLE purchase_orders ALTER COLUMN content_hash DROP DEFAULT");
    await db.raw("ALTER TABLE purchase_orders DROP COLUMN content");
  },
};
