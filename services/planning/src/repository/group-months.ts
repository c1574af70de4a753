import type { Tx } from "@analytics/db";
import { json, RECOMPUTE_TIMEOUT_MS } from "./sql";

/*
 * The group rollups (docs/planning.md "Sales rollups"): the figures of the monthly answers summed
 * per account, grouping (1: season, the only one kept, GROUPINGS), group, SKU status,
 * activePlanning and brand, so that a breakdown or sales plans by season reads a few hundred rows
 * instead of a row per SKU: group_months (migration 014) the sales per channel and month, each
 * SKU month's figures rounded first exactly as the answers round them (cellFigures), `live`
 * counting the SKU months that have any (an answer shows a group that has one); group_stock and
 * group_po_months (migration 015) stock, triggers' minimums and open PO lines. They move with what
 * they sum: a batch's sales (addToSalesRollups adds each changed cell's new figures and takes off
 * its old ones); a SKU's new version, stored plans, stock, triggers, PO lines and warehouses (the
 * SKU's figures taken off before the change and added after: moveGroupFigures); and are
 * recomputed when an account's growth or timezone changes.
 */

/**
 * The brand of SKU `s` as the group rollups key it: '=' and its name in lower case (the brand
 * filter matches names without regard to case), '' for none (which no filter matches).
 */
export const brandKey = (s: string) => `coalesce('=' || lower(${s}.brand), '')`;

/**
 * The groupings kept, by the number stored. Only seasons: product and variant groups are nearly
 * as many as the SKUs (10,000 and 33,000 of 100,000 on the bench account), so keeping them cost
 * the consumer as much again as the cells (a batch moved a row per SKU month in each) and saved
 * an answer little; answers by them read the cells.
 */
export const GROUPINGS = { seasons: 1 } as const;

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

/**
 * Adds SKU months `rows` (account_id, sku_id, channel, month, sign, volume, units, lines, ly_units,
 * ly_lines) to group_months, each times its sign, under each grouping of its SKU as stored now.
 * A statement's text (a CTE's body).
 */
