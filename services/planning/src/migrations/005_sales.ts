import type { Migration } from "@analytics/db";

/**
 * Sales actuals and sales plans (CONTRACT "Planning: the later revision").
 *
 * sales_transactions and sales_lines are replica, fed by the orders service's transaction
 * messages like the purchase orders: a transaction's row keeps the version of the message that
 * wrote it, and a newer version replaces all of its lines, so a redelivered or older message
 * changes nothing and an update corrects the figures exactly once. A line is an item's units in
 * one warehouse: units shipped from a warehouse under its external id, the rest under "";
 * returns are negative; a cancelled transaction keeps no lines. The item names its SKU by key
 * (else sku or ean), as sent: a transaction may arrive before its product, so the SKU is matched
 * when read. sold_at is the instant of the transaction's createdDate: the day is taken in the
 * account's timezone when read (sales_daily), so a timezone change re-dates every sale at once.
 *
 * sales_plans are not replica: planning owns them (POST /planning/sales-plans/batch). A removed
 * plan stays as a row whose volume is NULL, with when it was removed, so that updatedSince sees it.
 */
export const sales: Migration = {
  name: "005_sales",
  async up(db) {
    await db.raw(`
      ALTER TABLE accounts ADD COLUMN sales_plan_growth numeric;

      CREATE TABLE sales_transactions (
        account_id uuid NOT NULL,
        transaction_id uuid NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (account_id, transaction_id)
      );

      CREATE TABLE sales_lines (
        account_id uuid NOT NULL,
        transaction_id uuid NOT NULL,
        external_item_id text NOT NULL,
        external_warehouse_id text NOT NULL,
        key text,
        sku text,
        ean text,
        channel int NOT NULL,
        sold_at timestamptz NOT NULL,
        units int NOT NULL,
        changed_at timestamptz,
        PRIMARY KEY (account_id, transaction_id, external_item_id, external_warehouse_id)
      );
      -- A window of an account's sales (every SKU), and one SKU's sales over time.
      CREATE INDEX sales_lines_window ON sales_lines (account_id, sold_at) INCLUDE (key, channel, external_warehouse_id, units);
      CREATE INDEX sales_lines_key ON sales_lines (account_id, key, sold_at) INCLUDE (channel, external_warehouse_id, units);
      CREATE INDEX sales_lines_changed ON sales_lines (account_id, changed_at) INCLUDE (key);

      -- Net units per item reference, channel, warehouse and day, the day in the account's timezone.
      CREATE VIEW sales_daily AS
        SELECT l.account_id, l.key, l.sku, l.ean, l.channel, l.external_warehouse_id,
          (l.sold_at AT TIME ZONE coalesce(a.timezone, 'UTC'))::date AS day, sum(l.units)::bigint AS units
        FROM sales_lines l
        LEFT JOIN accounts a ON a.account_id = l.account_id AND a.timezone IN (SELECT name FROM pg_timezone_names)
        GROUP BY 1, 2, 3, 4, 5, 6, 7;

      CREATE TABLE sales_plans (
        account_id uuid NOT NULL,
        sku_id uuid NOT NULL,
        channel int NOT NULL,
        month date NOT NULL,
        volume numeric,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, sku_id, channel, month)
      );
      CREATE INDEX sales_plans_month ON sales_plans (account_id, month) WHERE volume IS NOT NULL;
      CREATE INDEX sales_plans_updated ON sales_plans (account_id, updated_at);
    `);
  },
  async down(db) {
    await db.raw("DROP VIEW sales_daily; DROP TABLE sales_plans, sales_lines, sales_transactions; ALTER TABLE accounts DROP COLUMN sales_plan_growth");
  },
};
