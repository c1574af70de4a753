// The breakdowns of issue 34 written by hand, independently of services/planning/src: the
// yardstick of `node bench/planning-breakdown.mjs`. Both statements read only planning's tables,
// as one would write them in psql for one account, with the defaults of every filter (skuStatus
// 2..7, activePlanning true), both channels and monthly periods. Rules: CONTRACT.md "Planning: the
// later revision".
//
// Choices where the contract leaves room (the service's code may choose otherwise; the bench
// compares and says where):
// - a sale line names its SKU by key, else (no key) by sku;
// - a baseline is never negative: max(0, last year's net units) per SKU, channel and month;
// - the current period's remaining plan is max(0, plan - actual) of the row (by season: the
//   group's); by warehouse by SKU, the SKU's, split over its warehouses as its plan is;
// - shipments' share: units of sale lines (units > 0) under a live warehouse's external id, sold
//   in [today - 1 year, today) (account days), every channel;
// - "holding its stock": a stock row with available quantity > 0 in a live warehouse.

/** What both statements take besides the account: computed once by `breakdownParams`. */
export interface BreakdownParams {
  tz: string;
  growth: string;
  /** First day of the current month, of the first computed month (min of the window's and the current) and of the last. */
  current: string;
  first: string;
  last: string;
  today: string;
}

/** The account's timezone and growth, today and the computed months, for a window. */
export const paramsSql = `
  WITH a AS (
    SELECT coalesce((SELECT timezone FROM accounts WHERE account_id = $1 AND timezone IN (SELECT name FROM timezone_names)), 'UTC') AS tz,
           coalesce((SELECT sales_plan_growth FROM accounts WHERE account_id = $1), 0)::text AS growth),
  t AS (SELECT tz, growth, (now() AT TIME ZONE tz)::date AS today FROM a)
  SELECT tz, growth, today::text, date_trunc('month', today)::date::text AS current,
    least(date_trunc('month', today), date_trunc('month', $2::date))::date::text AS first,
    date_trunc('month', $3::date)::date::text AS last
  FROM t`;

// Bindings of both statements: $1 account, $2 tz, $3 growth, $4 current month, $5 first month,
// $6 last month, $7 channels, $8 first returned month (the window's), $9 today.
export const bindingsOf = (account: string, p: BreakdownParams, firstReturned: string, which: "seasons" | "warehouse-skus", channels = [1, 2]) =>
  [account, p.tz, p.growth, p.current, p.first, p.last, channels, firstReturned, p.today].slice(0, which === "seasons" ? 8 : 9);

// An instant of a local day in the account's timezone.
const at = (day: string) => `((${day})::timestamp AT TIME ZONE $2)`;
const skus = (group: string) =>
  `SELECT sku_id, key, sku, coalesce(${group}, '') AS g FROM skus WHERE account_id = $1 AND status = ANY('{2,3,4,5,6,7}'::int[]) AND active_planning`;

/**
 * Sale lines of the filtered SKUs in [from, to): by key, else (no key) by sku, as sent. The bench
 * seeds a key on every line, but the rule is the contract's, so the yardstick pays for it too.
 */
const lines = (from: string, to: string) => `(
    SELECT s.sku_id, s.g, l.channel, l.sold_at, l.units, l.external_warehouse_id FROM sales_lines l JOIN s ON s.key = l.key
    WHERE l.account_id = $1 AND l.sold_at >= ${at(from)} AND l.sold_at < ${at(to)}
    UNION ALL
    SELECT s.sku_id, s.g, l.channel, l.sold_at, l.units, l.external_warehouse_id FROM sales_lines l JOIN s ON s.sku = l.sku
    WHERE l.account_id = $1 AND l.key IS NULL AND l.sold_at >= ${at(from)} AND l.sold_at < ${at(to)})`;

/**
 * Breakdown by a group column (season): net units per SKU, channel and month (a baseline is
 * never negative, so it is clamped per SKU, channel and month), summed per group and month; a
 * stored plan replaces its SKU's baseline; the current month's remaining plan is the group's
 * max(0, plan - actual). One row per group and month.
 */
