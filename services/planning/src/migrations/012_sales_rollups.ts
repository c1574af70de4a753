import type { Migration } from "@analytics/db";

/**
 * Sales rollups (docs/planning.md "Sales rollups"): net units per account, item as the sale names
 * it (ref_kind 1 key, 2 sku, 3 ean, with ref its value: the first of the three the line has, as
 * the answers match it), channel (1 D2C, 2 B2B; none counts as D2C), warehouse (external id, ""
 * unshipped) and day in the account's timezone (sales_days, with `shipped`: the units of its
 * positive lines, the by-warehouse split's weights), and the same without the warehouse per month
 * (sales_months); `lines` counts the sale lines summed: a row of 0 lines is as if absent (a row
 * that all its lines left stays, at 0, and the answers skip it). The replica's consumer keeps them with each batch of transactions (plus the new
 * lines, minus the replaced ones) and recomputes an account's when its timezone changes.
 * sales_line_days is a sales line as the rollups count it: their definition, which the rebuild and
 * the drift check aggregate. Filled here from the lines already stored.
 */
/**
 * The driver's read limit for filling the rollups: the migration runs without a statement timeout,
 * but the pool's driver gives up a second after a request's; 3,000,000 lines take minutes.
 */
const FILL_TIMEOUT_MS = 3_600_000;

export const salesRollups: Migration = {
  name: "012_sales_rollups",
  async up(db) {
    await db.raw(`
      CREATE VIEW sales_line_days AS
        SELECT l.account_id,
          (CASE WHEN l.key IS NOT NULL THEN 1 WHEN l.sku IS NOT NULL THEN 2 ELSE 3 END)::smallint AS ref_kind,
          coalesce(l.key, l.sku, l.ean) AS ref,
          (CASE WHEN l.channel = 2 THEN 2 ELSE 1 END)::smallint AS channel,
          l.external_warehouse_id,
          (l.sold_at AT TIME ZONE coalesce(a.timezone, 'UTC'))::date AS day,
          l.units, greatest(l.units, 0) AS shipped, 1 AS lines
        FROM sales_lines l
        LEFT JOIN accounts a ON a.account_id = l.account_id AND a.timezone IN (SELECT name FROM timezone_names)
        WHERE coalesce(l.key, l.sku, l.ean) IS NOT NULL;

      CREATE TABLE sales_days (
        account_id uuid NOT NULL,
        day date NOT NULL,
        ref_kind smallint NOT NULL,
        ref text NOT NULL,
        channel smallint NOT NULL,
        external_warehouse_id text NOT NULL,
        units bigint NOT NULL,
        shipped bigint NOT NULL,
        lines bigint NOT NULL,
        PRIMARY KEY (account_id, day, ref_kind, ref, channel, external_warehouse_id)
      );
      CREATE TABLE sales_months (
        account_id uuid NOT NULL,
        month date NOT NULL,
        ref_kind smallint NOT NULL,
        ref text NOT NULL,
        channel smallint NOT NULL,
        units bigint NOT NULL,
        lines bigint NOT NULL,
        PRIMARY KEY (account_id, month, ref_kind, ref, channel)
      );

      INSERT INTO sales_days
        SELECT account_id, day, ref_kind, ref, channel, external_warehouse_id, sum(units), sum(shipped), count(*)
        FROM sales_line_days GROUP BY 1, 2, 3, 4, 5, 6;
      INSERT INTO sales_months
        SELECT account_id, date_trunc('month', day)::date, ref_kind, ref, channel, sum(units), sum(lines)
        FROM sales_days GROUP BY 1, 2, 3, 4, 5;
    `).options({ query_timeout: FILL_TIMEOUT_MS });
    // Statistics now: the answers' plans need them before autovacuum would get to it.
    await db.raw("ANALYZE sales_days; ANALYZE sales_months").options({ query_timeout: FILL_TIMEOUT_MS });
  },
  async down(db) {
    await db.raw("DROP TABLE sales_months, sales_days; DROP VIEW sales_line_days");
  },
};
