// Drift check of planning's replica against its sources, read straight from their schemas (an
// operator's tool for a database that holds every schema, as the embedded default and a shared
// Postgres do; the planning service itself never reads another schema):
//   node deploy/local/planning-drift.mjs [DATABASE_URL]
// For SKUs (catalogue), warehouses, stock and stock triggers (inventory), purchase orders,
// transactions and distribution orders (orders), per account:
// rows the source has and the replica lacks (`missing`), rows the replica holds at an older version
// than the source (`stale`), live rows the replica holds that the source does not (`extra`), and
// rows at the same version whose values differ (`differing`: a warehouse's external id or name, a
// stock row's available quantity, a distribution order's open quantity, a stock trigger's min); for purchase-order lines, lines missing, extra, or differing in
// SKU, warehouse, delivery day, open quantity or kind (the values the orders service announces);
// for planning's sales rollups (sales_days, sales_months), rows missing, extra or differing from
// the aggregate of planning's own sale lines, for its per-SKU cells (sku_months), from
// sales_months matched to the SKUs, and for its group rollups (group_months, from the cells and
// stored plans; group_stock and group_po_months, from the stock, triggers and PO lines).
// Each account's entry carries up to five drifted rows (`sample`). A source whose schema is absent
// is listed under `notChecked`. Prints JSON; exits 1 when there is drift, 0 when there is none.
import pg from "pg";