export function addToGroupMonths(rows: string): string {
  return `INSERT INTO group_months AS gm (account_id, grouping, g, status, active_planning, brand, channel, month, stored, plan, actual, live)
       SELECT f.account_id, gr.grouping, gr.g, s.status, s.active_planning, ${brandKey("s")}, f.channel, f.month, sum(f.sign * f.stored), sum(f.sign * f.plan), sum(f.sign * f.actual), sum(f.sign * f.live)
       FROM (
         SELECT x.account_id, x.sku_id, x.channel, x.month, x.sign, ${cellFigures("x", "coalesce(a.sales_plan_growth, 0)")}
         FROM (${rows}) x LEFT JOIN accounts a ON a.account_id = x.account_id) f
       JOIN skus s ON s.account_id = f.account_id AND s.sku_id = f.sku_id
       ${groupingsOf("s")}
       GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       HAVING sum(f.sign * f.stored) <> 0 OR sum(f.sign * f.plan) <> 0 OR sum(f.sign * f.actual) <> 0 OR sum(f.sign * f.live) <> 0
       ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
       ON CONFLICT (account_id, grouping, month, g, status, active_planning, brand, channel) DO UPDATE
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

/** The groupings of SKU `s`, a row each (grouping, g). */
const groupingsOf = (s: string) => `CROSS JOIN LATERAL (VALUES (${GROUPINGS.seasons}::smallint, coalesce(${s}.season, ''))) AS gr(grouping, g)`;

/**
 * The stock (of live warehouses) and stock triggers' minimums (not of a deleted warehouse) of the
 * SKUs of `skus` times `sign`, added to group_stock (migration 015) under their groups.
 */
function addToGroupStock(skus: string, sign: string): string {
  return `INSERT INTO group_stock AS gs (account_id, grouping, g, status, active_planning, brand, stock, stock_rows, target, target_rows)
       SELECT x.account_id, gr.grouping, gr.g, s.status, s.active_planning, ${brandKey("s")}, ${sign} * sum(x.stock), ${sign} * sum(x.stock_rows), ${sign} * sum(x.target), ${sign} * sum(x.target_rows)
       FROM (
         SELECT st.account_id, st.sku_id, st.available_quantity AS stock, 1 AS stock_rows, 0 AS target, 0 AS target_rows
         FROM ${skus} JOIN stock st USING (account_id, sku_id)
         JOIN warehouses w ON w.account_id = st.account_id AND w.warehouse_id = st.warehouse_id AND NOT w.deleted
         WHERE NOT st.deleted
         UNION ALL
         SELECT t.account_id, t.sku_id, 0, 0, coalesce(t.min, 0), 1 FROM ${skus} JOIN stock_trigger_minimums t USING (account_id, sku_id)
         WHERE NOT EXISTS (SELECT 1 FROM warehouses w WHERE w.account_id = t.account_id AND w.warehouse_id = t.warehouse_id AND w.deleted)
       ) x JOIN skus s ON s.account_id = x.account_id AND s.sku_id = x.sku_id ${groupingsOf("s")}
       GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
       ON CONFLICT (account_id, grouping, g, status, active_planning, brand) DO UPDATE
         SET stock = gs.stock + excluded.stock, stock_rows = gs.stock_rows + excluded.stock_rows, target = gs.target + excluded.target, target_rows = gs.target_rows + excluded.target_rows`;
}

/** The open PO and draft-PO lines (not cancelled, with a date) of the SKUs of `skus` times `sign`, added to group_po_months by month of delivery. */
function addToGroupPoMonths(skus: string, sign: string): string {
  return `INSERT INTO group_po_months AS gp (account_id, grouping, g, status, active_planning, brand, month, po, draft, lines)
       SELECT l.account_id, gr.grouping, gr.g, s.status, s.active_planning, ${brandKey("s")}, date_trunc('month', l.delivery_date)::date,
         ${sign} * sum(CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END), ${sign} * sum(CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END), ${sign} * count(*)
       FROM ${skus} JOIN purchase_order_lines l USING (account_id, sku_id) JOIN skus s ON s.account_id = l.account_id AND s.sku_id = l.sku_id ${groupingsOf("s")}
       WHERE l.kind <> 'cancelled' AND l.delivery_date IS NOT NULL
       GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
       ON CONFLICT (account_id, grouping, month, g, status, active_planning, brand) DO UPDATE
         SET po = gp.po + excluded.po, draft = gp.draft + excluded.draft, lines = gp.lines + excluded.lines`;
}

/**
 * Takes these SKUs' figures off their groups (sign -1) or adds them (+1), as they are stored now:
 * `sales` their sales months (group_months), `stock` their stock, triggers and PO months, `all`
 * both. Called before and after a change of what places or names a SKU (all), of its stored plans
 * (sales), or of its stock, triggers, PO lines or their warehouses (stock); a SKU that did not
 * change is taken off and added back: nothing moves.
 */
export async function moveGroupFigures(tx: Tx, skus: { account_id: string; sku_id: string }[], sign: 1 | -1, figures: "all" | "sales" | "stock"): Promise<void> {
  if (!skus.length) return;
  const set = "(SELECT DISTINCT * FROM jsonb_to_recordset(?::jsonb) AS k(account_id uuid, sku_id uuid)) k";
  const keys = json(skus.map(({ account_id, sku_id }) => ({ account_id, sku_id })));
  if (figures !== "stock") await tx.raw(addToGroupMonths(skuMonthsOf(set, String(sign))), [keys, keys]);
  if (figures === "sales") return;
  await tx.raw(addToGroupStock(set, String(sign)), [keys, keys]);
  await tx.raw(addToGroupPoMonths(set, String(sign)), [keys]);
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

/** The SKUs whose stored rows of `table` belong to these owners (`owner`: the key column the rows are listed by). */
export async function skusOf(tx: Tx, table: "purchase_order_lines" | "stock_trigger_minimums" | "stock", owner: "purchase_order_id" | "stock_trigger_id" | "warehouse_id", owners: Record<string, string | bigint>[]): Promise<{ account_id: string; sku_id: string }[]> {
  if (!owners.length) return [];
  const type = owner === "stock_trigger_id" ? "bigint" : "uuid";
  const { rows } = await tx.raw(
    `SELECT DISTINCT t.account_id, t.sku_id FROM ${table} t JOIN jsonb_to_recordset(?::jsonb) AS x(account_id uuid, ${owner} ${type}) ON t.account_id = x.account_id AND t.${owner} = x.${owner}
     WHERE t.sku_id IS NOT NULL`,
    [json(owners)],
  );
  return rows;
}
