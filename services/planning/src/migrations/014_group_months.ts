import type { Migration } from "@analytics/db";

/**
 * Group months (docs/planning.md "Sales rollups"): the monthly answers' sales figures summed per
 * account, grouping (1 season, the only one kept; a SKU without one in group ''),
 * group, SKU status, activePlanning, brand ('=' and its name in lower case, '' for none: the
 * breakdown's brand filter), channel and month: `stored` and `plan` (each SKU month's
 * rounded to 3 decimals first, as the answers round them), `actual` (net units) and `live` (SKU
 * months with any of a stored plan, last year's lines or this month's lines: a group with one
 * shows in the answers). The replica's consumer and the sales-plans writes keep them
 * (repository/group-months.ts). Filled here from the per-SKU cells and the stored plans, with the
 * same figures as cellFigures in that file.
 */
const FILL_TIMEOUT_MS = 3_600_000;
// Every consumer batch updates rows of these tables in place: room left on each page
// (fillfactor) keeps those updates on the page (HOT), without new index entries.

export const groupMonths: Migration = {
  name: "014_group_months",
  async up(db) {
    await db.raw(`
      CREATE TABLE group_months (
        account_id uuid NOT NULL,
        grouping smallint NOT NULL,
        g text NOT NULL,
        status int NOT NULL,
        active_planning boolean NOT NULL,
        brand text NOT NULL,
        channel smallint NOT NULL,
        month date NOT NULL,
        stored numeric NOT NULL,
        plan numeric NOT NULL,
        actual bigint NOT NULL,
        live bigint NOT NULL,
        PRIMARY KEY (account_id, grouping, month, g, status, active_planning, brand, channel)
      ) WITH (fillfactor = 70);

      INSERT INTO group_months
        SELECT f.account_id, gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), f.channel, f.month, sum(f.stored), sum(f.plan), sum(f.actual), sum(f.live)
        FROM (
          SELECT x.account_id, x.sku_id, x.channel, x.month,
            CASE WHEN x.volume IS NOT NULL THEN round(x.volume, 3) ELSE 0 END AS stored,
            coalesce(round(CASE WHEN x.volume IS NOT NULL THEN x.volume WHEN x.ly_lines > 0 THEN greatest(0, x.ly_units) * (1 + coalesce(a.sales_plan_growth, 0)) END, 3), 0) AS plan,
            CASE WHEN x.lines > 0 THEN x.units ELSE 0 END AS actual,
            (x.volume IS NOT NULL OR x.lines > 0 OR x.ly_lines > 0)::int AS live
          FROM (
            SELECT c.account_id, c.sku_id, c.channel, c.month, p.volume, c.units, c.lines, c.ly_units, c.ly_lines
            FROM sku_months c LEFT JOIN sales_plans p ON p.account_id = c.account_id AND p.sku_id = c.sku_id AND p.channel = c.channel AND p.month = c.month AND p.volume IS NOT NULL
            UNION ALL
            SELECT p.account_id, p.sku_id, p.channel::smallint, p.month, p.volume, NULL, NULL, NULL, NULL FROM sales_plans p
            WHERE p.volume IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sku_months c WHERE c.account_id = p.account_id AND c.sku_id = p.sku_id AND c.channel = p.channel AND c.month = p.month)
          ) x LEFT JOIN accounts a ON a.account_id = x.account_id
        ) f
        JOIN skus s ON s.account_id = f.account_id AND s.sku_id = f.sku_id
        CROSS JOIN LATERAL (VALUES (1::smallint, coalesce(s.season, ''))) AS gr(grouping, g)
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
    `).options({ query_timeout: FILL_TIMEOUT_MS });
    await db.raw("ANALYZE group_months").options({ query_timeout: FILL_TIMEOUT_MS });
  },
  async down(db) {
    await db.raw("DROP TABLE group_months");
  },
};