export const seasonsSql = (group = "season") => `
  WITH s AS NOT MATERIALIZED (${skus(group)}),
  months AS (SELECT m::date AS m FROM generate_series($5::date, $6::date, interval '1 month') m),
  -- Net units per SKU, channel and month, from a year before the first computed month to the last.
  sold AS (
    SELECT l.sku_id, l.g, l.channel, date_trunc('month', l.sold_at AT TIME ZONE $2)::date AS m, sum(l.units) AS units
    FROM ${lines("$5::date - interval '1 year'", "$6::date + interval '1 month'")} l
    WHERE l.channel = ANY($7::int[])
    GROUP BY 1, 2, 3, 4),
  gm AS (
    SELECT g, m, sum(plan) AS plan, sum(actual) AS actual FROM (
      SELECT g, m, 0 AS plan, units AS actual FROM sold WHERE m >= $5::date
      UNION ALL
      SELECT x.g, (x.m + interval '1 year')::date, greatest(0, x.units) * (1 + $3::numeric), 0 FROM sold x
      WHERE x.m <= $6::date - interval '1 year' AND NOT EXISTS (
        SELECT 1 FROM sales_plans p WHERE p.account_id = $1 AND p.sku_id = x.sku_id AND p.channel = x.channel AND p.month = (x.m + interval '1 year')::date AND p.volume IS NOT NULL)
      UNION ALL
      SELECT s.g, p.month, p.volume, 0 FROM sales_plans p JOIN s USING (sku_id)
      WHERE p.account_id = $1 AND p.volume IS NOT NULL AND p.channel = ANY($7::int[]) AND p.month BETWEEN $5::date AND $6::date
    ) x GROUP BY 1, 2),
  po AS (
    SELECT s.g, date_trunc('month', l.delivery_date)::date AS m,
      sum(l.open_quantity) FILTER (WHERE l.kind = 'po') AS po, sum(l.open_quantity) FILTER (WHERE l.kind = 'draft') AS draft
    FROM purchase_order_lines l JOIN s USING (sku_id)
    WHERE l.account_id = $1 AND l.kind <> 'cancelled' AND l.delivery_date >= $5::date AND l.delivery_date < $6::date + interval '1 month'
    GROUP BY 1, 2),
  w AS NOT MATERIALIZED (SELECT warehouse_id FROM warehouses WHERE account_id = $1 AND NOT deleted),
  stocked AS (
    SELECT s.g, sum(st.available_quantity) AS stock FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id)
    WHERE st.account_id = $1 AND NOT st.deleted GROUP BY 1),
  target AS (
    SELECT s.g, sum(t.min) AS target FROM stock_trigger_minimums t JOIN s USING (sku_id) JOIN w USING (warehouse_id)
    WHERE t.account_id = $1 GROUP BY 1),
  groups AS (SELECT g FROM gm UNION SELECT g FROM po UNION SELECT g FROM stocked UNION SELECT g FROM target),
  f AS (
    SELECT gr.g, m.m, coalesce(x.plan, 0) AS plan, coalesce(x.actual, 0) AS actual, coalesce(po.po, 0) AS po, coalesce(po.draft, 0) AS draft,
      coalesce(st.stock, 0) AS stock, coalesce(t.target, 0) AS target
    FROM groups gr CROSS JOIN months m
    LEFT JOIN gm x ON x.g = gr.g AND x.m = m.m
    LEFT JOIN po ON po.g = gr.g AND po.m = m.m
    LEFT JOIN stocked st ON st.g = gr.g
    LEFT JOIN target t ON t.g = gr.g),
  r AS (
    SELECT *, CASE WHEN m < $4::date THEN NULL WHEN m = $4::date THEN greatest(0, plan - actual) ELSE plan END AS remaining FROM f),
  c AS (
    SELECT *, CASE WHEN m >= $4::date THEN stock + sum(po + draft - remaining) FILTER (WHERE m >= $4::date) OVER (PARTITION BY g ORDER BY m) END AS closing FROM r)
  SELECT g AS "groupKey", m::text AS "periodStart", (m + interval '1 month' - interval '1 day')::date::text AS "periodEnd",
    (closing - (po + draft - remaining))::text AS "openingStockVolume", plan::text AS "salesPlanVolume", actual::text AS "salesActualVolume",
    po::text AS "poVolume", draft::text AS "draftPOVolume", closing::text AS "closingStockVolume",
    CASE WHEN m >= $4::date THEN target END::text AS "targetStockVolume",
    CASE WHEN m >= $4::date THEN greatest(0, remaining + target - (closing - (po + draft - remaining)) - po) END::text AS "openToBuyVolume"
  FROM c WHERE m >= $8::date ORDER BY g, m`;

