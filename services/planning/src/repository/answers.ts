import type { Knex } from "knex";
import type { Db } from "@analytics/db";
import { addDays, monthStart, monthsAndDays, type PeriodSpan } from "../periods";
import type { BreakdownQuery } from "../validation";
import { groupColumn, groupKeyOf, skuWhere } from "./filters";
import { cellFigures, GROUPINGS } from "./group-months";
import { groupsIn, paged, type GroupRange } from "./pages";
import { accountTimezone } from "./sql";

/*
 * The statements of the later revision's answers (sales plans, breakdown, breakdown by warehouse;
 * services/planning/src/breakdown.ts streams them), built from named pieces in the order their
 * text is written. Sales come from the rollups the replica's consumer keeps: whole months from
 * the per-SKU cells (sku_months, migration 013), other days from sales_days (migration 012),
 * matched to the SKUs when read.
 */

/** The account's timezone (UTC when unknown), salesPlanGrowth and today in that timezone. */
export async function answerAccount(db: Db, accountId: string): Promise<{ tz: string; growth: string; today: string }> {
  const { rows } = await db.raw(
    `SELECT tz, coalesce((SELECT sales_plan_growth FROM accounts WHERE account_id = ?), 0)::text AS growth, to_char((now() AT TIME ZONE tz)::date, 'YYYY-MM-DD') AS today
     FROM (SELECT ${accountTimezone("?")} AS tz) a`,
    [accountId, accountId],
  );
  return rows[0];
}

export type Shape = "plans" | "groups" | "warehouses";

/** Builds SQL with `?` bindings in the order the text is written. */
class Sql {
  bindings: Knex.RawBinding[] = [];
  /** A bound value. */
  v = (value: Knex.RawBinding) => {
    this.bindings.push(value);
    return "?";
  };
  /** A piece with its own bindings. */
  with = (piece: { sql: string; bindings: Knex.RawBinding[] }) => {
    this.bindings.push(...piece.bindings);
    return piece.sql;
  };
}

/** What every piece of one answer's statement knows. */
interface Answer {
  b: Sql;
  accountId: string;
  q: BreakdownQuery;
  byWarehouse: boolean;
  /** The row keys: g, or g and wid by warehouse. */
  keys: string;
  account: { tz: string; growth: string; today: string };
  periods: PeriodSpan[];
  first: string;
  last: string;
  /** The groups answered: a page's (after its `after`) or a slice's; absent: all. */
  range?: GroupRange;
  /** A slice's SKUs and what names them in sales: each input read through its index for those only. */
  slice?: Slice;
}

/** A slice of a whole answer: its groups, their selected SKUs, and the keys, skus and EANs that name them. */
export interface Slice extends GroupRange {
  skuIds: string[];
  refs: string[];
}

/** ` AND <column> = ANY(the slice's SKU ids)` in a slice, else nothing. */
const ofSlice = (a: Answer, column: string) => (a.slice ? ` AND ${column} = ANY(${a.b.v(a.slice.skuIds)}::uuid[])` : "");
/** ` AND <column> = ANY(the slice's keys, skus and EANs)` in a slice, else nothing. */
const namingSlice = (a: Answer, column: string) => (a.slice ? ` AND ${column} = ANY(${a.b.v(a.slice.refs)}::text[])` : "");

/** The instant a day starts in the account's timezone. */
const startOf = (a: Answer, day: string) => `(${a.b.v(day)}::date)::timestamp AT TIME ZONE ${a.b.v(a.account.tz)}`;
/** The account's day of an instant. */
const dayOf = (a: Answer, instant: string) => `(${instant} AT TIME ZONE ${a.b.v(a.account.tz)})::date`;
/** `, <expr> AS wid` by warehouse, else nothing. */
const wid = (a: Answer, expr: string) => (a.byWarehouse ? `, ${expr} AS wid` : "");

/**
 * The account's SKUs that pass the filters, with their group `g` and what names them in sales
 * and distribution orders; on a page after `after`, only those of the later groups.
 */
function skus(a: Answer): string {
  const { b, q } = a;
  const g = groupKeyOf(q.volumes.groupBy);
  return `s AS NOT MATERIALIZED (
      SELECT s.sku_id, s.key, s.sku, s.ean, ${g} AS g FROM skus s
      WHERE s.account_id = ${b.v(a.accountId)} AND ${b.with(skuWhere(q.volumes.filters))}${groupsIn(g, a.range, b.v)}${ofSlice(a, "s.sku_id")})`;
}