/** Each replicated entity: its source rows and replica rows as (account_id, key, version, value). */
const entities = {
  skus: {
    needs: ["catalogue.products", "planning.skus"],
    source: "SELECT account_id, id::text AS key, version, NULL AS value FROM catalogue.products",
    replica: "SELECT account_id, sku_id::text AS key, version, NULL AS value FROM planning.skus",
  },
  warehouses: {
    needs: ["inventory.warehouses", "planning.warehouses"],
    source: "SELECT account_id, id::text AS key, version, external_id || '/' || name AS value FROM inventory.warehouses",
    // A deleted warehouse stays in the replica as a tombstone; only live rows can be extra.
    replica: "SELECT account_id, warehouse_id::text AS key, version, external_id || '/' || name AS value FROM planning.warehouses WHERE NOT deleted",
  },
  stock: {
    needs: ["inventory.stock", "planning.stock"],
    source: "SELECT account_id, warehouse_id || ':' || sku_id AS key, version, available_quantity::text AS value FROM inventory.stock",
    replica: "SELECT account_id, warehouse_id || ':' || sku_id AS key, version, available_quantity::text AS value FROM planning.stock WHERE NOT deleted",
  },
  purchaseOrders: {
    needs: ["orders.purchase_orders", "planning.purchase_orders"],
    source: "SELECT account_id, id::text AS key, version, NULL AS value FROM orders.purchase_orders",
    replica: "SELECT account_id, purchase_order_id::text AS key, version, NULL AS value FROM planning.purchase_orders",
  },
  // Transactions by version (their sales lines are replaced whole with each newer version).
  transactions: {
    needs: ["orders.transactions", "planning.sales_transactions"],
    source: "SELECT account_id, id::text AS key, version, NULL AS value FROM orders.transactions",
    replica: "SELECT account_id, transaction_id::text AS key, version, NULL AS value FROM planning.sales_transactions",
  },
  // Distribution orders by version and open quantity: what is still to arrive (quantity minus
  // delivered, at least 0), nothing once COMPLETED or CANCELLED, as planning keeps it.
  distributionOrders: {
    needs: ["orders.distribution_orders", "planning.distribution_orders"],
    source: `SELECT account_id, id::text AS key, version,
               (CASE WHEN status IN ('COMPLETED', 'CANCELLED') THEN 0 ELSE greatest(0, quantity - delivered_quantity) END)::text AS value
             FROM orders.distribution_orders`,
    replica: "SELECT account_id, distribution_order_id::text AS key, version, open_quantity::text AS value FROM planning.distribution_orders",
  },
  // Stock triggers by version and min (unset: none).
  stockTriggers: {
    needs: ["inventory.stock_triggers", "planning.stock_trigger_minimums"],
    source: "SELECT account_id, id::text AS key, version, min::text AS value FROM inventory.stock_triggers",
    replica: "SELECT account_id, stock_trigger_id::text AS key, version, min::text AS value FROM planning.stock_trigger_minimums",
  },
  // A line's values as the orders service announces them (the item's warehouse and delivery date,
  // else the order's; its UTC day; the kind from the order's status); versions are the order's.
  purchaseOrderLines: {
    needs: ["orders.purchase_order_items", "planning.purchase_order_lines"],
    source: `SELECT i.account_id, i.purchase_order_id || ':' || i.id AS key, o.version,
               concat_ws('/', i.sku_id, COALESCE(i.external_warehouse_id, o.external_warehouse_id, ''),
                 COALESCE(to_char(COALESCE(i.delivery_date, o.delivery_date) AT TIME ZONE 'UTC', 'YYYY-MM-DD'), ''),
                 greatest(0, i.quantity - i.delivered_quantity),
                 CASE o.delivery_status WHEN 3 THEN 'cancelled' WHEN 4 THEN 'draft' ELSE 'po' END) AS value
             FROM orders.purchase_order_items i JOIN orders.purchase_orders o ON o.id = i.purchase_order_id`,
    replica: `SELECT l.account_id, l.purchase_order_id || ':' || l.item_id AS key, o.version,
                concat_ws('/', l.sku_id, l.external_warehouse_id, COALESCE(to_char(l.delivery_date, 'YYYY-MM-DD'), ''), l.open_quantity, l.kind) AS value
              FROM planning.purchase_order_lines l
              JOIN planning.purchase_orders o ON o.account_id = l.account_id AND o.purchase_order_id = l.purchase_order_id`,
  },
  // Planning's own sales rollups (migration 012) against the aggregate of its sale lines: a rollup
  // row equals the sum of its lines (a row of 0 lines left behind at 0 counts as absent), version 0.
  salesDays: {
    needs: ["planning.sales_line_days", "planning.sales_days"],
    source: `SELECT account_id, concat_ws('/', day, ref_kind, ref, channel, external_warehouse_id) AS key, 0 AS version,
               concat_ws('/', sum(units), sum(shipped), count(*)) AS value
             FROM planning.sales_line_days GROUP BY account_id, day, ref_kind, ref, channel, external_warehouse_id`,
    replica: `SELECT account_id, concat_ws('/', day, ref_kind, ref, channel, external_warehouse_id) AS key, 0 AS version, concat_ws('/', units, shipped, lines) AS value
              FROM planning.sales_days WHERE (units, shipped, lines) <> (0, 0, 0)`,
  },
  salesMonths: {
    needs: ["planning.sales_line_days", "planning.sales_months"],
    source: `SELECT account_id, concat_ws('/', date_trunc('month', day)::date, ref_kind, ref, channel) AS key, 0 AS version, concat_ws('/', sum(units), count(*)) AS value
             FROM planning.sales_line_days GROUP BY account_id, date_trunc('month', day)::date, ref_kind, ref, channel`,
    replica: `SELECT account_id, concat_ws('/', month, ref_kind, ref, channel) AS key, 0 AS version, concat_ws('/', units, lines) AS value
              FROM planning.sales_months WHERE (units, lines) <> (0, 0)`,
  },
  // The per-SKU cells (migration 013) against sales_months matched to the SKUs (sku_month_sales),
  // in their month and as the baseline a year later; a cell at 0 counts as absent.
  skuMonths: {
    needs: ["planning.sku_month_sales", "planning.sku_months"],
    source: `SELECT account_id, concat_ws('/', month, sku_id, channel) AS key, 0 AS version, concat_ws('/', sum(units), sum(lines), sum(ly_units), sum(ly_lines)) AS value
             FROM (SELECT account_id, month, sku_id, channel, units, lines, 0 AS ly_units, 0 AS ly_lines FROM planning.sku_month_sales
               UNION ALL SELECT account_id, (month + interval '1 year')::date, sku_id, channel, 0, 0, units, lines FROM planning.sku_month_sales) x
             GROUP BY account_id, month, sku_id, channel HAVING (sum(units), sum(lines), sum(ly_units), sum(ly_lines)) <> (0, 0, 0, 0)`,
    replica: `SELECT account_id, concat_ws('/', month, sku_id, channel) AS key, 0 AS version, concat_ws('/', units, lines, ly_units, ly_lines) AS value
              FROM planning.sku_months WHERE (units, lines, ly_units, ly_lines) <> (0, 0, 0, 0)`,
  },
  // The group months (migration 014) against the per-SKU cells and stored plans they sum, each
  // SKU month's figures rounded first (repository/group-months.ts cellFigures); a row at 0 is absent.
  groupMonths: {
    needs: ["planning.group_months", "planning.sku_months"],
    source: `SELECT f.account_id, concat_ws('/', gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), f.channel, f.month) AS key, 0 AS version,
               concat_ws('/', trim_scale(sum(f.stored)), trim_scale(sum(f.plan)), sum(f.actual), sum(f.live)) AS value
             FROM (
               SELECT x.account_id, x.sku_id, x.channel, x.month,
                 CASE WHEN x.volume IS NOT NULL THEN round(x.volume, 3) ELSE 0 END AS stored,
                 coalesce(round(CASE WHEN x.volume IS NOT NULL THEN x.volume WHEN x.ly_lines > 0 THEN greatest(0, x.ly_units) * (1 + coalesce(a.sales_plan_growth, 0)) END, 3), 0) AS plan,
                 CASE WHEN x.lines > 0 THEN x.units ELSE 0 END AS actual,
                 (x.volume IS NOT NULL OR x.lines > 0 OR x.ly_lines > 0)::int AS live
               FROM (
                 SELECT c.account_id, c.sku_id, c.channel, c.month, p.volume, c.units, c.lines, c.ly_units, c.ly_lines
                 FROM planning.sku_months c LEFT JOIN planning.sales_plans p ON p.account_id = c.account_id AND p.sku_id = c.sku_id AND p.channel = c.channel AND p.month = c.month AND p.volume IS NOT NULL
                 UNION ALL
                 SELECT p.account_id, p.sku_id, p.channel::smallint, p.month, p.volume, NULL, NULL, NULL, NULL FROM planning.sales_plans p
                 WHERE p.volume IS NOT NULL AND NOT EXISTS (SELECT 1 FROM planning.sku_months c WHERE c.account_id = p.account_id AND c.sku_id = p.sku_id AND c.channel = p.channel AND c.month = p.month)
               ) x LEFT JOIN planning.accounts a ON a.account_id = x.account_id
             ) f
             JOIN planning.skus s ON s.account_id = f.account_id AND s.sku_id = f.sku_id
             CROSS JOIN LATERAL (VALUES (1, coalesce(s.season, ''))) AS gr(grouping, g)
             GROUP BY f.account_id, gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), f.channel, f.month
             HAVING (sum(f.stored), sum(f.plan), sum(f.actual), sum(f.live)) <> (0, 0, 0, 0)`,
    replica: `SELECT account_id, concat_ws('/', grouping, g, status, active_planning, brand, channel, month) AS key, 0 AS version, concat_ws('/', trim_scale(stored), trim_scale(plan), actual, live) AS value
              FROM planning.group_months WHERE (stored, plan, actual, live) <> (0, 0, 0, 0)`,
  },
  // Group stock and PO months (migration 015) against the stock, triggers and PO lines they sum.
  groupStock: {
    needs: ["planning.group_stock"],
    source: `SELECT x.account_id, concat_ws('/', gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), '')) AS key, 0 AS version,
               concat_ws('/', trim_scale(sum(x.stock)), sum(x.stock_rows), trim_scale(sum(x.target)), sum(x.target_rows)) AS value
             FROM (
               SELECT st.account_id, st.sku_id, st.available_quantity AS stock, 1 AS stock_rows, 0 AS target, 0 AS target_rows
               FROM planning.stock st JOIN planning.warehouses w ON w.account_id = st.account_id AND w.warehouse_id = st.warehouse_id AND NOT w.deleted WHERE NOT st.deleted
               UNION ALL
               SELECT t.account_id, t.sku_id, 0, 0, coalesce(t.min, 0), 1 FROM planning.stock_trigger_minimums t
               WHERE NOT EXISTS (SELECT 1 FROM planning.warehouses w WHERE w.account_id = t.account_id AND w.warehouse_id = t.warehouse_id AND w.deleted)
             ) x JOIN planning.skus s ON s.account_id = x.account_id AND s.sku_id = x.sku_id
             CROSS JOIN LATERAL (VALUES (1, coalesce(s.season, ''))) AS gr(grouping, g)
             GROUP BY x.account_id, gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), '')`,
    replica: `SELECT account_id, concat_ws('/', grouping, g, status, active_planning, brand) AS key, 0 AS version,
                concat_ws('/', trim_scale(stock), stock_rows, trim_scale(target), target_rows) AS value
              FROM planning.group_stock WHERE (stock, stock_rows, target, target_rows) <> (0, 0, 0, 0)`,
  },
  groupPoMonths: {
    needs: ["planning.group_po_months"],
    source: `SELECT l.account_id, concat_ws('/', gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), date_trunc('month', l.delivery_date)::date) AS key, 0 AS version,
               concat_ws('/', trim_scale(sum(CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END)), trim_scale(sum(CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END)), count(*)) AS value
             FROM planning.purchase_order_lines l JOIN planning.skus s ON s.account_id = l.account_id AND s.sku_id = l.sku_id
             CROSS JOIN LATERAL (VALUES (1, coalesce(s.season, ''))) AS gr(grouping, g)
             WHERE l.kind <> 'cancelled' AND l.delivery_date IS NOT NULL
             GROUP BY l.account_id, gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), date_trunc('month', l.delivery_date)::date`,
    replica: `SELECT account_id, concat_ws('/', grouping, g, status, active_planning, brand, month) AS key, 0 AS version, concat_ws('/', trim_scale(po), trim_scale(draft), lines) AS value
              FROM planning.group_po_months WHERE (po, draft, lines) <> (0, 0, 0)`,
  },
};

