// One seed for the planning benches (bench/planning.ts, bench/conditional.mjs): an account's SKUs,
// 20 warehouses, stock of each SKU in 5 of them and PO lines, written straight into planning's
// replica tables (as its consumers would after the account's messages), with one statement each.

/** `skus` SKUs, 20 warehouses, stock in 5 warehouses per SKU, `lines` PO lines; `sql` a pg client on the platform's database. */
export async function seedPlanning(sql, accountId, skus, lines) {
  await sql.query(
    `INSERT INTO planning.skus (account_id, sku_id, version, key, sku, status, active_planning, season, product_group_id, variant_group_id, brand, color, size)
     SELECT $1, gen_random_uuid(), 1, 'K-' || g, 'S-' || g, 1 + g % 5, g % 17 <> 0, 'SS' || (g % 8), 'P-' || (g / 10), 'V-' || (g / 3), 'B' || (g % 30), 'C' || (g % 12), 'Z' || (g % 6)
     FROM generate_series(1, $2) g`,
    [accountId, skus],
  );
  await sql.query(`INSERT INTO planning.warehouses (account_id, warehouse_id, version, external_id, name) SELECT $1, gen_random_uuid(), 1, 'WH' || g, 'Warehouse ' || g FROM generate_series(1, 20) g`, [accountId]);
  await sql.query(
    `INSERT INTO planning.stock (account_id, sku_id, warehouse_id, version, available_quantity)
     SELECT $1, s.sku_id, w.warehouse_id, 1, (hashtext(s.key || w.external_id) & 63)
     FROM planning.skus s
     JOIN LATERAL (SELECT warehouse_id, external_id FROM planning.warehouses w WHERE w.account_id = $1
                   AND (substr(w.external_id, 3)::int - 1) % 4 = (substr(s.key, 3)::int) % 4 LIMIT 5) w ON true
     WHERE s.account_id = $1`,
    [accountId],
  );
  await sql.query(
    `INSERT INTO planning.purchase_order_lines (account_id, purchase_order_id, item_id, sku_id, external_warehouse_id, delivery_date, open_quantity, kind, changed_at)
     SELECT $1, gen_random_uuid(), 'i' || g, s.sku_id, CASE WHEN g % 10 = 0 THEN '' ELSE 'WH' || (1 + g % 20) END,
       date '2026-01-01' + (g % 365), 1 + g % 40, CASE WHEN g % 9 = 0 THEN 'draft' WHEN g % 23 = 0 THEN 'cancelled' ELSE 'po' END,
       timestamptz '2026-01-01' + g * interval '1 minute'
     FROM generate_series(1, $3) g JOIN planning.skus s ON s.account_id = $1 AND s.key = 'K-' || (1 + (g * 7919) % $2)`,
    [accountId, skus, lines],
  );
}
