import type { Migration } from "@analytics/db";

/**
 * Group stock and group PO months (docs/planning.md "Sales rollups"): the breakdown's other figures
 * per account, grouping (1 season, the only one kept), group, SKU status,
 * activePlanning and brand (as in group_months), beside group_months (migration 014): `group_stock` the available stock of live
 * warehouses and the stock triggers' minimums (not of a deleted warehouse), each with its rows
 * counted (a group with one shows); `group_po_months` the open PO and draft-PO quantity per month
 * of delivery, with its lines counted (cancelled lines and lines without a date are none). Kept
 * by the replica's consumer (repository/group-months.ts: a SKU's figures taken off before a
 * change of its stock, triggers, PO lines, warehouses or group and added after). Filled here.
 */
const FILL_TIMEOUT_MS = 3_600_000;
// Every consumer batch updates rows of these tables in place: room left on each page
// (fillfactor) keeps those updates on the page (HOT), without new index entries.

const groupings = `CROSS JOIN LATERAL (VALUES (1::smallint, coalesce(s.season, ''))) AS gr(grouping, g)`;

export const groupStock: Migration = {
  name: "015_group_stock",
  async up(db) {
    await db.raw(`
      CREATE TABLE group_stock (
        account_id uuid NOT NULL,
        grouping smallint NOT NULL,
        g text NOT NULL,
        status int NOT NULL,
        active_planning boolean NOT NULL,
        brand text NOT NULL,
        stock numeric NOT NULL,
        stock_rows bigint NOT NULL,
        target numeric NOT NULL,
        target_rows bigint NOT NULL,
        PRIMARY KEY (account_id, grouping, g, status, active_planning, brand)
      ) WITH (fillfactor = 70);
      CREATE TABLE group_po_months (
        account_id uuid NOT NULL,
        grouping smallint NOT NULL,
        g text NOT NULL,
        status int NOT NULL,
        active_planning boolean NOT NULL,
        brand text NOT NULL,
        month date NOT NULL,
        po numeric NOT NULL,
        draft numeric NOT NULL,
        lines bigint NOT NULL,
        PRIMARY KEY (account_id, grouping, month, g, status, active_planning, brand)
      ) WITH (fillfactor = 70);

      INSERT INTO group_stock
        SELECT x.account_id, gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), sum(x.stock), sum(x.stock_rows), sum(x.target), sum(x.target_rows)
        FROM (
          SELECT st.account_id, st.sku_id, st.available_quantity AS stock, 1 AS stock_rows, 0 AS target, 0 AS target_rows
          FROM stock st JOIN warehouses w ON w.account_id = st.account_id AND w.warehouse_id = st.warehouse_id AND NOT w.deleted WHERE NOT st.deleted
          UNION ALL
          SELECT t.account_id, t.sku_id, 0, 0, coalesce(t.min, 0), 1 FROM stock_trigger_minimums t
          WHERE NOT EXISTS (SELECT 1 FROM warehouses w WHERE w.account_id = t.account_id AND w.warehouse_id = t.warehouse_id AND w.deleted)
        ) x JOIN skus s ON s.account_id = x.account_id AND s.sku_id = x.sku_id ${groupings}
        GROUP BY 1, 2, 3, 4, 5, 6;

      INSERT INTO group_po_months
        SELECT l.account_id, gr.grouping, gr.g, s.status, s.active_planning, coalesce('=' || lower(s.brand), ''), date_trunc('month', l.delivery_date)::date,
          sum(CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END), sum(CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END), count(*)
        FROM purchase_order_lines l JOIN skus s ON s.account_id = l.account_id AND s.sku_id = l.sku_id ${groupings}
        WHERE l.kind <> 'cancelled' AND l.delivery_date IS NOT NULL
        GROUP BY 1, 2, 3, 4, 5, 6, 7;
    `).options({ query_timeout: FILL_TIMEOUT_MS });
    await db.raw("ANALYZE group_stock; ANALYZE group_po_months").options({ query_timeout: FILL_TIMEOUT_MS });
  },
  async down(db) {
    await db.raw("DROP TABLE group_stock, group_po_months");
  },
};
