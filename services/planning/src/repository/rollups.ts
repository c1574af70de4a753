import type { Tx } from "@analytics/db";
import { addToGroupMonths, recomputeGroupMonths } from "./group-months";
import { accountTimezone, json, RECOMPUTE_TIMEOUT_MS } from "./sql";

/** A stored sales line as the rollups count it (its instant as text: exact, to the microsecond). */
export type SalesLineFigures = { account_id: string; key: string | null; sku: string | null; ean: string | null; channel: number; external_warehouse_id: string; sold_at: string; units: number };

/**
 * Month rows of sales_months' shape (account_id, month, ref_kind, ref, channel, units, lines) as
 * the per-SKU cells count them: for every SKU each names (by key, sku or EAN, ref_kind 1, 2, 3).
 */
const namedSkus = (rows: string) =>
  [[1, "key"], [2, "sku"], [3, "ean"]]
    .map(([kind, column]) => `SELECT x.account_id, x.month, s.sku_id, x.channel, x.units, x.lines FROM ${rows} x JOIN skus s ON s.account_id = x.account_id AND s.${column} = x.ref WHERE x.ref_kind = ${kind}`)
    .join(" UNION ALL ");

/**
 * SKU month figures `k` (account_id, month, sku_id, channel, units, lines) as changes of the per-SKU
 * cells (sku_months, migration 013): in their month, and as the baseline of the month a year
 * later; one row per cell, in key order.
 */
const skuMonthChanges = (k: string) => `WITH k AS (${k})
       SELECT account_id, month, sku_id, channel, sum(units) AS units, sum(lines) AS lines, sum(ly_units) AS ly_units, sum(ly_lines) AS ly_lines FROM (
         SELECT account_id, month, sku_id, channel, units, lines, 0 AS ly_units, 0 AS ly_lines FROM k
         UNION ALL SELECT account_id, (month + interval '1 year')::date, sku_id, channel, 0, 0, units, lines FROM k) x
       GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`;

/** Adds cell changes `changes` (skuMonthChanges) to sku_months, answering each cell as it is now. */
const addToSkuMonths = (changes: string) => `INSERT INTO sku_months AS c (account_id, month, sku_id, channel, units, lines, ly_units, ly_lines)
       SELECT * FROM ${changes}
       ON CONFLICT (account_id, month, sku_id, channel) DO UPDATE
         SET units = c.units + excluded.units, lines = c.lines + excluded.lines, ly_units = c.ly_units + excluded.ly_units, ly_lines = c.ly_lines + excluded.ly_lines
       RETURNING c.*`;

/**
 * Cells `now` (sku_months rows as they are after `changes` were added) as SKU months for
 * addToGroupMonths: each now (+1) and as it was before the change (-1), with its stored plan.
 */
const cellsBeforeAndAfter = (now: string, changes: string) => `SELECT c.account_id, c.sku_id, c.channel, c.month, v.sign, p.volume,
         c.units - CASE WHEN v.sign = -1 THEN d.units ELSE 0 END AS units, c.lines - CASE WHEN v.sign = -1 THEN d.lines ELSE 0 END AS lines,
         c.ly_units - CASE WHEN v.sign = -1 THEN d.ly_units ELSE 0 END AS ly_units, c.ly_lines - CASE WHEN v.sign = -1 THEN d.ly_lines ELSE 0 END AS ly_lines
       FROM ${now} c JOIN ${changes} d USING (account_id, month, sku_id, channel) CROSS JOIN (VALUES (1), (-1)) AS v(sign)
       LEFT JOIN sales_plans p ON p.account_id = c.account_id AND p.sku_id = c.sku_id AND p.channel = c.channel AND p.month = c.month AND p.volume IS NOT NULL`;

/**
 * Adds sales lines to the rollups (sales_days and sales_months, migration 012, and the per-SKU
 * cells of sku_months, migration 013), or takes them off:
 * `sign` -1 for the lines a transaction's newer version replaced or its cancellation removed. One
 * statement for the batch: the lines are grouped by the rollups' keys (the day in the account's
 * timezone), a group that nets to nothing is skipped, and the rest added to the stored sums in key
 * order (so concurrent batches lock rows in the same order). A row left with no lines stays, at 0:
 * the answers skip it.
 */
