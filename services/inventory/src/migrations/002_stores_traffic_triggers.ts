import type { Migration } from "@analytics/db";

/** Stores, store traffic (time series keyed by counter and time) and stock triggers. */
export const storesTrafficTriggers: Migration = {
  name: "002_stores_traffic_triggers",
  async up(db) {
    await db.raw(`
      CREATE TABLE stores (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        external_store_id text NOT NULL,
        name text NOT NULL DEFAULT '',
        traffic_counter_id text,
        channel_type smallint,
        address text, address2 text, zip text, city text, state text, country_code text, currency_code text,
        warehouses text[] NOT NULL DEFAULT '{}',
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.raw("CREATE UNIQUE INDEX stores_account_external ON stores (account_id, external_store_id)");
    await db.raw("CREATE INDEX stores_account_seq_id ON stores (account_id, seq) INCLUDE (id)");

    await db.raw(`
      CREATE TABLE store_traffic (
        seq bigserial PRIMARY KEY,
        account_id uuid NOT NULL,
        counter_id text NOT NULL,
        event_time timestamptz NOT NULL,
        incoming integer NOT NULL CHECK (incoming >= 0),
        outgoing integer NOT NULL CHECK (outgoing >= 0),
        name text,
        store_id text,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.raw("CREATE UNIQUE INDEX store_traffic_account_counter_time ON store_traffic (account_id, counter_id, event_time)");
    await db.raw("CREATE INDEX store_traffic_account_seq ON store_traffic (account_id, seq)");

    await db.raw(`
      CREATE TABLE stock_triggers (
        id bigserial PRIMARY KEY,
        account_id uuid NOT NULL,
        warehouse_id uuid NOT NULL REFERENCES warehouses (id),
        sku_id uuid NOT NULL,
        key text NOT NULL,
        sku text,
        season text,
        start_date date,
        last_restock_date date,
        prevent_restock boolean NOT NULL DEFAULT false,
        lower_limit integer, min integer, max integer, upper_limit integer,
        allow_min_auto boolean NOT NULL DEFAULT false,
        allow_max_auto boolean NOT NULL DEFAULT false,
        min_max_source text,
        min_max_updated_at timestamptz,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await db.raw("CREATE UNIQUE INDEX stock_triggers_account_warehouse_sku ON stock_triggers (account_id, warehouse_id, sku_id)");
    await db.raw("CREATE INDEX stock_triggers_account_id ON stock_triggers (account_id, id)");
    await db.raw("CREATE INDEX stock_triggers_account_key ON stock_triggers (account_id, key)");
    await db.raw("CREATE INDEX stock_triggers_account_sku ON stock_triggers (account_id, sku_id)");
  },
};