const url = process.argv[2] ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  const exists = async (tables) => {
    for (const t of tables) if (!(await client.query("SELECT to_regclass($1) IS NOT NULL AS ok", [t])).rows[0].ok) return false;
    return true;
  };
  const report = { notChecked: [] };
  for (const [name, e] of Object.entries(entities)) {
    if (!(await exists(e.needs))) {
      report.notChecked.push(name);
      report[name] = [];
      continue;
    }
    report[name] = (
      await client.query(`
        WITH pairs AS (
          SELECT coalesce(s.account_id, r.account_id) AS account_id, coalesce(s.key, r.key) AS key,
            CASE WHEN r.key IS NULL THEN 'missing' WHEN s.key IS NULL THEN 'extra' WHEN r.version < s.version THEN 'stale'
                 WHEN r.version = s.version AND r.value IS DISTINCT FROM s.value THEN 'differing' END AS drift
          FROM (${e.source}) s
          FULL JOIN (${e.replica}) r ON r.account_id = s.account_id AND r.key = s.key
        )
        SELECT account_id,
          count(*) FILTER (WHERE drift = 'missing')::int AS missing,
          count(*) FILTER (WHERE drift = 'stale')::int AS stale,
          count(*) FILTER (WHERE drift = 'extra')::int AS extra,
          count(*) FILTER (WHERE drift = 'differing')::int AS differing,
          (array_agg(drift || ' ' || key ORDER BY key))[1:5] AS sample
        FROM pairs WHERE drift IS NOT NULL
        GROUP BY account_id
        ORDER BY account_id`)
    ).rows;
  }
  report.drift = Object.keys(entities).some((name) => report[name].length > 0);
  console.log(JSON.stringify(report));
  process.exitCode = report.drift ? 1 : 0;
} finally {
  await client.end();
}