export async function addToSalesRollups(tx: Tx, lines: (Omit<SalesLineFigures, "sold_at"> & { sold_at: string; sign: 1 | -1 })[]): Promise<void> {
  if (!lines.length) return;
  await tx.raw(
    `WITH l AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, key text, sku text, ean text, channel int, external_warehouse_id text, sold_at timestamptz, units int, sign int)),
     -- Each account's timezone, looked up once.
     tz AS (SELECT t.account_id, ${accountTimezone("t.account_id")} AS tz FROM (SELECT DISTINCT account_id FROM l) t),
     x AS (SELECT l.*, tz.tz FROM l JOIN tz USING (account_id)),
     d AS (
       SELECT account_id, (sold_at AT TIME ZONE tz)::date AS day,
         (CASE WHEN key IS NOT NULL THEN 1 WHEN sku IS NOT NULL THEN 2 ELSE 3 END)::smallint AS ref_kind, coalesce(key, sku, ean) AS ref,
         (CASE WHEN channel = 2 THEN 2 ELSE 1 END)::smallint AS channel, external_warehouse_id,
         sum(sign * units) AS units, sum(sign * greatest(units, 0)) AS shipped, sum(sign) AS lines
       FROM x WHERE coalesce(key, sku, ean) IS NOT NULL
       GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(sign * units) <> 0 OR sum(sign * greatest(units, 0)) <> 0 OR sum(sign) <> 0),
     md AS (
       SELECT account_id, date_trunc('month', day)::date AS month, ref_kind, ref, channel, sum(units) AS units, sum(lines) AS lines FROM d
       GROUP BY 1, 2, 3, 4, 5 HAVING sum(units) <> 0 OR sum(lines) <> 0),
     m AS (
       INSERT INTO sales_months AS m (account_id, month, ref_kind, ref, channel, units, lines)
       SELECT * FROM md ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, month, ref_kind, ref, channel) DO UPDATE SET units = m.units + excluded.units, lines = m.lines + excluded.lines),
     cd AS (${skuMonthChanges(namedSkus("md"))}),
     c AS (${addToSkuMonths("cd")}),
     g AS (${addToGroupMonths(cellsBeforeAndAfter("c", "cd"))})
     INSERT INTO sales_days AS s (account_id, day, ref_kind, ref, channel, external_warehouse_id, units, shipped, lines)
     SELECT * FROM d ORDER BY 1, 2, 3, 4, 5, 6
     ON CONFLICT (account_id, day, ref_kind, ref, channel, external_warehouse_id) DO UPDATE
       SET units = s.units + excluded.units, shipped = s.shipped + excluded.shipped, lines = s.lines + excluded.lines`,
    [json(lines)],
  );
}


/**
 * Recomputes the accounts' sales rollups from their sales lines (sales_line_days, migration 012),
 * in the caller's transaction: a timezone change re-dates every sale. Runs with RECOMPUTE_TIMEOUT_MS
 * for the rest of that transaction.
 */
export async function recomputeSalesRollups(tx: Tx, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  await tx.raw(`SET LOCAL statement_timeout = ${RECOMPUTE_TIMEOUT_MS}`);
  for (const statement of [
    "DELETE FROM sales_days WHERE account_id = ANY(?::uuid[])",
    "DELETE FROM sales_months WHERE account_id = ANY(?::uuid[])",
    `INSERT INTO sales_days SELECT account_id, day, ref_kind, ref, channel, external_warehouse_id, sum(units), sum(shipped), count(*)
     FROM sales_line_days WHERE account_id = ANY(?::uuid[]) GROUP BY 1, 2, 3, 4, 5, 6`,
    `INSERT INTO sales_months SELECT account_id, date_trunc('month', day)::date, ref_kind, ref, channel, sum(units), sum(lines)
     FROM sales_days WHERE account_id = ANY(?::uuid[]) GROUP BY 1, 2, 3, 4, 5`,
    "DELETE FROM sku_months WHERE account_id = ANY(?::uuid[])",
    `INSERT INTO sku_months ${skuMonthChanges("SELECT * FROM sku_month_sales WHERE account_id = ANY(?::uuid[])")}`,
  ])
    await tx.raw(statement, [accountIds]).options({ query_timeout: RECOMPUTE_TIMEOUT_MS + 1_000 });
  await recomputeGroupMonths(tx, accountIds);
}

/** The timezone each account's sales are dated in now (accountTimezone), and its salesPlanGrowth as text. */
export async function salesSettings(tx: Tx, accountIds: string[]): Promise<Map<string, { tz: string; growth: string | null }>> {
  const { rows } = await tx.raw(
    `SELECT a AS account_id, ${accountTimezone("a")} AS tz, (SELECT g.sales_plan_growth::text FROM accounts g WHERE g.account_id = a) AS growth FROM unnest(?::uuid[]) AS a`,
    [accountIds],
  );
  return new Map(rows.map((r: { account_id: string; tz: string; growth: string | null }) => [r.account_id, { tz: r.tz, growth: r.growth }]));
}


/**
 * Matches the sales rollups to these SKUs again (new to the replica, or named by another key, sku
 * or EAN than before): their per-SKU cells are recomputed from sales_months.
 */
export async function rematchSkuMonths(tx: Tx, skus: { account_id: string; sku_id: string }[]): Promise<void> {
  if (!skus.length) return;
  const changed = "jsonb_to_recordset(?::jsonb) AS x(account_id uuid, sku_id uuid)";
  await tx.raw(`DELETE FROM sku_months c USING ${changed} WHERE c.account_id = x.account_id AND c.sku_id = x.sku_id`, [json(skus)]);
  const named = `SELECT m.account_id, m.month, s.sku_id, m.channel, m.units, m.lines
       FROM ${changed} JOIN skus s USING (account_id, sku_id)
       CROSS JOIN LATERAL (VALUES (1::smallint, s.key), (2::smallint, s.sku), (3::smallint, s.ean)) AS r(ref_kind, ref)
       JOIN sales_months m ON m.account_id = s.account_id AND m.ref_kind = r.ref_kind AND m.ref = r.ref`;
  await tx.raw(`INSERT INTO sku_months ${skuMonthChanges(named)}`, [json(skus)]);
}
