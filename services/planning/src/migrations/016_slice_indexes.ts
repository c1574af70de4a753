import type { Migration } from "@analytics/db";

/**
 * Indexes for a whole answer's slices (repository/answers.ts nextSlice): each slice reads its
 * SKUs' sales days (the warehouse weights' year of shipments, by what names the SKU), PO lines and
 * cells of the window's months through an index, rather than the account's whole year or window
 * once per slice.
 */
const BUILD_TIMEOUT_MS = 3_600_000;

export const sliceIndexes: Migration = {
  name: "016_slice_indexes",
  async up(db) {
    await db.raw(`
      CREATE INDEX sales_days_ref ON sales_days (account_id, ref, day);
      -- A SKU's cells by month too, so that a slice's months are index conditions, not a filter over every SKU's.
      CREATE INDEX sku_months_sku_month ON sku_months (account_id, sku_id, month);
      DROP INDEX sku_months_sku;
      CREATE INDEX purchase_order_lines_sku ON purchase_order_lines (account_id, sku_id);
    `).options({ query_timeout: BUILD_TIMEOUT_MS });
  },
  async down(db) {
    await db.raw("CREATE INDEX sku_months_sku ON sku_months (account_id, sku_id); DROP INDEX sales_days_ref, purchase_order_lines_sku, sku_months_sku_month");
  },
};