/** The SKUs, their names in the sales rollups, the warehouses, and the periods with their days. */
function inputs(a: Answer): string {
  const { v } = a.b;
  const { months, days } = monthsAndDays(a.periods);
  return `WITH ${skus(a)},
    -- What names each SKU in the sales rollups: ref_kind 1 its key, 2 its sku, 3 its EAN.
    r AS NOT MATERIALIZED (
      SELECT sku_id, 1::smallint AS ref_kind, key AS ref FROM s
      UNION ALL SELECT sku_id, 2::smallint, sku FROM s WHERE sku IS NOT NULL
      UNION ALL SELECT sku_id, 3::smallint, ean FROM s WHERE ean IS NOT NULL),
    w AS NOT MATERIALIZED (SELECT warehouse_id, external_id, name FROM warehouses WHERE account_id = ${v(a.accountId)} AND NOT deleted),
    wx AS NOT MATERIALIZED (SELECT DISTINCT ON (external_id) external_id, warehouse_id FROM w WHERE external_id <> '' ORDER BY external_id, warehouse_id),
    per AS (SELECT * FROM jsonb_to_recordset(${v(JSON.stringify(a.periods.map((p, idx) => ({ idx, ...p }))))}::jsonb) AS p(idx int, start date, "end" date, state text, reported boolean)),
    d AS (SELECT x.day::date AS day, per.idx FROM per, generate_series(per.start, per."end", interval '1 day') AS x(day)),
    -- The periods' whole months and their other days (monthsAndDays).
    dm AS (SELECT * FROM jsonb_to_recordset(${v(JSON.stringify(months))}::jsonb) AS x(idx int, month date)),
    dd AS (SELECT * FROM jsonb_to_recordset(${v(JSON.stringify(days))}::jsonb) AS x(idx int, day date)),
    -- Each period's days per month, and the month's length: a period's plan is its days' share of its months' plans.
    pm AS (SELECT idx, date_trunc('month', day)::date AS month, count(*)::numeric AS days,
        extract(day FROM date_trunc('month', day) + interval '1 month' - interval '1 day')::numeric AS month_days
      FROM d GROUP BY 1, 2, 4)`;
}

/** A rollup's live rows (alias x, with `joins`) of the account, the selected channels and `where`. */
function rollupRows(a: Answer, rollup: string, joins: string, where: () => string): string {
  const { v } = a.b;
  return `${rollup} x ${joins} WHERE x.account_id = ${v(a.accountId)} AND x.lines > 0 AND x.channel = ANY(${v(a.q.channels)}::int[]) AND ${where()}${namingSlice(a, "x.ref")}`;
}

/** The per-SKU cells (sku_months, alias x, with `joins`) of the account's selected SKUs and channels from `from` to `to` where `live`. */
function skuMonths(a: Answer, joins: string, from: string, to: string, live: string): string {
  const { v } = a.b;
  return `sku_months x JOIN s USING (sku_id) ${joins}
        WHERE x.account_id = ${v(a.accountId)} AND x.month BETWEEN ${v(from)}::date AND ${v(to)}::date AND x.channel = ANY(${v(a.q.channels)}::int[]) AND ${live}${ofSlice(a, "x.sku_id")}`;
}

/**
 * Per SKU, channel and month of the periods: its cell (sku_months: the month's net units, and last
 * year's, the baseline's input) beside its stored plan, either absent; only cells with lines.
 */
function cellsAndPlans(a: Answer): string {
  const { v } = a.b;
  const { first, last } = a;
  return `
      SELECT coalesce(p.sku_id, c.sku_id) AS sku_id, coalesce(p.channel, c.channel) AS channel, coalesce(p.month, c.month) AS month,
        p.volume, c.units, c.lines, c.ly_units, c.ly_lines
      FROM (SELECT x.sku_id, x.channel, x.month, x.units, x.lines, x.ly_units, x.ly_lines FROM ${skuMonths(a, "", monthStart(first), last, "(x.lines > 0 OR x.ly_lines > 0)")}) c
      FULL JOIN (
        SELECT p.sku_id, p.channel, p.month, p.volume FROM sales_plans p JOIN s USING (sku_id)
        WHERE p.account_id = ${v(a.accountId)} AND p.volume IS NOT NULL AND p.month >= ${v(monthStart(first))}::date AND p.month <= ${v(last)}::date AND p.channel = ANY(${v(a.q.channels)}::int[])${ofSlice(a, "p.sku_id")}
      ) p ON p.sku_id = c.sku_id AND p.channel = c.channel AND p.month = c.month`;
}

/** A month's plan of a cell beside its stored plan: the stored one, else last year's net units grown (none without last year's lines). */
const monthPlan = (a: Answer) => `CASE WHEN volume IS NOT NULL THEN volume WHEN ly_lines > 0 THEN greatest(0, ly_units) * (1 + ${a.b.v(a.account.growth)}::numeric) END`;

/**
 * Per SKU, channel and period: stored plan, plan and actual (scp), each answer summing it by its
 * own keys. The plan per SKU, channel and month (monthPlan) is split over the periods by their
 * days (pm), each SKU's rounded per period; actuals are the cells' whole months (dm) and
 * sales_days for the other days (dd).
 */