/**
 * Breakdown by warehouse and SKU: everything per SKU (plan, actuals, remaining plan), split over
 * warehouses by shares; PO lines, transfers, stock and targets per SKU and warehouse; the
 * projection a running sum per row. One row per SKU, warehouse and month.
 */
export const byWarehouseSkusSql = () => `
  WITH s AS NOT MATERIALIZED (${skus("key")}),
  w AS NOT MATERIALIZED (SELECT warehouse_id, external_id, name FROM warehouses WHERE account_id = $1 AND NOT deleted),
  wx AS (SELECT DISTINCT ON (external_id) external_id, warehouse_id::text AS wid FROM w WHERE external_id <> '' ORDER BY external_id, warehouse_id),
  months AS (SELECT m::date AS m FROM generate_series($5::date, $6::date, interval '1 month') m),
  -- Net units per SKU, channel and month, from a year before the first computed month to the last.
  sold AS (
    SELECT l.sku_id, l.channel, date_trunc('month', l.sold_at AT TIME ZONE $2)::date AS m, sum(l.units) AS units
    FROM ${lines("$5::date - interval '1 year'", "$6::date + interval '1 month'")} l
    WHERE l.channel = ANY($7::int[])
    GROUP BY 1, 2, 3),
  -- Plan and actuals per SKU and month: a stored plan, else last year's units grown.
  plan AS (
    SELECT sku_id, m, sum(CASE WHEN stored THEN volume ELSE (1 + $3::numeric) * greatest(0, ly) END) AS plan, sum(actual) AS actual FROM (
      SELECT sku_id, channel, m, sum(ly) AS ly, sum(actual) AS actual, max(volume) AS volume, bool_or(stored) AS stored FROM (
        SELECT sku_id, channel, m, 0 AS ly, units AS actual, NULL::numeric AS volume, false AS stored FROM sold WHERE m >= $5::date
        UNION ALL
        SELECT sku_id, channel, (m + interval '1 year')::date, units, 0, NULL, false FROM sold WHERE m <= ($6::date - interval '1 year')
        UNION ALL
        SELECT p.sku_id, p.channel, p.month, 0, 0, p.volume, true FROM sales_plans p JOIN s USING (sku_id)
        WHERE p.account_id = $1 AND p.volume IS NOT NULL AND p.channel = ANY($7::int[]) AND p.month BETWEEN $5::date AND $6::date
      ) x GROUP BY 1, 2, 3) y
    GROUP BY 1, 2),
  shipped AS (
    SELECT l.sku_id, wx.wid, sum(l.units) AS units
    FROM ${lines("$9::date - interval '1 year'", "$9::date")} l JOIN wx ON wx.external_id = l.external_warehouse_id
    WHERE l.units > 0
    GROUP BY 1, 2),
  stocked AS (
    SELECT st.sku_id, st.warehouse_id::text AS wid, st.available_quantity AS stock
    FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id) WHERE st.account_id = $1 AND NOT st.deleted),
  share AS (
    SELECT sku_id, wid, units::numeric / sum(units) OVER (PARTITION BY sku_id) AS share FROM shipped
    UNION ALL
    SELECT sku_id, wid, 1::numeric / count(*) OVER (PARTITION BY sku_id) FROM stocked k
    WHERE stock > 0 AND NOT EXISTS (SELECT 1 FROM shipped x WHERE x.sku_id = k.sku_id)
    UNION ALL
    SELECT sku_id, '', 1 FROM s
    WHERE NOT EXISTS (SELECT 1 FROM shipped x WHERE x.sku_id = s.sku_id) AND NOT EXISTS (SELECT 1 FROM stocked k WHERE k.sku_id = s.sku_id AND k.stock > 0)),
  -- Every figure of a SKU, warehouse and month, sparse; stock and target carried to every month.
  facts AS (
    SELECT h.sku_id, h.wid, p.m, p.plan * h.share AS plan, p.actual * h.share AS actual, 0 AS po, 0 AS draft, 0 AS tin, 0 AS tout
    FROM plan p JOIN share h USING (sku_id)
    UNION ALL
    SELECT l.sku_id, coalesce(wx.wid, ''), date_trunc('month', l.delivery_date)::date, 0, 0,
      CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END, CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END, 0, 0
    FROM purchase_order_lines l JOIN s USING (sku_id) LEFT JOIN wx ON wx.external_id = l.external_warehouse_id
    WHERE l.account_id = $1 AND l.kind <> 'cancelled' AND l.delivery_date >= $5::date AND l.delivery_date < $6::date + interval '1 month'
    UNION ALL
    SELECT s.sku_id, coalesce(t.wid, ''), date_trunc('month', d.delivered_at AT TIME ZONE $2)::date, 0, 0, 0, 0,
      CASE WHEN t.dir = 1 THEN d.open_quantity ELSE 0 END, CASE WHEN t.dir = -1 THEN d.open_quantity ELSE 0 END
    FROM distribution_orders d JOIN s ON s.key = d.key
    CROSS JOIN LATERAL (SELECT 1 AS dir, (SELECT wid FROM wx WHERE external_id = d.to_external_warehouse_id) AS wid
                        UNION ALL SELECT -1, (SELECT wid FROM wx WHERE external_id = d.from_external_warehouse_id)) t
    WHERE d.account_id = $1 AND d.open_quantity > 0
      AND d.delivered_at >= ${at("$5::date")} AND d.delivered_at < ${at("$6::date + interval '1 month'")}),
  summed AS (
    SELECT sku_id, wid, m, sum(plan) AS plan, sum(actual) AS actual, sum(po) AS po, sum(draft) AS draft, sum(tin) AS tin, sum(tout) AS tout
    FROM facts GROUP BY 1, 2, 3),
  target AS (
    SELECT t.sku_id, t.warehouse_id::text AS wid, sum(coalesce(t.min, 0)) AS target
    FROM stock_trigger_minimums t JOIN s USING (sku_id) JOIN w USING (warehouse_id) WHERE t.account_id = $1 GROUP BY 1, 2),
  rows AS (
    SELECT sku_id, wid FROM summed UNION SELECT sku_id, wid FROM stocked UNION SELECT sku_id, wid FROM target),
  -- The SKU's current-month remaining plan, split as its plan is.
  remaining_now AS (
    SELECT h.sku_id, h.wid, greatest(0, p.plan - p.actual) * h.share AS remaining
    FROM plan p JOIN share h USING (sku_id) WHERE p.m = $4::date),
  f AS (
    SELECT r.sku_id, r.wid, m.m, coalesce(x.plan, 0) AS plan, coalesce(x.actual, 0) AS actual, coalesce(x.po, 0) AS po, coalesce(x.draft, 0) AS draft,
      coalesce(x.tin, 0) AS tin, coalesce(x.tout, 0) AS tout, coalesce(k.stock, 0) AS stock, coalesce(t.target, 0) AS target,
      CASE WHEN m.m < $4::date THEN NULL WHEN m.m = $4::date THEN coalesce(n.remaining, 0) ELSE coalesce(x.plan, 0) END AS remaining
    FROM rows r CROSS JOIN months m
    LEFT JOIN summed x ON x.sku_id = r.sku_id AND x.wid = r.wid AND x.m = m.m
    LEFT JOIN stocked k ON k.sku_id = r.sku_id AND k.wid = r.wid
    LEFT JOIN target t ON t.sku_id = r.sku_id AND t.wid = r.wid
    LEFT JOIN remaining_now n ON n.sku_id = r.sku_id AND n.wid = r.wid AND m.m = $4::date),
  c AS (
    SELECT *, CASE WHEN m >= $4::date THEN stock + sum(po + draft + tin - tout - remaining) FILTER (WHERE m >= $4::date) OVER (PARTITION BY sku_id, wid ORDER BY m) END AS closing FROM f)
  SELECT s.key AS "groupKey", c.wid AS "warehouseId", coalesce(w.name, '') AS "warehouseName", c.m::text AS "periodStart",
    (c.m + interval '1 month' - interval '1 day')::date::text AS "periodEnd",
    (closing - (po + draft + tin - tout - remaining))::text AS "openingStockVolume", plan::text AS "salesPlanVolume", actual::text AS "salesActualVolume",
    po::text AS "poVolume", draft::text AS "draftPOVolume", closing::text AS "closingStockVolume",
    CASE WHEN c.m >= $4::date THEN target END::text AS "targetStockVolume",
    CASE WHEN c.m >= $4::date THEN greatest(0, remaining + target - (closing - (po + draft + tin - tout - remaining)) - po) END::text AS "openToBuyVolume",
    tin::text AS "transferInVolume", tout::text AS "transferOutVolume"
  FROM c JOIN s USING (sku_id) LEFT JOIN w ON w.warehouse_id::text = c.wid
  WHERE c.m >= $8::date ORDER BY s.key, c.wid, c.m`;
