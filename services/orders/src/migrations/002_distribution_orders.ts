import type { Migration } from "@analytics/db";

/** Distribution order rows; `status` is derived by Postgres, so it is never taken from input. */
export const createDistributionOrders: Migration = {
  name: "002_distribution_orders",
  async up(db) {
    await db.raw(`
      CREATE TABLE distribution_orders (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        external_doid text NOT NULL,
        external_row_id text NOT NULL,
        external_comment text,
        season text,
        key text,
        sku text,
        order_date timestamptz,
        delivery_date timestamptz,
        from_warehouse_external_id text,
        to_warehouse_external_id text,
        quantity integer NOT NULL DEFAULT 0,
        allocated_quantity integer NOT NULL DEFAULT 0,
        shipped_at timestamptz,
        delivered_quantity integer NOT NULL DEFAULT 0,
        completed_date timestamptz,
        cancelled_date timestamptz,
        status text GENERATED ALWAYS AS (CASE
          WHEN cancelled_date IS NOT NULL THEN 'CANCELLED'
          WHEN delivered_quantity >= quantity THEN 'COMPLETED'
          WHEN shipped_at IS NOT NULL THEN 'IN TRANSIT'
          WHEN allocated_quantity >= quantity THEN 'ALLOCATED'
          ELSE 'PROCESSING' END) STORED,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, external_doid, external_row_id)
      )`);
    await db.raw("CREATE INDEX distribution_orders_account_seq_id ON distribution_orders (account_id, seq) INCLUDE (id)");
    await db.raw("CREATE INDEX distribution_orders_account_status_seq ON distribution_orders (account_id, status, seq) INCLUDE (id)");
  },
};