function perSku(a: Answer): string {
  if (isMonthly(a)) return monthlyPerSku(a);
  const { first, last } = a;
  return `,
    mp AS (SELECT sku_id, channel, month, volume IS NOT NULL AS stored, ${monthPlan(a)} AS plan FROM (${cellsAndPlans(a)}) x WHERE volume IS NOT NULL OR ly_lines > 0),
    pp AS (
      SELECT mp.sku_id, mp.channel, pm.idx,
        round(coalesce(sum(mp.plan * pm.days / pm.month_days) FILTER (WHERE mp.stored), 0), 3) AS stored,
        round(coalesce(sum(mp.plan * pm.days / pm.month_days) FILTER (WHERE NOT mp.stored), 0), 3) AS base
      FROM mp JOIN pm USING (month) GROUP BY 1, 2, 3),
    act AS (
      SELECT sku_id, channel, idx, sum(units) AS units FROM (
        SELECT x.sku_id, x.channel, dm.idx, x.units FROM ${skuMonths(a, "JOIN dm USING (month)", first, last, "x.lines > 0")}
        UNION ALL
        SELECT r.sku_id, x.channel, dd.idx, x.units FROM ${rollupRows(a, "sales_days", "JOIN dd USING (day) JOIN r USING (ref_kind, ref)", () => `x.day BETWEEN ${a.b.v(first)}::date AND ${a.b.v(last)}::date`)}
      ) x GROUP BY 1, 2, 3),
    scp AS NOT MATERIALIZED (
      SELECT sku_id, channel, idx, stored, stored + base AS plan, 0::numeric AS actual FROM pp
      UNION ALL
      SELECT sku_id, channel, idx, 0, 0, units FROM act)`;
}

/** Whether every period is one whole calendar month: then a SKU's period is its month's cell. */
function isMonthly(a: Answer): boolean {
  const { months, days } = monthsAndDays(a.periods);
  return days.length === 0 && months.length === a.periods.length;
}

/**
 * scp when every period is one whole month: one row per cell or stored plan, nothing to group
 * (the same figures as perSku's: each period's plan is its one month's, rounded), counted as the
 * group rollups count them (cellFigures).
 */
function monthlyPerSku(a: Answer): string {
  return `,
    scp AS NOT MATERIALIZED (
      SELECT sku_id, channel, dm.idx, ${cellFigures("x", `${a.b.v(a.account.growth)}::numeric`)}
      FROM (${cellsAndPlans(a)}) x JOIN dm USING (month))`;
}

/**
 * Whether the answer reads its sales from group_months: by a grouping kept there (seasons), every
 * period one whole month, no filter but status, activePlanning, brands and seasons (keys of its
 * rows), not the groups changed since a time, not by warehouse.
 */
function readsGroupMonths(a: Answer): boolean {
  const { groupBy, filters, updatedSince } = a.q.volumes;
  // By season, a seasons filter is a filter on the group (but "" names SKUs whose season is the
  // empty text, where the group "" also holds those without one).
  const keyed = ["skuStatus", "activePlanning", "brands", ...(groupBy === "seasons" && !filters.seasons.includes("") ? ["seasons"] : [])];
  const narrowed = Object.entries(filters).some(([name, values]) => !keyed.includes(name) && (!Array.isArray(values) || values.flat().length > 0));
  return groupBy in GROUPINGS && !a.byWarehouse && !updatedSince && !narrowed && isMonthly(a);
}

/** Stored plan, plan and actual per group, channel and period (gcp): from group_months, or summed from the SKUs' (scp). */
function groupSales(a: Answer): string {
  if (!readsGroupMonths(a))
    return `,
    gcp AS (SELECT s.g, x.channel, x.idx, sum(x.stored) AS stored, sum(x.plan) AS plan, sum(x.actual) AS actual FROM scp x JOIN s USING (sku_id) GROUP BY 1, 2, 3)`;
  return `,
    gcp AS (
      SELECT x.g, x.channel, dm.idx, sum(x.stored) AS stored, sum(x.plan) AS plan, sum(x.actual) AS actual
      FROM group_months x JOIN dm USING (month)
      WHERE ${groupRows(a)} AND x.channel = ANY(${a.b.v(a.q.channels)}::int[])
      GROUP BY 1, 2, 3 HAVING sum(x.live) > 0)`;
}

/** The rows (alias x) of a group rollup the answer reads: its account, grouping, SKU statuses, activePlanning, brands and seasons, groups after the page's `after`. */
function groupRows(a: Answer): string {
  const { v } = a.b;
  const { filters, groupBy } = a.q.volumes;
  // Bound in the order the text is written.
  const brands = () => (filters.brands.length ? ` AND x.brand = ANY(${v(filters.brands.map((b) => `=${b.toLowerCase()}`))}::text[])` : "");
  const seasons = () => (groupBy === "seasons" && filters.seasons.length ? ` AND x.g = ANY(${v(filters.seasons)}::text[])` : "");
  return `x.account_id = ${v(a.accountId)} AND x.grouping = ${v(GROUPINGS[groupBy as keyof typeof GROUPINGS])}
        AND x.status = ANY(${v(filters.skuStatus)}::int[]) AND x.active_planning = ${v(filters.activePlanning)}${brands()}${seasons()}${groupsIn("x.g", a.range, v)}`;
}

/** PO and draft-PO per group and period, stock and targets per group, from the group rollups (readsGroupMonths). */
function groupStockInputs(a: Answer): string {
  return `,
    po AS (SELECT x.g, dm.idx, sum(x.po) AS po, sum(x.draft) AS draft FROM group_po_months x JOIN dm USING (month) WHERE ${groupRows(a)} GROUP BY 1, 2 HAVING sum(x.lines) > 0),
    stk AS (SELECT x.g, sum(x.stock) AS stock FROM group_stock x WHERE ${groupRows(a)} GROUP BY 1 HAVING sum(x.stock_rows) > 0),
    tgt AS (SELECT x.g, sum(x.target) AS target FROM group_stock x WHERE ${groupRows(a)} GROUP BY 1 HAVING sum(x.target_rows) > 0)`;
}

