import type { Tx } from "@analytics/db";
import { json, RECOMPUTE_TIMEOUT_MS } from "./sql";

/*
 * Group months (group_months, migration 014): the sales figures of the monthly answers summed per
 * account, grouping (1 season, 2 product group, 3 variant group), group, SKU status, activePlanning,
 * channel and month, so that a breakdown or sales plans by season reads a few hundred rows instead
 * of a row per SKU. Each figure is the sum of the SKUs' own (cellFigures), rounded per SKU first
 * exactly as the answers round them; `live` counts the SKU months that have any (an answer shows
 * a group that has one). They move with what they sum: a batch's sales (addToSalesRollups adds
 * each changed cell's new figures and takes off its old ones), stored plans and a SKU's group,
 * status or names (its figures taken off before the change and added after: moveGroupMonths),
 * and are recomputed when an account's growth or timezone changes.
 */

/** The groupings kept, by the number stored: the SKU's column of each. */
export const GROUPINGS = { seasons: 1, products: 2, variants: 3 } as const;

/**
 * A SKU month's figures from its cell and stored plan (columns of `x`: volume, units, lines,
 * ly_units, ly_lines; absent values null), as the monthly answers count them: the stored plan
 * rounded to 3 decimals, the plan (stored, else last year's net units grown by `growth`,
 * rounded), the month's net units, and whether it has any of them.
 */
export const cellFigures = (x: string, growth: string) => `CASE WHEN ${x}.volume IS NOT NULL THEN round(${x}.volume, 3) ELSE 0 END AS stored,
        coalesce(round(CASE WHEN ${x}.volume IS NOT NULL THEN ${x}.volume WHEN ${x}.ly_lines > 0 THEN greatest(0, ${x}.ly_units) * (1 + ${growth}) END, 3), 0) AS plan,
        CASE WHEN ${x}.lines > 0 THEN ${x}.units ELSE 0 END AS actual,
        (${x}.volume IS NOT NULL OR ${x}.lines > 0 OR ${x}.ly_lines > 0)::int AS live`;

/** The account's growth as the answers read it (answerAccount). */
const growthOf = (account: string) => `coalesce((SELECT g.sales_plan_growth FROM accounts g WHERE g.account_id = ${account}), 0)`;

/**
 * Adds SKU months `rows` (account_id, sku_id, channel, month, sign, volume, units, lines, ly_units,
 * ly_lines) to group_months, each times its sign, under each grouping of its SKU as stored now.
 * A statement's text (a CTE's body).
 */
export function addToGroupMonths(rows: string): string {
  return `INSERT INTO group_months AS gm (account_id, grouping, g, status, active_planning, channel, month, stored, plan, actual, live)
       SELECT f.account_id, gr.grouping, gr.g, s.status, s.active_planning, f.channel, f.month, sum(f.sign * f.stored), sum(f.sign * f.plan), sum(f.sign * f.actual), sum(f.sign * f.live)
       FROM (SELECT x.account_id, x.sku_id, x.channel, x.month, x.sign, ${cellFigures("x", growthOf("x.account_id"))} FROM (${rows}) x) f
       JOIN skus s ON s.account_id = f.account_id AND s.sku_id = f.sku_id
       CROSS JOIN LATERAL (VALUES (${GROUPINGS.seasons}::smallint, coalesce(s.season, '')), (${GROUPINGS.products}::smallint, coalesce(s.product_group_id, '')),
         (${GROUPINGS.variants}::smallint, coalesce(s.variant_group_id, ''))) AS gr(grouping, g)
       GROUP BY 1, 2, 3, 4, 5, 6, 7
       HAVING sum(f.sign * f.stored) <> 0 OR sum(f.sign * f.plan) <> 0 OR sum(f.sign * f.actual) <> 0 OR sum(f.sign * f.live) <> 0
       ORDER BY 1, 2, 3, 4, 5, 6, 7
       ON CONFLICT (account_id, grouping, month, g, status, active_planning, channel) DO UPDATE
         SET stored = gm.stored + excluded.stored, plan = gm.plan + excluded.plan, actual = gm.actual + excluded.actual, live = gm.live + excluded.live`;
}

/** Every SKU month (cell or stored plan) of the SKUs of `skus` (account_id, sku_id), with `sign`. */
function skuMonthsOf(skus: string, sign: string): string {
  return `SELECT c.account_id, c.sku_id, c.channel, c.month, ${sign} AS sign, p.volume, c.units, c.lines, c.ly_units, c.ly_lines
       FROM ${skus} JOIN sku_months c USING (account_id, sku_id)
       LEFT JOIN sales_plans p ON p.account_id = c.account_id AND p.sku_id = c.sku_id AND p.channel = c.channel AND p.month = c.month AND p.volume IS NOT NULL
       UNION ALL
       SELECT p.account_id, p.sku_id, p.channel::smallint, p.month, ${sign}, p.volume, NULL, NULL, NULL, NULL
       FROM ${skus} JOIN sales_plans p USING (account_id, sku_id)
       WHERE p.volume IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sku_months c WHERE c.account_id = p.account_id AND c.sku_id = p.sku_id AND c.channel = p.channel AND c.month = p.month)`;
}

/**
 * Takes these SKUs' figures off their groups (sign -1) or adds them (+1), as they are stored now:
 * called before and after a change of what places or names a SKU, or of its stored plans (a SKU
 * that did not change is taken off and added back: nothing moves).
 */
export async function moveGroupMonths(tx: Tx, skus: { account_id: string; sku_id: string }[], sign: 1 | -1): Promise<void> {
  if (!skus.length) return;
  const set = "(SELECT DISTINCT * FROM jsonb_to_recordset(?::jsonb) AS k(account_id uuid, sku_id uuid)) k";
  await tx.raw(addToGroupMonths(skuMonthsOf(set, String(sign))), [json(skus.map(({ account_id, sku_id }) => ({ account_id, sku_id }))), json(skus.map(({ account_id, sku_id }) => ({ account_id, sku_id })))]);
}

/** Recomputes the accounts' group months from their SKUs' cells and stored plans (a growth or timezone change). */
export async function recomputeGroupMonths(tx: Tx, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  // Every SKU month of the accounts: minutes at 100,000 SKUs, past the pool's statement timeout.
  await tx.raw(`SET LOCAL statement_timeout = ${RECOMPUTE_TIMEOUT_MS}`);
  await tx.raw("DELETE FROM group_months WHERE account_id = ANY(?::uuid[])", [accountIds]).options({ query_timeout: RECOMPUTE_TIMEOUT_MS + 1_000 });
  const set = "(SELECT account_id, sku_id FROM skus WHERE account_id = ANY(?::uuid[])) k";
  await tx.raw(addToGroupMonths(skuMonthsOf(set, "1")), [accountIds, accountIds]).options({ query_timeout: RECOMPUTE_TIMEOUT_MS + 1_000 });
}
