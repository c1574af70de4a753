import type { Migration } from "@analytics/db";

/**
 * changed_groups now also records groups whose other inputs changed with no row left to say so
 * (a cancelled transaction's sales, a SKU with stock or sales that moved between groups), which
 * the breakdowns' updatedSince reads. Planned volumes' updatedSince must keep returning only the
 * groups whose PO or draft-PO volume changed (the specification: "stock-only changes are not
 * tracked"), so each row says whether it is about that volume. Rows written before are (they
 * were all PO lines'); a writer that does not say is not.
 *
 * A SKU that changes group looks up whether it has sales or distribution orders by its key (else
 * its sku code) and stock-trigger minimums by its id: indexes for those look-ups.
 */
export const changedGroupsPoVolume: Migration = {
  name: "007_changed_groups_po_volume",
  async up(db) {
    await db.raw(`
      ALTER TABLE changed_groups ADD COLUMN po_volume boolean NOT NULL DEFAULT true;
      ALTER TABLE changed_groups ALTER COLUMN po_volume SET DEFAULT false;
      CREATE INDEX sales_lines_sku ON sales_lines (account_id, sku) WHERE key IS NULL;
      CREATE INDEX distribution_orders_key ON distribution_orders (account_id, key, sku);
      CREATE INDEX stock_trigger_minimums_sku ON stock_trigger_minimums (account_id, sku_id);
    `);
  },
  async down(db) {
    await db.raw("DROP INDEX sales_lines_sku, distribution_orders_key, stock_trigger_minimums_sku; ALTER TABLE changed_groups DROP COLUMN po_volume");
  },
};