/** The sales-plans answer: per group, selected channel and reported period. */
function plansAnswer(a: Answer): string {
  const { v } = a.b;
  return `,
    grp AS (${a.q.volumes.updatedSince ? changedGroups(a, "gcp") : "SELECT DISTINCT g FROM gcp JOIN per USING (idx) WHERE per.reported"})
    SELECT grp.g, c.channel, per.idx,
      trim_scale(coalesce(gcp.plan, 0))::text AS plan, trim_scale(coalesce(gcp.actual, 0))::text AS actual,
      trim_scale(CASE WHEN coalesce(gcp.plan, 0) = 0 THEN 0 ELSE round(gcp.stored / gcp.plan, 6) END)::text AS share
    FROM grp CROSS JOIN unnest(${v(a.q.channels)}::int[]) AS c(channel) CROSS JOIN per
    LEFT JOIN gcp ON gcp.g = grp.g AND gcp.channel = c.channel AND gcp.idx = per.idx
    WHERE per.reported
    ORDER BY grp.g, c.channel, per.idx`;
}

/**
 * By warehouse: each SKU's weight per warehouse, by units shipped from each (known) warehouse in
 * the 12 months before today, else 1 for each warehouse holding its stock, else none.
 */
function warehouseWeights(a: Answer): string {
  const { v } = a.b;
  const { today } = a.account;
  const yearAgo = `${Number(today.slice(0, 4)) - 1}${today.slice(4) === "-02-29" ? "-02-28" : today.slice(4)}`;
  return `,
    sp AS (SELECT sku_id, idx, sum(plan) AS plan, sum(actual) AS actual FROM scp GROUP BY 1, 2),
    ship AS (
      SELECT r.sku_id, wx.warehouse_id::text AS wid, sum(x.shipped)::numeric AS weight
      FROM sales_days x JOIN r USING (ref_kind, ref) JOIN wx ON wx.external_id = x.external_warehouse_id
      WHERE x.account_id = ${v(a.accountId)} AND x.day >= ${v(yearAgo)}::date AND x.day < ${v(today)}::date AND x.shipped > 0${namingSlice(a, "x.ref")} AND r.sku_id IN (SELECT sku_id FROM sp)
      GROUP BY 1, 2),
    held AS (
      SELECT st.sku_id, st.warehouse_id::text AS wid, 1::numeric AS weight
      FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id)
      WHERE st.account_id = ${v(a.accountId)} AND NOT st.deleted AND st.available_quantity > 0${ofSlice(a, "st.sku_id")}
        AND st.sku_id IN (SELECT sku_id FROM sp) AND NOT EXISTS (SELECT 1 FROM ship WHERE ship.sku_id = st.sku_id))`;
}

/**
 * By warehouse: plans and actuals split over each SKU's warehouses by cumulative shares (the
 * last warehouse's is exactly 1), each piece rounded to 3 decimals so that they telescope to the
 * SKU's figure; and the distribution orders of the periods.
 */
function warehousePieces(a: Answer): string {
  const { v } = a.b;
  const until = addDays(a.last, 1);
  const dos = (match: string, where: string) => `
      SELECT s.g, d.idx, o.from_external_warehouse_id AS f, o.to_external_warehouse_id AS t, o.open_quantity AS q
      FROM distribution_orders o JOIN s ON ${match} JOIN d ON d.day = ${dayOf(a, "o.delivered_at")}
      WHERE o.account_id = ${v(a.accountId)}${where} AND o.open_quantity > 0 AND o.delivered_at >= ${startOf(a, a.first)} AND o.delivered_at < ${startOf(a, until)}`;
  return `,
    share AS (
      SELECT sku_id, wid,
        sum(weight) OVER (PARTITION BY sku_id ORDER BY wid ROWS UNBOUNDED PRECEDING) / sum(weight) OVER (PARTITION BY sku_id) AS upto,
        (sum(weight) OVER (PARTITION BY sku_id ORDER BY wid ROWS UNBOUNDED PRECEDING) - weight) / sum(weight) OVER (PARTITION BY sku_id) AS before
      FROM (SELECT * FROM ship UNION ALL SELECT * FROM held) x),
    pieces AS (
      SELECT sp.sku_id, sp.idx, coalesce(sh.wid, '') AS wid,
        round(sp.plan * coalesce(sh.upto, 1), 3) - round(sp.plan * coalesce(sh.before, 0), 3) AS plan,
        round(sp.actual * coalesce(sh.upto, 1), 3) - round(sp.actual * coalesce(sh.before, 0), 3) AS actual
      FROM sp LEFT JOIN share sh USING (sku_id)),
    -- Summed per group, warehouse and period by gx, with the other figures (not grouped twice).
    gp AS NOT MATERIALIZED (SELECT s.g, x.wid, x.idx, x.plan, x.actual FROM pieces x JOIN s USING (sku_id)),
    dos AS (${dos("s.key = o.key", "")}
      UNION ALL${dos("s.sku = o.sku", " AND o.key IS NULL")})`;
}

