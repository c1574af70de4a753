// The tests' oracle: planning's answers as they were computed before the rollups (issue 46), one
// statement over the raw sale lines, kept unchanged. The property test (rollups.test.ts) requires
// every answer from the rollups to equal this one's.
import type { Knex } from "knex";
import { DecimalSchema, type Decimal, type planningV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
// The service's cursor runner (one statement through a cursor, hash joins only): not part of the statement.
import { cursorRows, skuWhere, groupColumn } from "../src/repository";
import { addDays, monthStart, nextMonth, periodsOf, type PeriodSpan } from "../src/periods";
import type { BreakdownQuery } from "../src/validation";

/**
 * The later revision's answers (CONTRACT "Planning: the later revision"): sales plans, the
 * breakdown and the breakdown by warehouse, by period. Each is one set-based statement over the
 * replica, read through a cursor and streamed in chunks of rows in REST order, so no answer is
 * ever held whole.
 *
 * Decisions the contract leaves open (docs/planning.md "Breakdowns"):
 * - A transaction without a channel (0) counts as D2C (1), so the rows per channel sum to the
 *   breakdown's figures.
 * - A SKU's plan per channel and period is rounded to 3 decimals (its stored and its baseline
 *   part each, half away from zero) before anything is summed; groups sum those. By warehouse,
 *   each SKU's plan and actuals per period are split over its warehouses by cumulative
 *   rounding: a warehouse's piece is round(figure × the share of the warehouses up to it, 3)
 *   minus the same up to the one before it (in warehouse-id order), within 0.001 of its exact
 *   share, and the pieces sum exactly to the SKU's figure. (Largest remainder gives the same
 *   guarantee but needs two window sorts over SKUs × periods × warehouses; the cumulative shares
 *   are per SKU and warehouse, computed once for every period.)
 * - The baseline is never negative (a month with more returns than sales plans 0).
 * - The remaining plan of the current period is max(0, plan - actual) of the group row; by
 *   warehouse it is that figure split over the group's warehouses in proportion to each one's own
 *   max(0, plan - actual) (largest remainder): equal to that whenever no warehouse sold past its
 *   plan, and always summing to the group's, so that every stock figure sums to the group row.
 */

/** The account's timezone (UTC when unknown), salesPlanGrowth and today in that timezone. */
async function accountOf(db: Db, accountId: string): Promise<{ tz: string; growth: string; today: string }> {
  const { rows } = await db.raw(
    `SELECT tz, coalesce((SELECT sales_plan_growth FROM accounts WHERE account_id = ?), 0)::text AS growth, to_char((now() AT TIME ZONE tz)::date, 'YYYY-MM-DD') AS today
     FROM (SELECT coalesce((SELECT timezone FROM accounts WHERE account_id = ? AND timezone IN (SELECT name FROM timezone_names)), 'UTC') AS tz) a`,
    [accountId, accountId],
  );
  return rows[0];
}

type Shape = "plans" | "groups" | "warehouses";

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

/**
 * The statement of one answer. Its rows are one per (group[, channel | warehouse], period), in
 * REST order; `reported` periods only.
 */
export function breakdownStatement(accountId: string, q: BreakdownQuery, shape: Shape, account: { tz: string; growth: string; today: string }, periods: PeriodSpan[]) {
  const b = new Sql();
  const { v } = b;
  const { tz, growth, today } = account;
  const g = groupColumn[q.volumes.groupBy];
  const byWarehouse = shape === "warehouses";
  const first = periods[0].start;
  const last = periods[periods.length - 1].end;
  /** The instant a day starts in the account's timezone. */
  const at = (day: string) => `(${v(day)}::date)::timestamp AT TIME ZONE ${v(tz)}`;
  const dayOf = (instant: string) => `(${instant} AT TIME ZONE ${v(tz)})::date`;
  /**
   * Sales lines in [from, to) matched to the filtered SKUs: by key, else by sku, else by ean, as
   * sent. A line without a channel is D2C.
   */
  const sales = (from: string, to: string) => `(
      SELECT s.sku_id, CASE WHEN l.channel = 2 THEN 2 ELSE 1 END AS channel, l.sold_at, l.units, l.external_warehouse_id
      FROM sales_lines l JOIN s ON s.key = l.key
      WHERE l.account_id = ${v(accountId)} AND l.sold_at >= ${at(from)} AND l.sold_at < ${at(to)}
      UNION ALL
      SELECT s.sku_id, CASE WHEN l.channel = 2 THEN 2 ELSE 1 END, l.sold_at, l.units, l.external_warehouse_id
      FROM sales_lines l JOIN s ON s.sku = l.sku
      WHERE l.account_id = ${v(accountId)} AND l.key IS NULL AND l.sold_at >= ${at(from)} AND l.sold_at < ${at(to)}
      UNION ALL
      SELECT s.sku_id, CASE WHEN l.channel = 2 THEN 2 ELSE 1 END, l.sold_at, l.units, l.external_warehouse_id
      FROM sales_lines l JOIN s ON s.ean = l.ean
      WHERE l.account_id = ${v(accountId)} AND l.key IS NULL AND l.sku IS NULL AND l.sold_at >= ${at(from)} AND l.sold_at < ${at(to)})`;
  /** A year before a month's first day. */
  const yearBefore = (d: string) => `${Number(d.slice(0, 4)) - 1}${d.slice(4)}`;
  const channels = () => v(q.channels);

  let sql = `WITH s AS NOT MATERIALIZED (
      SELECT s.sku_id, s.key, s.sku, s.ean, coalesce(s.${g}, '') AS g FROM skus s WHERE s.account_id = ${v(accountId)} AND ${b.with(skuWhere(q.volumes.filters))}),
    w AS NOT MATERIALIZED (SELECT warehouse_id, external_id, name FROM warehouses WHERE account_id = ${v(accountId)} AND NOT deleted),
    wx AS NOT MATERIALIZED (SELECT DISTINCT ON (external_id) external_id, warehouse_id FROM w WHERE external_id <> '' ORDER BY external_id, warehouse_id),
    per AS (SELECT * FROM jsonb_to_recordset(${v(JSON.stringify(periods.map((p, idx) => ({ idx, ...p }))))}::jsonb) AS p(idx int, start date, "end" date, state text, reported boolean)),
    d AS (SELECT x.day::date AS day, per.idx FROM per, generate_series(per.start, per."end", interval '1 day') AS x(day)),
    -- Each period's days per month, and the month's length: a period's plan is its days' share of its months' plans.
    pm AS (SELECT idx, date_trunc('month', day)::date AS month, count(*)::numeric AS days,
        extract(day FROM date_trunc('month', day) + interval '1 month' - interval '1 day')::numeric AS month_days
      FROM d GROUP BY 1, 2, 4),
    -- The plan per SKU, channel and month: the stored one, else last year's net units grown.
    mp AS (
      SELECT sku_id, channel, month, bool_or(stored) AS stored,
        CASE WHEN bool_or(stored) THEN max(volume) ELSE greatest(0, sum(units)) * (1 + ${v(growth)}::numeric) END AS plan
      FROM (
        SELECT p.sku_id, p.channel, p.month, true AS stored, p.volume, 0::bigint AS units
        FROM sales_plans p JOIN s USING (sku_id)
        WHERE p.account_id = ${v(accountId)} AND p.volume IS NOT NULL AND p.month >= ${v(monthStart(first))}::date AND p.month <= ${v(last)}::date AND p.channel = ANY(${channels()}::int[])
        UNION ALL
        SELECT sl.sku_id, sl.channel, (date_trunc('month', sl.sold_at AT TIME ZONE ${v(tz)}) + interval '1 year')::date, false, NULL, sl.units
        FROM ${sales(yearBefore(monthStart(first)), yearBefore(nextMonth(last)))} sl
        WHERE sl.channel = ANY(${channels()}::int[])
      ) x GROUP BY 1, 2, 3),
    pp AS (
      SELECT mp.sku_id, mp.channel, pm.idx,
        round(coalesce(sum(mp.plan * pm.days / pm.month_days) FILTER (WHERE mp.stored), 0), 3) AS stored,
        round(coalesce(sum(mp.plan * pm.days / pm.month_days) FILTER (WHERE NOT mp.stored), 0), 3) AS base
      FROM mp JOIN pm USING (month) GROUP BY 1, 2, 3),
    act AS (
      SELECT sl.sku_id, sl.channel, d.idx, sum(sl.units) AS units
      FROM ${sales(first, addDays(last, 1))} sl JOIN d ON d.day = ${dayOf("sl.sold_at")}
      WHERE sl.channel = ANY(${channels()}::int[]) GROUP BY 1, 2, 3),
    -- Per SKU, channel and period: stored plan, plan, actual; summed once by each answer's own keys.
    scp AS NOT MATERIALIZED (
      SELECT sku_id, channel, idx, stored, stored + base AS plan, 0::numeric AS actual FROM pp
      UNION ALL
      SELECT sku_id, channel, idx, 0, 0, units FROM act)`;

  const since = q.volumes.updatedSince;
  const sinceAt = () => (since ? ("instant" in since ? `${v(since.instant)}::timestamptz` : at(since.date)) : "");

  if (shape === "plans") {
    sql += `,
    gcp AS (SELECT s.g, x.channel, x.idx, sum(x.stored) AS stored, sum(x.plan) AS plan, sum(x.actual) AS actual FROM scp x JOIN s USING (sku_id) GROUP BY 1, 2, 3),
    grp AS (${since ? changedGroups(b, accountId, sinceAt, g, "gcp", false) : "SELECT DISTINCT g FROM gcp JOIN per USING (idx) WHERE per.reported"})
    SELECT grp.g, c.channel, per.idx,
      coalesce(gcp.plan, 0)::text AS plan, coalesce(gcp.actual, 0)::text AS actual,
      CASE WHEN coalesce(gcp.plan, 0) = 0 THEN 0 ELSE round(gcp.stored / gcp.plan, 6) END::text AS share
    FROM grp CROSS JOIN unnest(${channels()}::int[]) AS c(channel) CROSS JOIN per
    LEFT JOIN gcp ON gcp.g = grp.g AND gcp.channel = c.channel AND gcp.idx = per.idx
    WHERE per.reported
    ORDER BY grp.g, c.channel, per.idx`;
    return { sql, bindings: b.bindings };
  }

  const wid = (expr: string) => (byWarehouse ? `, ${expr} AS wid` : "");
  const keys = byWarehouse ? "g, wid" : "g";
  /** The keys of `alias`; the condition that `a`'s and `b`'s keys are equal. */
  const on = (alias: string, ks: string) => ks.split(", ").map((k) => `${alias}.${k}`).join(", ");
  const same = (a: string, b: string, ks: string) => ks.split(", ").map((k) => `${a}.${k} = ${b}.${k}`).join(" AND ");
  if (byWarehouse) {
    // Plans and actuals split over each SKU's warehouses: by units shipped from each (known)
    // warehouse in the 12 months before today, else equally over the warehouses holding its
    // stock, else none ("").
    const yearAgo = `${Number(today.slice(0, 4)) - 1}${today.slice(4) === "-02-29" ? "-02-28" : today.slice(4)}`;
    sql += `,
    sp AS (SELECT sku_id, idx, sum(plan) AS plan, sum(actual) AS actual FROM scp GROUP BY 1, 2),
    ship AS (
      SELECT sl.sku_id, wx.warehouse_id::text AS wid, sum(sl.units)::numeric AS weight
      FROM ${sales(yearAgo, today)} sl JOIN wx ON wx.external_id = sl.external_warehouse_id
      WHERE sl.units > 0 AND sl.sku_id IN (SELECT sku_id FROM sp) GROUP BY 1, 2),
    held AS (
      SELECT st.sku_id, st.warehouse_id::text AS wid, 1::numeric AS weight
      FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id)
      WHERE st.account_id = ${v(accountId)} AND NOT st.deleted AND st.available_quantity > 0
        AND st.sku_id IN (SELECT sku_id FROM sp) AND NOT EXISTS (SELECT 1 FROM ship WHERE ship.sku_id = st.sku_id)),
    -- Each warehouse's share as the cumulative fraction of the SKU's weight up to it and before it
    -- (warehouses in id order): the last one's is exactly 1.
    share AS (
      SELECT sku_id, wid,
        sum(weight) OVER (PARTITION BY sku_id ORDER BY wid ROWS UNBOUNDED PRECEDING) / sum(weight) OVER (PARTITION BY sku_id) AS upto,
        (sum(weight) OVER (PARTITION BY sku_id ORDER BY wid ROWS UNBOUNDED PRECEDING) - weight) / sum(weight) OVER (PARTITION BY sku_id) AS before
      FROM (SELECT * FROM ship UNION ALL SELECT * FROM held) x),
    -- A warehouse's piece: the figure's cumulative share up to it, rounded to 3 decimals, minus
    -- the same up to the warehouse before it. Within 0.001 of the exact share, and the pieces of
    -- a SKU's figure telescope to exactly the figure.
    pieces AS (
      SELECT sp.sku_id, sp.idx, coalesce(sh.wid, '') AS wid,
        round(sp.plan * coalesce(sh.upto, 1), 3) - round(sp.plan * coalesce(sh.before, 0), 3) AS plan,
        round(sp.actual * coalesce(sh.upto, 1), 3) - round(sp.actual * coalesce(sh.before, 0), 3) AS actual
      FROM sp LEFT JOIN share sh USING (sku_id)),
    -- Summed per group, warehouse and period by gx, with the other figures (not grouped twice).
    gp AS NOT MATERIALIZED (SELECT s.g, x.wid, x.idx, x.plan, x.actual FROM pieces x JOIN s USING (sku_id)),
    dos AS (
      SELECT s.g, d.idx, o.from_external_warehouse_id AS f, o.to_external_warehouse_id AS t, o.open_quantity AS q
      FROM distribution_orders o JOIN s ON s.key = o.key JOIN d ON d.day = ${dayOf("o.delivered_at")}
      WHERE o.account_id = ${v(accountId)} AND o.open_quantity > 0 AND o.delivered_at >= ${at(first)} AND o.delivered_at < ${at(addDays(last, 1))}
      UNION ALL
      SELECT s.g, d.idx, o.from_external_warehouse_id, o.to_external_warehouse_id, o.open_quantity
      FROM distribution_orders o JOIN s ON s.sku = o.sku JOIN d ON d.day = ${dayOf("o.delivered_at")}
      WHERE o.account_id = ${v(accountId)} AND o.key IS NULL AND o.open_quantity > 0 AND o.delivered_at >= ${at(first)} AND o.delivered_at < ${at(addDays(last, 1))})`;
  } else {
    sql += `,
    gp AS (SELECT s.g, x.idx, sum(x.plan) AS plan, sum(x.actual) AS actual FROM scp x JOIN s USING (sku_id) GROUP BY 1, 2)`;
  }
  const poWid = wid("coalesce(wx.warehouse_id::text, '')");
  sql += `,
    po AS (
      SELECT s.g${poWid}, d.idx, sum(CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END) AS po, sum(CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END) AS draft
      FROM purchase_order_lines l JOIN s USING (sku_id) JOIN d ON d.day = l.delivery_date ${byWarehouse ? "LEFT JOIN wx ON wx.external_id = l.external_warehouse_id" : ""}
      WHERE l.account_id = ${v(accountId)} AND l.kind <> 'cancelled' AND l.delivery_date BETWEEN ${v(first)}::date AND ${v(last)}::date
      GROUP BY ${keys}, d.idx),
    stk AS (
      SELECT s.g${wid("st.warehouse_id::text")}, sum(st.available_quantity) AS stock
      FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id)
      WHERE st.account_id = ${v(accountId)} AND NOT st.deleted GROUP BY ${keys}),
    -- A trigger counts unless its warehouse was deleted; one whose warehouse planning does not know is under "".
    tgt AS (
      SELECT s.g${wid("coalesce(w.warehouse_id::text, '')")}, sum(coalesce(t.min, 0)) AS target
      FROM stock_trigger_minimums t JOIN s USING (sku_id) LEFT JOIN w USING (warehouse_id)
      WHERE t.account_id = ${v(accountId)} AND NOT EXISTS (SELECT 1 FROM warehouses x WHERE x.account_id = t.account_id AND x.warehouse_id = t.warehouse_id AND x.deleted)
      GROUP BY ${keys}),
    gx AS (
      SELECT ${keys}, idx, sum(plan) AS plan, sum(actual) AS actual, sum(po) AS po, sum(draft) AS draft, sum(tin) AS tin, sum(tout) AS tout, sum(stock) AS stock, sum(target) AS target FROM (
        SELECT ${keys}, idx, plan, actual, 0 AS po, 0 AS draft, 0 AS tin, 0 AS tout, 0 AS stock, 0 AS target FROM gp
        UNION ALL SELECT ${keys}, idx, 0, 0, po, draft, 0, 0, 0, 0 FROM po
        UNION ALL SELECT ${keys}, NULL, 0, 0, 0, 0, 0, 0, stock, 0 FROM stk
        UNION ALL SELECT ${keys}, NULL, 0, 0, 0, 0, 0, 0, 0, target FROM tgt
        ${
          byWarehouse
            ? `UNION ALL SELECT g, coalesce(wx.warehouse_id::text, ''), idx, 0, 0, 0, 0, q, 0, 0, 0 FROM dos LEFT JOIN wx ON wx.external_id = dos.t
        UNION ALL SELECT g, coalesce(wx.warehouse_id::text, ''), idx, 0, 0, 0, 0, 0, q, 0, 0 FROM dos LEFT JOIN wx ON wx.external_id = dos.f`
            : ""
        }
      ) x GROUP BY ${keys}, idx),
    -- Every row's key with its stock and target (only gx's rows without a period carry those).
    fixed AS (SELECT ${keys}, sum(stock) AS stock, sum(target) AS target FROM gx GROUP BY ${keys}),
    grp AS (${
      since
        ? `SELECT ${on("c", keys)}, coalesce(f.stock, 0) AS stock, coalesce(f.target, 0) AS target
      FROM (${changedGroups(b, accountId, sinceAt, g, "gx", byWarehouse)}) c LEFT JOIN fixed f ON ${same("f", "c", keys)}`
        : "SELECT * FROM fixed"
    }),
    -- Warehouse names joined once per row, not per row and period: the answer keeps gx's order.
    named AS (SELECT grp.*${byWarehouse ? ", coalesce(wn.name, '') AS wname FROM grp LEFT JOIN w wn ON wn.warehouse_id::text = grp.wid" : " FROM grp"}),
    grid AS (
      SELECT ${on("n", keys)}${byWarehouse ? ", n.wname" : ""}, per.idx, per.state, per.reported,
        coalesce(gx.plan, 0) AS plan, coalesce(gx.actual, 0) AS actual, coalesce(gx.po, 0) AS po, coalesce(gx.draft, 0) AS draft,
        coalesce(gx.tin, 0) AS tin, coalesce(gx.tout, 0) AS tout, n.stock, n.target
      FROM named n CROSS JOIN per
      LEFT JOIN gx ON ${same("gx", "n", keys)} AND gx.idx = per.idx),`;
  if (byWarehouse) {
    // The current period's remaining plan: the group's max(0, plan - actual), split over its
    // warehouses by each one's own max(0, plan - actual), in thousandths by the largest remainder.
    sql += `
    -- (From gx's rows of the current period: a row without any has weight 0 and gets 0.)
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
      FROM grid LEFT JOIN cur ON cur.g = grid.g AND cur.wid = grid.wid AND grid.state = 'current'),`;
  } else {
    sql += `
    flows AS (SELECT grid.*, CASE state WHEN 'current' THEN greatest(0, plan - actual) WHEN 'future' THEN plan ELSE 0 END AS rem FROM grid),`;
  }
  sql += `
    proj AS (
      SELECT *, CASE WHEN state <> 'past' THEN stock + sum(CASE WHEN state <> 'past' THEN po + draft + tin - tout - rem ELSE 0 END) OVER (PARTITION BY ${keys} ORDER BY idx) END AS closing
      FROM flows)
    SELECT p.g${byWarehouse ? ", p.wid, p.wname" : ""}, p.idx, p.state,
      p.plan::text AS plan, p.actual::text AS actual, p.po::text AS po, p.draft::text AS draft, p.tin::text AS tin, p.tout::text AS tout,
      (p.closing - (p.po + p.draft + p.tin - p.tout - p.rem))::text AS opening, p.closing::text AS closing,
      CASE WHEN p.state <> 'past' THEN p.target END::text AS target,
      CASE WHEN p.state <> 'past' THEN greatest(0, p.rem + p.target - (p.closing - (p.po + p.draft + p.tin - p.tout - p.rem)) - p.po) END::text AS otb
    FROM proj p
    WHERE p.reported
    ORDER BY p.g${byWarehouse ? ", p.wid" : ""}, p.idx`;
  return { sql, bindings: b.bindings };
}

/**
 * The groups (by warehouse: rows) any input of which changed after `at`: PO lines, changed_groups
 * (removals and moves; '' and no warehouse id: every row of the group), stock, sales, stored
 * plans, distribution orders (both warehouses), stock triggers; a settings change: every group.
 * By warehouse, a sale or a plan changes every row of its group (they are split over the SKU's
 * warehouses, and a sale moves the shares): `rows` is the CTE of the computed rows to expand to.
 */
function changedGroups(b: Sql, accountId: string, at: () => string, groupColumnName: string, rows: string, byWarehouse: boolean): string {
  const { v } = b;
  const a = () => v(accountId);
  const wid = (expr: string) => (byWarehouse ? `, ${expr} AS wid` : "");
  const all = wid("NULL::text");
  const known = (col: string) => wid(`coalesce((SELECT wx.warehouse_id::text FROM wx WHERE wx.external_id = ${col}), '')`);
  const changed = `
      SELECT s.g${known("l.external_warehouse_id")} FROM purchase_order_lines l JOIN s USING (sku_id) WHERE l.account_id = ${a()} AND l.changed_at > ${at()}
      UNION SELECT coalesce(c.${groupColumnName}, '')${wid("coalesce(c.warehouse_id::text, CASE WHEN c.external_warehouse_id = '' THEN NULL ELSE coalesce((SELECT wx.warehouse_id::text FROM wx WHERE wx.external_id = c.external_warehouse_id), '') END)")}
        FROM changed_groups c JOIN s USING (sku_id) WHERE c.account_id = ${a()} AND c.changed_at > ${at()}
      UNION SELECT s.g${wid("st.warehouse_id::text")} FROM stock st JOIN s USING (sku_id) WHERE st.account_id = ${a()} AND st.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_lines l JOIN s ON s.key = l.key WHERE l.account_id = ${a()} AND l.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_lines l JOIN s ON s.sku = l.sku WHERE l.account_id = ${a()} AND l.key IS NULL AND l.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_lines l JOIN s ON s.ean = l.ean WHERE l.account_id = ${a()} AND l.key IS NULL AND l.sku IS NULL AND l.changed_at > ${at()}
      UNION SELECT s.g${all} FROM sales_plans p JOIN s USING (sku_id) WHERE p.account_id = ${a()} AND p.updated_at > ${at()}
      UNION SELECT s.g${known("o.to_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.key = o.key WHERE o.account_id = ${a()} AND o.changed_at > ${at()}
      UNION SELECT s.g${known("o.from_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.key = o.key WHERE o.account_id = ${a()} AND o.changed_at > ${at()}
      UNION SELECT s.g${known("o.to_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.sku = o.sku WHERE o.account_id = ${a()} AND o.key IS NULL AND o.changed_at > ${at()}
      UNION SELECT s.g${known("o.from_external_warehouse_id")} FROM distribution_orders o JOIN s ON s.sku = o.sku WHERE o.account_id = ${a()} AND o.key IS NULL AND o.changed_at > ${at()}
      UNION SELECT s.g${wid("coalesce((SELECT w.warehouse_id::text FROM w WHERE w.warehouse_id = t.warehouse_id), '')")} FROM stock_trigger_minimums t JOIN s USING (sku_id) WHERE t.account_id = ${a()} AND t.changed_at > ${at()}`;
  const everything = `EXISTS (SELECT 1 FROM accounts WHERE account_id = ${a()} AND changed_at > ${at()})`;
  if (!byWarehouse) return `SELECT g FROM (${changed}) c UNION SELECT DISTINCT g FROM ${rows} WHERE ${everything}`;
  return `WITH c AS (${changed})
      SELECT g, wid FROM c WHERE wid IS NOT NULL
      UNION SELECT DISTINCT x.g, x.wid FROM ${rows} x WHERE x.g IN (SELECT g FROM c WHERE wid IS NULL) OR ${everything}`;
}

export type SalesPlanRow = Omit<planningV1.SalesPlanRow, "$typeName" | "$unknown" | "periods"> & { periods: Omit<planningV1.SalesPlanPeriod, "$typeName" | "$unknown">[] };
type BreakdownPeriodOut = Omit<planningV1.BreakdownPeriod, "$typeName" | "$unknown">;
export type BreakdownRowOut = { groupKey: string; periods: BreakdownPeriodOut[] };
export type BreakdownWarehouseRowOut = BreakdownRowOut & { warehouseId: string; warehouseName: string };

/** A numeric's text as a Decimal, without trailing zeros; null: unset. */
function decimal(value: string | null): Decimal | undefined {
  if (value === null) return undefined;
  // A literal, not create(): an answer by SKU holds millions of them, and Connect copies the response anyway.
  return { $typeName: DecimalSchema.typeName, value: value.includes(".") ? value.replace(/\.?0+$/, "") : value } as Decimal;
}

const CHUNK = 500;

/** PLANNING_QUERY_TIMEOUT_MS's default: the longest an answer's statement may run. */
export const QUERY_TIMEOUT_MS = 120_000;

/**
 * What the caller may set: today (tests), the statement timeout (PLANNING_QUERY_TIMEOUT_MS) and the
 * call's signal (its client gone: the statement is cancelled).
 */
export interface AnswerOptions {
  today?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Rows of one statement gathered into answer rows (one per key, its periods in order), CHUNK at a time. */
async function* gathered<R extends { periods: unknown[] }>(rows: AsyncGenerator<Record<string, string>[]>, keyOf: (r: Record<string, string>) => string, start: (r: Record<string, string>) => R, period: (r: Record<string, string>) => R["periods"][number]) {
  let chunk: R[] = [];
  let current: R | undefined;
  let currentKey = "";
  for await (const batch of rows) {
    for (const r of batch) {
      const key = keyOf(r);
      if (!current || key !== currentKey) {
        if (chunk.length === CHUNK) {
          yield chunk;
          chunk = [];
        }
        current = start(r);
        currentKey = key;
        chunk.push(current);
      }
      current.periods.push(period(r));
    }
  }
  if (chunk.length) yield chunk;
}

async function prepare(db: Db, accountId: string, q: BreakdownQuery, today?: string) {
  const account = await accountOf(db, accountId);
  if (today) account.today = today;
  const periods = periodsOf(q.period, q.volumes.fromDate, q.volumes.toDate, account.today);
  const reported = periods.filter((p) => p.reported);
  return { account, periods, reported };
}

/** GET /planning/sales-plans: rows per group and channel, in chunks. */
export async function* salesPlans(db: Db, accountId: string, q: BreakdownQuery, { today, timeoutMs = QUERY_TIMEOUT_MS, signal }: AnswerOptions = {}): AsyncGenerator<SalesPlanRow[]> {
  const { account, periods, reported } = await prepare(db, accountId, q, today);
  const span = (r: Record<string, string>) => periods[Number(r.idx)];
  yield* gathered<SalesPlanRow>(
    cursorRows(db, breakdownStatement(accountId, q, "plans", account, periods), CHUNK * reported.length, timeoutMs, signal),
    (r) => `${r.g}\u0000${r.channel}`,
    (r) => ({ groupKey: r.g, channel: Number(r.channel), periods: [] }),
    (r) => ({ periodStart: span(r).start, periodEnd: span(r).end, salesPlanVolume: decimal(r.plan), salesActualVolume: decimal(r.actual), storedPlanShare: decimal(r.share) }),
  );
}

function breakdownPeriod(periods: PeriodSpan[], r: Record<string, string>, byWarehouse: boolean): BreakdownPeriodOut {
  const span = periods[Number(r.idx)];
  const past = r.state === "past";
  return {
    periodStart: span.start,
    periodEnd: span.end,
    openingStockVolume: past ? undefined : decimal(r.opening),
    salesPlanVolume: decimal(r.plan),
    salesActualVolume: decimal(r.actual),
    poVolume: decimal(r.po),
    draftPoVolume: decimal(r.draft),
    closingStockVolume: past ? undefined : decimal(r.closing),
    targetStockVolume: decimal(r.target),
    openToBuyVolume: decimal(r.otb),
    transferInVolume: byWarehouse ? decimal(r.tin) : undefined,
    transferOutVolume: byWarehouse ? decimal(r.tout) : undefined,
  };
}

/** GET /planning/breakdown: a row per group, in chunks. */
export async function* breakdown(db: Db, accountId: string, q: BreakdownQuery, { today, timeoutMs = QUERY_TIMEOUT_MS, signal }: AnswerOptions = {}): AsyncGenerator<BreakdownRowOut[]> {
  const { account, periods, reported } = await prepare(db, accountId, q, today);
  yield* gathered<BreakdownRowOut>(
    cursorRows(db, breakdownStatement(accountId, q, "groups", account, periods), CHUNK * reported.length, timeoutMs, signal),
    (r) => r.g,
    (r) => ({ groupKey: r.g, periods: [] }),
    (r) => breakdownPeriod(periods, r, false),
  );
}

/** GET /planning/breakdown/by-warehouse: a row per group and warehouse, in chunks. */
export async function* breakdownByWarehouse(db: Db, accountId: string, q: BreakdownQuery, { today, timeoutMs = QUERY_TIMEOUT_MS, signal }: AnswerOptions = {}): AsyncGenerator<BreakdownWarehouseRowOut[]> {
  const { account, periods, reported } = await prepare(db, accountId, q, today);
  yield* gathered<BreakdownWarehouseRowOut>(
    cursorRows(db, breakdownStatement(accountId, q, "warehouses", account, periods), CHUNK * reported.length, timeoutMs, signal),
    (r) => `${r.g}\u0000${r.wid}`,
    (r) => ({ groupKey: r.g, warehouseId: r.wid, warehouseName: r.wname, periods: [] }),
    (r) => breakdownPeriod(periods, r, true),
  );
}
