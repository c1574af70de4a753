import type { Migration } from "@analytics/db";

/**
 * Pricing's schema. Every table carries account_id; paged tables have (account_id, seq) INCLUDE
 * (id) for index-only pages and counts (libs/db pageOfIds). Money is numeric, never float.
 */
export const createPricing: Migration = {
  name: "001_pricing",
  async up(db) {
    await db.raw(`
      CREATE EXTENSION IF NOT EXISTS btree_gist;

      -- Replica of the gateway's account settings (analytics.accounts.settings.changed).
      CREATE TABLE account_settings (
        account_id uuid PRIMARY KEY,
        version bigint NOT NULL,
        custom_price_fields text[] NOT NULL DEFAULT '{}'
      );

      CREATE TABLE price_lists (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        external_id text NOT NULL,
        name text NOT NULL,
        currency text NOT NULL,
        default_price_list boolean NOT NULL DEFAULT false,
        default_vat numeric NOT NULL DEFAULT 0 CHECK (default_vat BETWEEN 0 AND 100),
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, external_id)
      );
      CREATE INDEX price_lists_account_seq ON price_lists (account_id, seq) INCLUDE (id);

      -- One price per (list, SKU, season); '' is "no season" so the key is a plain unique index.
      CREATE TABLE prices (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        price_list_id uuid NOT NULL REFERENCES price_lists (id),
        product_id uuid NOT NULL,
        key text NOT NULL,
        sku text,
        season text NOT NULL DEFAULT '',
        price numeric NOT NULL,
        vat numeric CHECK (vat BETWEEN 0 AND 100),
        -- {"outlet": "12.50"}: exact decimal text per custom price field.
        custom_prices jsonb NOT NULL DEFAULT '{}',
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, price_list_id, product_id, season)
      );
      CREATE INDEX prices_account_seq ON prices (account_id, seq) INCLUDE (id);
      CREATE INDEX prices_list_seq ON prices (account_id, price_list_id, seq) INCLUDE (id);
      CREATE INDEX prices_account_product ON prices (account_id, product_id);

      -- Ranges [from_date, to_date) of one (from, to, reference) never overlap, whoever writes.
      CREATE TABLE fx_rates (
        id bigserial PRIMARY KEY,
        account_id uuid NOT NULL,
        external_reference text NOT NULL DEFAULT '',
        from_currency text NOT NULL,
        to_currency text NOT NULL,
        rate numeric NOT NULL CHECK (rate > 0),
        from_date date NOT NULL,
        to_date date,
        exchange_date date,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (to_date IS NULL OR to_date > from_date),
        CONSTRAINT fx_rates_no_overlap EXCLUDE USING gist (
          account_id WITH =, from_currency WITH =, to_currency WITH =, external_reference WITH =,
          daterange(from_date, to_date, '[)') WITH &&
        )
      );

      CREATE TABLE pricats (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        external_id text NOT NULL,
        name text NOT NULL DEFAULT '',
        supplier_gln text,
        supplier_name text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, external_id)
      );
      CREATE INDEX pricats_account_seq ON pricats (account_id, seq) INCLUDE (id);

      CREATE TABLE pricat_skus (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        pricat_id uuid NOT NULL REFERENCES pricats (id),
        sku text NOT NULL,
        season text NOT NULL DEFAULT '',
        fields jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, pricat_id, sku, season)
      );
      CREATE INDEX pricat_skus_account_seq ON pricat_skus (account_id, seq) INCLUDE (id);
    `);
  },
  async down(db) {
    await db.raw("DROP TABLE pricat_skus, pricats, fx_rates, prices, price_lists, account_settings");
  },
};