/** PO and draft-PO lines by delivery day, stock, and stock triggers (not on a deleted warehouse; "" when unknown). */
function stockInputs(a: Answer): string {
  const { v } = a.b;
  const { keys } = a;
  return `,
    po AS (
      SELECT s.g${wid(a, "coalesce(wx.warehouse_id::text, '')")}, d.idx, sum(CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END) AS po, sum(CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END) AS draft
      FROM purchase_order_lines l JOIN s USING (sku_id) JOIN d ON d.day = l.delivery_date ${a.byWarehouse ? "LEFT JOIN wx ON wx.external_id = l.external_warehouse_id" : ""}
      WHERE l.account_id = ${v(a.accountId)} AND l.kind <> 'cancelled' AND l.delivery_date BETWEEN ${v(a.first)}::date AND ${v(a.last)}::date${ofSlice(a, "l.sku_id")}
      GROUP BY ${keys}, d.idx),
    stk AS (
      SELECT s.g${wid(a, "st.warehouse_id::text")}, sum(st.available_quantity) AS stock
      FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id)
      WHERE st.account_id = ${v(a.accountId)} AND NOT st.deleted${ofSlice(a, "st.sku_id")} GROUP BY ${keys}),
    tgt AS (
      SELECT s.g${wid(a, "coalesce(w.warehouse_id::text, '')")}, sum(coalesce(t.min, 0)) AS target
      FROM stock_trigger_minimums t JOIN s USING (sku_id) LEFT JOIN w USING (warehouse_id)
      WHERE t.account_id = ${v(a.accountId)}${ofSlice(a, "t.sku_id")} AND NOT EXISTS (SELECT 1 FROM warehouses x WHERE x.account_id = t.account_id AND x.warehouse_id = t.warehouse_id AND x.deleted)
      GROUP BY ${keys})`;
}

/** Every figure per row key and period (gx), and each row's stock and target (fixed). */
function figures(a: Answer): string {
  const { keys } = a;
  const transfers = `
        UNION ALL SELECT g, coalesce(wx.warehouse_id::text, ''), idx, 0, 0, 0, 0, q, 0, 0, 0 FROM dos LEFT JOIN wx ON wx.external_id = dos.t
        UNION ALL SELECT g, coalesce(wx.warehouse_id::text, ''), idx, 0, 0, 0, 0, 0, q, 0, 0 FROM dos LEFT JOIN wx ON wx.external_id = dos.f`;
  return `,
    gx AS (
      SELECT ${keys}, idx, sum(plan) AS plan, sum(actual) AS actual, sum(po) AS po, sum(draft) AS draft, sum(tin) AS tin, sum(tout) AS tout, sum(stock) AS stock, sum(target) AS target FROM (
        SELECT ${keys}, idx, plan, actual, 0 AS po, 0 AS draft, 0 AS tin, 0 AS tout, 0 AS stock, 0 AS target FROM gp
        UNION ALL SELECT ${keys}, idx, 0, 0, po, draft, 0, 0, 0, 0 FROM po
        UNION ALL SELECT ${keys}, NULL, 0, 0, 0, 0, 0, 0, stock, 0 FROM stk
        UNION ALL SELECT ${keys}, NULL, 0, 0, 0, 0, 0, 0, 0, target FROM tgt${a.byWarehouse ? transfers : ""}
      ) x GROUP BY ${keys}, idx),
    -- Every row's key with its stock and target (only gx's rows without a period carry those).
    fixed AS (SELECT ${keys}, sum(stock) AS stock, sum(target) AS target FROM gx GROUP BY ${keys})`;
}

/** The rows answered (all, or those changed since), named, times every period. */
function grid(a: Answer): string {
  const { keys, byWarehouse } = a;
  const on = (alias: string) => keys.split(", ").map((k) => `${alias}.${k}`).join(", ");
  const same = (x: string, y: string) => keys.split(", ").map((k) => `${x}.${k} = ${y}.${k}`).join(" AND ");
  const rows = a.q.volumes.updatedSince
    ? `SELECT ${on("c")}, coalesce(f.stock, 0) AS stock, coalesce(f.target, 0) AS target
      FROM (${changedGroups(a, "gx")}) c LEFT JOIN fixed f ON ${same("f", "c")}`
    : "SELECT * FROM fixed";
  return `,
    grp AS (${rows}),
    -- Warehouse names joined once per row, not per row and period: the answer keeps gx's order.
    named AS (SELECT grp.*${byWarehouse ? ", coalesce(wn.name, '') AS wname FROM grp LEFT JOIN w wn ON wn.warehouse_id::text = grp.wid" : " FROM grp"}),
    grid AS (
      SELECT ${on("n")}${byWarehouse ? ", n.wname" : ""}, per.idx, per.state, per.reported,
        coalesce(gx.plan, 0) AS plan, coalesce(gx.actual, 0) AS actual, coalesce(gx.po, 0) AS po, coalesce(gx.draft, 0) AS draft,
        coalesce(gx.tin, 0) AS tin, coalesce(gx.tout, 0) AS tout, n.stock, n.target
      FROM named n CROSS JOIN per
      LEFT JOIN gx ON ${same("gx", "n")} AND gx.idx = per.idx)`;
}

