// Drift check of planning's replica against its sources, read straight from their schemas (an
// operator's tool for a database that holds every schema, as the embedded default and a shared
// Postgres do; the planning service itself never reads another schema):
//   node deploy/local/planning-drift.mjs [DATABASE_URL]
// For SKUs (catalogue), warehouses and stock (inventory) and purchase orders (orders), per account:
// rows the source has and the replica lacks (`missing`), rows the replica holds at an older version
// than the source (`stale`) and live rows the replica holds that the source does not (`extra`);
// for purchase-order lines, lines missing, extra, or with another open quantity (`differing`).
// A source whose schema is absent is listed under `notChecked`. Prints JSON; exits 1 when there is
// drift, 0 when there is none.
import pg from "pg";

/** Each replicated entity: its source rows and replica rows as (account_id, key, version). */
const entities = {
  skus: {
    needs: ["catalogue.products", "planning.skus"],
    source: "SELECT account_id, id::text AS key, version FROM catalogue.products",
    replica: "SELECT account_id, sku_id::text AS key, version FROM planning.skus",
  },
  warehouses: {
    needs: ["inventory.warehouses", "planning.warehouses"],
    source: "SELECT account_id, id::text AS key, version FROM inventory.warehouses",
    // A deleted warehouse stays in the replica as a tombstone; only live rows can be extra.
    replica: "SELECT account_id, warehouse_id::text AS key, version FROM planning.warehouses WHERE NOT deleted",
  },
  stock: {
    needs: ["inventory.stock", "planning.stock"],
    source: "SELECT account_id, warehouse_id || ':' || sku_id AS key, version FROM inventory.stock",
    replica: "SELECT account_id, warehouse_id || ':' || sku_id AS key, version FROM planning.stock WHERE NOT deleted",
  },
  purchaseOrders: {
    needs: ["orders.purchase_orders", "planning.purchase_orders"],
    source: "SELECT account_id, id::text AS key, version FROM orders.purchase_orders",
    replica: "SELECT account_id, purchase_order_id::text AS key, version FROM planning.purchase_orders",
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
        SELECT coalesce(s.account_id, r.account_id) AS account_id,
          count(*) FILTER (WHERE r.key IS NULL)::int AS missing,
          count(*) FILTER (WHERE r.version < s.version)::int AS stale,
          count(*) FILTER (WHERE s.key IS NULL)::int AS extra
        FROM (${e.source}) s
        FULL JOIN (${e.replica}) r ON r.account_id = s.account_id AND r.key = s.key
        GROUP BY 1
        HAVING count(*) FILTER (WHERE r.key IS NULL OR s.key IS NULL OR r.version < s.version) > 0
        ORDER BY 1`)
    ).rows;
  }
  if (await exists(["orders.purchase_order_items", "planning.purchase_order_lines"])) {
    report.purchaseOrderLines = (
      await client.query(`
        SELECT coalesce(s.account_id, r.account_id) AS account_id,
          count(*) FILTER (WHERE r.item_id IS NULL)::int AS missing,
          count(*) FILTER (WHERE s.item_id IS NULL)::int AS extra,
          count(*) FILTER (WHERE r.open_quantity <> s.open_quantity)::int AS differing
        FROM (SELECT account_id, purchase_order_id, id::text AS item_id, greatest(0, quantity - delivered_quantity) AS open_quantity
              FROM orders.purchase_order_items) s
        FULL JOIN planning.purchase_order_lines r
          ON r.account_id = s.account_id AND r.purchase_order_id = s.purchase_order_id AND r.item_id = s.item_id
        GROUP BY 1
        HAVING count(*) FILTER (WHERE r.item_id IS NULL OR s.item_id IS NULL OR r.open_quantity <> s.open_quantity) > 0
        ORDER BY 1`)
    ).rows;
  } else {
    report.notChecked.push("purchaseOrderLines");
    report.purchaseOrderLines = [];
  }
  report.drift = [...Object.keys(entities), "purchaseOrderLines"].some((name) => report[name].length > 0);
  console.log(JSON.stringify(report));
  process.exitCode = report.drift ? 1 : 0;
} finally {
  await client.end();
}
