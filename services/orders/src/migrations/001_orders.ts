import type { Migration } from "@analytics/db";

/**
 * Purchase orders and their items. Paged lists read ids by an index-only scan of (account_id, seq)
 * INCLUDE (id); `content` is the order's writable fields as canonical JSON, so a re-sent order
 * that changes nothing is recognised in SQL and left alone (no update, no message).
 */
export const createOrders: Migration = {
  name: "001_orders",
  async up(db) {
    await db.raw(`
      CREATE TABLE purchase_orders (
        id uuid PRIMARY KEY,
        seq bigserial NOT NULL,
        account_id uuid NOT NULL,
        api_key_id text NOT NULL,
        external_po_no text NOT NULL,
        order_date timestamptz,
        delivery_date timestamptz,
        delivery_status smallint NOT NULL DEFAULT 0 CHECK (delivery_status BETWEEN 0 AND 5),
        external_comment text,
        external_warehouse_id text,
        supplier text,
        label text,
        order_type text,
        content jsonb NOT NULL,
        version bigint NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (account_id, external_po_no)
      )`);
    await db.raw("CREATE INDEX purchase_orders_account_seq_id ON purchase_orders (account_id, seq) INCLUDE (id)");
    await db.raw("CREATE INDEX purchase_orders_account_key_seq ON purchase_orders (account_id, api_key_id, seq) INCLUDE (id)");
    await db.raw(`
      CREATE TABLE purchase_order_items (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        purchase_order_id uuid NOT NULL REFERENCES purchase_orders (id) ON DELETE CASCADE,
        position integer NOT NULL,
        external_row_id text,
        key text,
        sku text,
        ean text,
        season text,
        sku_id text NOT NULL DEFAULT '',
        quantity integer NOT NULL,
        delivery_date timestamptz,
        external_warehouse_id text,
        total_price_net numeric,
        total_price_vat numeric,
        total_price_currency text,
        deliveries jsonb NOT NULL DEFAULT '[]',
        delivered_quantity integer NOT NULL DEFAULT 0
      )`);
    await db.raw("CREATE INDEX purchase_order_items_order ON purchase_order_items (purchase_order_id, position)");
    await db.raw(
      "CREATE UNIQUE INDEX purchase_order_items_row ON purchase_order_items (purchase_order_id, external_row_id) WHERE external_row_id IS NOT NULL",
    );
  },
};