/**
 * The plan still to sell in each period: in the current one max(0, plan - actual), later the
 * whole plan. By warehouse, the group's current remainder split over its warehouses by each one's
 * own max(0, plan - actual), in thousandths by the largest remainder (from gx's rows of the current
 * period: a row without any has weight 0 and gets 0).
 */
function remaining(a: Answer): string {
  if (!a.byWarehouse) return `,
    flows AS (SELECT grid.*, CASE state WHEN 'current' THEN greatest(0, plan - actual) WHEN 'future' THEN plan ELSE 0 END AS rem FROM grid)`;
  return `,
    cw AS (
      SELECT g, wid, greatest(0, plan - actual) * 1000 AS weight,
        greatest(0, sum(plan) OVER (PARTITION BY g) - sum(actual) OVER (PARTITION BY g)) * 1000 AS rem_m,
        sum(greatest(0, plan - actual) * 1000) OVER (PARTITION BY g) AS total
      FROM gx JOIN per USING (idx) WHERE per.state = 'current'),
    cur AS (
      SELECT g, wid, CASE WHEN total = 0 THEN 0 ELSE (floor(rem_m * weight / nullif(total, 0)) + CASE WHEN row_number() OVER (PARTITION BY g ORDER BY rem_m * weight - floor(rem_m * weight / nullif(total, 0)) * total DESC, wid)
          <= rem_m - sum(floor(rem_m * weight / nullif(total, 0))) OVER (PARTITION BY g) THEN 1 ELSE 0 END) / 1000 END AS rem
      FROM cw),
    flows AS (
      SELECT grid.*, CASE grid.state WHEN 'current' THEN coalesce(cur.rem, 0) WHEN 'future' THEN grid.plan ELSE 0 END AS rem
      FROM grid LEFT JOIN cur ON cur.g = grid.g AND cur.wid = grid.wid AND grid.state = 'current')`;
}

/** The projection (closing stock rolls from the current period on) and the answer's rows, reported periods only. */
function projection(a: Answer): string {
  const { keys, byWarehouse } = a;
  return `,
    proj AS (
      SELECT *, CASE WHEN state <> 'past' THEN stock + sum(CASE WHEN state <> 'past' THEN po + draft + tin - tout - rem ELSE 0 END) OVER (PARTITION BY ${keys} ORDER BY idx) END AS closing
      FROM flows)
    SELECT p.g${byWarehouse ? ", p.wid, p.wname" : ""}, p.idx, p.state,
      trim_scale(p.plan)::text AS plan, trim_scale(p.actual)::text AS actual, trim_scale(p.po)::text AS po, trim_scale(p.draft)::text AS draft,
      trim_scale(p.tin)::text AS tin, trim_scale(p.tout)::text AS tout,
      trim_scale(p.closing - (p.po + p.draft + p.tin - p.tout - p.rem))::text AS opening, trim_scale(p.closing)::text AS closing,
      trim_scale(CASE WHEN p.state <> 'past' THEN p.target END)::text AS target,
      trim_scale(CASE WHEN p.state <> 'past' THEN greatest(0, p.rem + p.target - (p.closing - (p.po + p.draft + p.tin - p.tout - p.rem)) - p.po) END)::text AS otb
    FROM proj p
    WHERE p.reported
    ORDER BY p.g${byWarehouse ? ", p.wid" : ""}, p.idx`;
}

/**
 * The statement of one answer, or of a slice of its groups. Its rows are one per (group[, channel
 * | warehouse], period), in REST order; `reported` periods only.
 */
export function breakdownStatement(accountId: string, q: BreakdownQuery, shape: Shape, account: { tz: string; growth: string; today: string }, periods: PeriodSpan[], slice?: Slice) {
  const byWarehouse = shape === "warehouses";
  const range = slice ?? q.volumes.page;
  const a: Answer = { b: new Sql(), accountId, q, byWarehouse, keys: byWarehouse ? "g, wid" : "g", account, periods, first: periods[0].start, last: periods[periods.length - 1].end, range, slice };
  let sql = inputs(a) + (readsGroupMonths(a) ? "" : perSku(a));
  if (shape === "plans") return { sql: sql + groupSales(a) + plansAnswer(a), bindings: a.b.bindings };
  sql += byWarehouse
    ? warehouseWeights(a) + warehousePieces(a)
    : `${groupSales(a)},
    gp AS (SELECT g, idx, sum(plan) AS plan, sum(actual) AS actual FROM gcp GROUP BY 1, 2)`;
  sql += (readsGroupMonths(a) ? groupStockInputs(a) : stockInputs(a)) + figures(a) + grid(a) + remaining(a) + projection(a);
  return { sql, bindings: a.b.bindings };
}

/** What names an answer row of each shape, in its order, and the name that goes with it. */
const ROW_KEYS: Record<Shape, { keys: string; named: string }> = {
  plans: { keys: "y.g, y.channel", named: "" },
  groups: { keys: "y.g", named: "" },
  warehouses: { keys: "y.g, y.wid", named: ", y.wname" },
};
/** A sales-plans period's figures, in the order each element of an answer row's `periods` has them. */
export const SALES_PLAN_FIELDS = ["idx", "plan", "actual", "share"] as const;
/** A breakdown period's figures (by warehouse or not), likewise. */
export const BREAKDOWN_FIELDS = ["idx", "state", "plan", "actual", "po", "draft", "tin", "tout", "opening", "closing", "target", "otb"] as const;

