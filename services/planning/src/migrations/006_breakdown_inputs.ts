import type { Migration } from "@analytics/db";

/**
 * What the breakdowns need beyond planned volumes and sales (CONTRACT "Planning: the later
 * revision"), replica fed by bus messages like the rest:
 *
 * - distribution_orders: one row per distribution order (an order is one SKU moved between two
 *   warehouses), version-guarded. open_quantity is what is still to arrive (quantity minus
 *   delivered, at least 0; 0 once COMPLETED or CANCELLED), so a cancelled order stays as a row
 *   with nothing open. The SKU is named by key (else sku) and the warehouses by external id, as
 *   sent, matched when read; delivered_at is the instant of deliveryDate, its day taken in the
 *   account's timezone when read, as for sales.
 * - stock_trigger_minimums: a stock trigger's `min` (unset: NULL, counted as 0) for its SKU and
 *   warehouse, version-guarded.
 *
 * updatedSince over every input: each replica row that can change keeps when it last changed
 * (changed_at: the source's updatedAt where the message has one, else when it was applied), and
 * what leaves no row behind (a cancelled transaction's sales, a SKU that moved between groups)
 * is recorded in changed_groups. A changed_groups row names the warehouse by external id
 * (external_warehouse_id) or by id (warehouse_id) when the change knows only that; with neither
 * (external_warehouse_id '' and warehouse_id NULL) every warehouse row of the group changed.
 * accounts.changed_at: when the account's settings last changed (every group changed).
 */
export const breakdownInputs: Migration = {
  name: "006_breakdown_inputs",
  async up(db) {
    await db.raw(`
      CREATE TABLE distribution_orders (
        account_id uuid NOT NULL,
        distribution_order_id uuid NOT NULL,
        version bigint NOT NULL,
        key text,
        sku text,
        from_external_warehouse_id text NOT NULL DEFAULT '',
        to_external_warehouse_id text NOT NULL DEFAULT '',
        delivered_at timestamptz,
        open_quantity int NOT NULL,
        changed_at timestamptz,
        PRIMARY KEY (account_id, distribution_order_id)
      );
      CREATE INDEX distribution_orders_open ON distribution_orders (account_id, delivered_at)
        INCLUDE (key, sku, from_external_warehouse_id, to_external_warehouse_id, open_quantity) WHERE open_quantity > 0;
      CREATE INDEX distribution_orders_changed ON distribution_orders (account_id, changed_at);

      CREATE TABLE stock_trigger_minimums (
        account_id uuid NOT NULL,
        stock_trigger_id bigint NOT NULL,
        version bigint NOT NULL,
        sku_id uuid,
        warehouse_id uuid,
        min int,
        changed_at timestamptz,
        PRIMARY KEY (account_id, stock_trigger_id)
      );
      CREATE INDEX stock_trigger_minimums_changed ON stock_trigger_minimums (account_id, changed_at);

      ALTER TABLE stock ADD COLUMN changed_at timestamptz;
      CREATE INDEX stock_changed ON stock (account_id, changed_at);

      ALTER TABLE changed_groups ADD COLUMN warehouse_id uuid;

      -- A change of salesPlanGrowth (or of the timezone) changes every group's figures.
      ALTER TABLE accounts ADD COLUMN changed_at timestamptz;

      -- Sales, plans' keys and distribution orders name their SKU by key: matched when read.
      CREATE INDEX skus_key ON skus (account_id, key);
    `);
  },
  async down(db) {
    await db.raw(`
      DROP INDEX skus_key;
      ALTER TABLE accounts DROP COLUMN changed_at;
      ALTER TABLE changed_groups DROP COLUMN warehouse_id;
      DROP INDEX stock_changed;
      ALTER TABLE stock DROP COLUMN changed_at;
      DROP TABLE stock_trigger_minimums, distribution_orders;
    `);
  },
};
