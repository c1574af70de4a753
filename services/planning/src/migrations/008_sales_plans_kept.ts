import type { Migration } from "@analytics/db";

/**
 * Stored sales plans are not replica: nothing replays them. The documented rebuild drops the
 * service's schema (DROP SCHEMA planning CASCADE) and lets the stream refill it, which would take
 * the plans with it. So they move to a schema of their own, `<schema>_plans`, that the rebuild
 * leaves alone; the service's schema keeps a plain view of them under the old name (Postgres
 * writes through it, upserts included), so every statement stays as it was. After a rebuild this
 * migration runs again on the fresh schema: the plans' table is there already, the empty table
 * migration 005 made is dropped and the view made again.
 */
export const salesPlansKept: Migration = {
  name: "008_sales_plans_kept",
  async up(db) {
    const { rows } = await db.raw("SELECT current_schema() AS schema");
    const plans = `${rows[0].schema}_plans`;
    if (!/^[a-z_][a-z0-9_]*$/.test(plans)) throw new Error(`not a plain schema name: ${plans}`);
    await db.raw(`
      CREATE SCHEMA IF NOT EXISTS ${plans};
      CREATE TABLE IF NOT EXISTS ${plans}.sales_plans (
        account_id uuid NOT NULL,
        sku_id uuid NOT NULL,
        channel int NOT NULL,
        month date NOT NULL,
        volume numeric,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, sku_id, channel, month)
      );
      CREATE INDEX IF NOT EXISTS sales_plans_month ON ${plans}.sales_plans (account_id, month) WHERE volume IS NOT NULL;
      CREATE INDEX IF NOT EXISTS sales_plans_updated ON ${plans}.sales_plans (account_id, updated_at);
      INSERT INTO ${plans}.sales_plans SELECT account_id, sku_id, channel, month, volume, updated_at FROM sales_plans ON CONFLICT DO NOTHING;
      DROP TABLE sales_plans;
      CREATE VIEW sales_plans AS SELECT account_id, sku_id, channel, month, volume, updated_at FROM ${plans}.sales_plans;
    `);
  },
};