/**
 * The rows of an answer, or of a slice of its groups: one per answer row (group[, channel |
 * warehouse]) in REST order, its periods folded into one text, `periods`: each period's figures
 * (SALES_PLAN_FIELDS or BREAKDOWN_FIELDS, a null as nothing) joined by ",", the periods by ";" in
 * period order. The reader parses one field per answer row instead of a row of a dozen fields per
 * period, which cost it more CPU than the statement cost Postgres. A page (never a slice) also has
 * each row's `grank` and `next_after` (paged).
 */
export function answerStatement(accountId: string, q: BreakdownQuery, shape: Shape, account: { tz: string; growth: string; today: string }, periods: PeriodSpan[], slice?: Slice) {
  const { keys, named } = ROW_KEYS[shape];
  const fields = shape === "plans" ? SALES_PLAN_FIELDS : BREAKDOWN_FIELDS;
  const page = slice ? undefined : q.volumes.page;
  const rows = paged(breakdownStatement(accountId, q, shape, account, periods, slice), `${keys}, y.idx`, page);
  const also = `${named}${page ? ", y.grank, y.next_after" : ""}`;
  return {
    sql: `SELECT ${keys}${also}, string_agg(concat(${fields.map((field) => `y.${field}`).join(", ',', ")}), ';' ORDER BY y.idx) AS periods
      FROM (${rows.sql}) y GROUP BY ${keys}${also} ORDER BY ${keys}`,
    bindings: rows.bindings,
  };
}

/** The instant of updatedSince: as given, or its date's start in the account's timezone. */
const sinceInstant = (a: Answer) => {
  const since = a.q.volumes.updatedSince!;
  return "instant" in since ? `${a.b.v(since.instant)}::timestamptz` : startOf(a, since.date);
};

/**
 * The groups (by warehouse: rows) any input of which changed since updatedSince: PO lines,
 * changed_groups (removals and moves; '' and no warehouse id: every row of the group), stock,
 * sales, stored plans, distribution orders (both warehouses), stock triggers; a settings change:
 * every group. By warehouse, a sale or a plan changes every row of its group (they are split over
 * the SKU's warehouses, and a sale moves the shares): `rows` is the CTE of the rows to expand to.
 */
function changedGroups(a: Answer, rows: string): string {
  const at = () => sinceInstant(a);
  const acc = () => a.b.v(a.accountId);
  const all = wid(a, "NULL::text");
  const known = (col: string) => wid(a, `coalesce((SELECT wx.warehouse_id::text FROM wx WHERE wx.external_id = ${col}), '')`);
  const g = groupColumn[a.q.volumes.groupBy];
  const changed = `
      SELECT s.g${known("l.external_warehouse_id")} FROM purchase_order_lines l JOIN s USING (sku_id) WHERE l.account_id = ${acc()} AND l.changed_at > ${at()}
      UNION SELECT coalesce(c.${g}, '')${wid(a, "coalesce(c.warehouse_id::text, CASE WHEN c.external_warehouse_id = '' THEN NULL ELSE coalesce((SELECT wx.warehouse_id::text FROM wx WHERE wx.external_id = c.external_warehouse_id), '') END)")}
        FROM changed_groups c JOIN s USING (sku_id) WHERE c.account_id = ${acc()} AND c.changed_at > ${at()}
      UNION SELECT s.g${wid(a, "st.warehouse_id::text")} FROM stock st JOIN s USING (sku_id) WHERE st.account_id = ${acc()} AND st.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_lines l JOIN s ON s.key = l.key WHERE l.account_id = ${acc()} AND l.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_lines l JOIN s ON s.sku = l.sku WHERE l.account_id = ${acc()} AND l.key IS NULL AND l.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_lines l JOIN s ON s.ean = l.ean WHERE l.account_id = ${acc()} AND l.key IS NULL AND l.sku IS NULL AND l.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_plans p JOIN s USING (sku_id) WHERE p.account_id = ${acc()} AND p.updated_at > ${at()}
      UNION SELECT s.g${known("o.to_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.key = o.key WHERE o.account_id = ${acc()} AND o.changed_at > ${at()}
      UNION SELECT s.g${known("o.from_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.key = o.key WHERE o.account_id = ${acc()} AND o.changed_at > ${at()}
      UNION SELECT s.g${known("o.to_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.sku = o.sku WHERE o.account_id = ${acc()} AND o.key IS NULL AND o.changed_at > ${at()}
      UNION SELECT s.g${known("o.from_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.sku = o.sku WHERE o.account_id = ${acc()} AND o.key IS NULL AND o.changed_at > ${at()}
      UNION SELECT s.g${wid(a, "coalesce((SELECT w.warehouse_id::text FROM w WHERE w.warehouse_id = t.warehouse_id), '')")} FROM stock_trigger_minimums t JOIN s USING (sku_id) WHERE t.account_id = ${acc()} AND t.changed_at > ${at()}`;
  const everything = `EXISTS (SELECT 1 FROM accounts WHERE account_id = ${acc()} AND changed_at > ${at()})`;
  if (!a.byWarehouse) return `SELECT g FROM (${changed}) c UNION SELECT DISTINCT g FROM ${rows} WHERE ${everything}`;
  return `WITH c AS (${changed})
      SELECT g, wid FROM c WHERE wid IS NOT NULL
      UNION SELECT DISTINCT x.g, x.wid FROM ${rows} x WHERE x.g IN (SELECT g FROM c WHERE wid IS NULL) OR ${everything}`;
}

