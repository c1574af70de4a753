import type { Migration } from "@analytics/db";

/**
 * Warehouses and stock snapshots. Every table carries account_id; pages walk (account_id, seq)
 * INCLUDE (id) by an index-only scan; business keys are unique per account.
 */
export const createInventory: Migration = {
  name: "001_inventory",
  async up(db) {
    await db.raw(`
      CREATE TABLE warehouses (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        external_id text NOT NULL,
        name text NOT NULL DEFAULT '',
        central_warehouse boolean NOT NULL DEFAULT false,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.raw("CREATE UNIQUE INDEX warehouses_account_external ON warehouses (account_id, external_id)");
    await db.raw("CREATE INDEX warehouses_account_seq_id ON warehouses (account_id, seq) INCLUDE (id)");

    // One snapshot per (warehouse, SKU): the newest `date` wins; version grows with every applied write.
    await db.raw(`
      CREATE TABLE stock (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        warehouse_id uuid NOT NULL REFERENCES warehouses (id),
        sku_id uuid NOT NULL,
        key text NOT NULL,
        sku text,
        ean text,
        supplier text,
        available_quantity integer NOT NULL,
        physical_quantity integer NOT NULL,
        date timestamptz NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.raw("CREATE UNIQUE INDEX stock_account_warehouse_sku ON stock (account_id, warehouse_id, sku_id)");
    await db.raw("CREATE INDEX stock_account_seq_id ON stock (account_id, seq) INCLUDE (id)");
    await db.raw("CREATE INDEX stock_account_key ON stock (account_id, key)");
    await db.raw("CREATE INDEX stock_account_sku ON stock (account_id, sku)");
    await db.raw("CREATE INDEX stock_account_ean ON stock (account_id, ean)");
  },
};
