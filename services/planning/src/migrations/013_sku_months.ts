import type { Migration } from "@analytics/db";

/**
 * Per-SKU sales cells (docs/planning.md "Sales rollups"): sales_months matched to the SKUs that
 * the sale names (by key, sku or EAN, as the answers matched them when read), per account, month,
 * SKU and channel: `units` and `lines` of the month, and `ly_units` and `ly_lines` of the same
 * month a year before (the baseline plan's input), so an answer reads one row per SKU, channel
 * and month instead of matching and re-aggregating sales_months. A line that names several SKUs
 * (a shared sku code) counts for each, as before. sku_month_sales is their definition (the
 * fill, a recompute and the drift check aggregate it); the replica's consumer keeps the cells
 * with the sales rollups and recomputes a SKU's when what names it changes. Filled here.
 */
const FILL_TIMEOUT_MS = 3_600_000;
// Every consumer batch updates rows of these tables in place: room left on each page
// (fillfactor) keeps those updates on the page (HOT), without new index entries.

export const skuMonths: Migration = {
  name: "013_sku_months",
  async up(db) {
    await db.raw(`
      CREATE INDEX skus_sku ON skus (account_id, sku) WHERE sku IS NOT NULL;
      -- A SKU's sales by what names it, when a SKU arrives or is renamed.
      CREATE INDEX sales_months_ref ON sales_months (account_id, ref_kind, ref);

      CREATE VIEW sku_month_sales AS
        SELECT m.account_id, m.month, s.sku_id, m.channel, m.units, m.lines
        FROM sales_months m JOIN skus s ON s.account_id = m.account_id AND s.key = m.ref WHERE m.ref_kind = 1
        UNION ALL SELECT m.account_id, m.month, s.sku_id, m.channel, m.units, m.lines
        FROM sales_months m JOIN skus s ON s.account_id = m.account_id AND s.sku = m.ref WHERE m.ref_kind = 2
        UNION ALL SELECT m.account_id, m.month, s.sku_id, m.channel, m.units, m.lines
        FROM sales_months m JOIN skus s ON s.account_id = m.account_id AND s.ean = m.ref WHERE m.ref_kind = 3;

      CREATE TABLE sku_months (
        account_id uuid NOT NULL,
        month date NOT NULL,
        sku_id uuid NOT NULL,
        channel smallint NOT NULL,
        units bigint NOT NULL,
        lines bigint NOT NULL,
        ly_units bigint NOT NULL,
        ly_lines bigint NOT NULL,
        PRIMARY KEY (account_id, month, sku_id, channel)
      ) WITH (fillfactor = 70);
      CREATE INDEX sku_months_sku ON sku_months (account_id, sku_id);

      INSERT INTO sku_months
        SELECT account_id, month, sku_id, channel, sum(units), sum(lines), sum(ly_units), sum(ly_lines) FROM (
          SELECT account_id, month, sku_id, channel, units, lines, 0 AS ly_units, 0 AS ly_lines FROM sku_month_sales
          UNION ALL SELECT account_id, (month + interval '1 year')::date, sku_id, channel, 0, 0, units, lines FROM sku_month_sales) x
        GROUP BY 1, 2, 3, 4;
    `).options({ query_timeout: FILL_TIMEOUT_MS });
    await db.raw("ANALYZE sku_months").options({ query_timeout: FILL_TIMEOUT_MS });
  },
  async down(db) {
    await db.raw("DROP TABLE sku_months; DROP VIEW sku_month_sales; DROP INDEX skus_sku, sales_months_ref");
  },
};