/**
 * The next slice of a whole answer after `after`: its groups up to the group of the selected SKU
 * that comes `size` places after the first (in group order; none when no more than `size`
 * remain: the last slice takes the rest), their selected SKUs and what names those in sales.
 * Slices end at a group's end: no group is split.
 */
export async function nextSlice(tx: Knex.Transaction, accountId: string, q: BreakdownQuery, after: string | undefined, size: number): Promise<Slice> {
  const g = groupKeyOf(q.volumes.groupBy);
  /** `SELECT <columns> FROM <from>` over the selected SKUs `s` of the groups in `range`. Named, as the cursors are, for whoever looks at pg_stat_activity. */
  const selected = (columns: string, from: string, range: GroupRange) => {
    const where = skuWhere(q.volumes.filters);
    const bindings: Knex.RawBinding[] = [accountId, ...where.bindings];
    const sql = `/* breakdown slice */ SELECT ${columns} FROM ${from} WHERE s.account_id = ? AND ${where.sql}${groupsIn(g, range, (value) => (bindings.push(value), "?"))}`;
    return { sql, bindings };
  };
  const bound = selected(`${g} AS g`, "skus s", { after });
  const upTo: string | undefined = (await tx.raw(`${bound.sql} ORDER BY 1 OFFSET ? LIMIT 1`, [...bound.bindings, size])).rows[0]?.g;
  const slice = selected(
    "coalesce(array_agg(DISTINCT s.sku_id::text), '{}') AS ids, coalesce(array_agg(DISTINCT ref) FILTER (WHERE ref IS NOT NULL), '{}') AS refs",
    "skus s CROSS JOIN LATERAL unnest(ARRAY[s.key, s.sku, s.ean]) AS ref",
    { after, upTo },
  );
  const { rows } = await tx.raw(slice.sql, slice.bindings);
  return { after, upTo, skuIds: rows[0].ids, refs: rows[0].refs };
}

type Statement = { sql: string; bindings: Knex.RawBinding[] };

/**
 * Runs a statement through a cursor, or several one after the other (a whole answer's slices,
 * made as the previous one ends) in one snapshot (REPEATABLE READ: the slices see the same data),
 * yielding their rows in batches. Hash joins only (as planned volumes; a slice reads its SKUs'
 * rows of each input through an index, `= ANY` of their ids, and joins them by hash too: nested
 * loops on the estimates of such a statement ran for minutes). Without JIT: the few
 * nested loops it cannot avoid (each period's days, every group times every period) carry the
 * disabled-nestloop cost, which pushes the estimate past jit_above_cost, and compiling took 6 s
 * for a statement that runs in milliseconds. The whole answer is read (cursor_tuple_fraction 1:
 * no plan chosen for a fast first row), and its hash aggregates (SKUs x channels x months) get the
 * memory to stay off disk. A statement takes seconds at 100,000 SKUs, more than the pool's
 * DB_STATEMENT_TIMEOUT_MS: it gets its own limit, and the driver's read timeout (libs/db) a second
 * more; past it the call is UNAVAILABLE (503). When `signal` aborts (the caller left), the running
 * statement is cancelled (pg_cancel_backend from a connection of its own: this one is busy with
 * it) and the transaction rolled back, so the connection is free again at once rather than when
 * the statement ends.
 */
export async function* cursorRows(
  db: Db,
  statements: Statement | ((tx: Knex.Transaction) => AsyncGenerator<Statement>),
  batch: number,
  timeoutMs: number,
  signal?: AbortSignal,
): AsyncGenerator<Record<string, string>[]> {
  signal?.throwIfAborted();
  const tx = await db.transaction();
  const limit = { query_timeout: timeoutMs + 1_000 };
  const connection = await tx.client.acquireConnection();
  const cancel = () => void db.client.cancelQuery(connection).catch(() => undefined);
  signal?.addEventListener("abort", cancel, { once: true });
  const sliced = typeof statements === "function";
  try {
    signal?.throwIfAborted();
    await tx.raw(
      `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL enable_nestloop = off; SET LOCAL jit = off; SET LOCAL cursor_tuple_fraction = 1; SET LOCAL work_mem = '64MB'; SET LOCAL statement_timeout = ${Math.round(timeoutMs)}`,
    );
    for await (const statement of sliced ? statements(tx) : [statements]) {
      await tx.raw(`DECLARE breakdown NO SCROLL CURSOR FOR ${statement.sql}`, statement.bindings).options(limit);
      for (;;) {
        signal?.throwIfAborted();
        const { rows } = await tx.raw(`FETCH ${batch} FROM breakdown`).options(limit);
        if (!rows.length) break;
        yield rows;
      }
      await tx.raw("CLOSE breakdown");
    }
    await tx.commit();
  } finally {
    signal?.removeEventListener("abort", cancel);
    if (!tx.isCompleted()) await tx.rollback();
  }
}
