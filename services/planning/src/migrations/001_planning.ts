import type { Migration } from "@analytics/db";

/**
 * Planning's replica, built only from bus messages. Every row keeps the `version` of the message
 * that wrote it; a message is applied only when its version is newer (last writer wins), so
 * duplicates, replays and any delivery order converge. Deletions are kept as tombstones
 * (`deleted`), so an older upsert arriving late cannot bring a deleted row back.
 */
export const createReplica: Migration = {
  name: "001_planning",
  async up(db) {
    await db.raw(`
      CREATE TABLE accounts (
        account_id uuid PRIMARY KEY,
        version bigint NOT NULL,
        timezone text NOT NULL DEFAULT ''
      );

      CREATE TABLE skus (
        account_id uuid NOT NULL,
        sku_id uuid NOT NULL,
        version bigint NOT NULL,
        key text NOT NULL,
        sku text,
        status int NOT NULL,
        active_planning boolean NOT NULL,
        season text,
        product_group_id text,
        variant_group_id text,
        brand text,
        category text,
        size text,
        department text,
        gender text,
        collection text,
        color text,
        sub_category text,
        product_type text,
        merchandise_type text,
        pim_custom text[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (account_id, sku_id)
      );

      CREATE TABLE warehouses (
        account_id uuid NOT NULL,
        warehouse_id uuid NOT NULL,
        version bigint NOT NULL,
        external_id text NOT NULL,
        name text NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        PRIMARY KEY (account_id, warehouse_id)
      );
      CREATE INDEX warehouses_external ON warehouses (account_id, external_id) WHERE NOT deleted;

      -- One stock snapshot per (warehouse, SKU); keyed SKU first, which is how volumes join it.
      CREATE TABLE stock (
        account_id uuid NOT NULL,
        sku_id uuid NOT NULL,
        warehouse_id uuid NOT NULL,
        version bigint NOT NULL,
        available_quantity int NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        PRIMARY KEY (account_id, sku_id, warehouse_id)
      );

      CREATE TABLE purchase_orders (
        account_id uuid NOT NULL,
        purchase_order_id uuid NOT NULL,
        version bigint NOT NULL,
        delivery_status int NOT NULL,
        updated_at timestamptz,
        PRIMARY KEY (account_id, purchase_order_id)
      );

      -- The lines of each order's newest version. kind: 'po' (counts as PO volume), 'draft'
      -- (draft-PO volume) or 'cancelled' (kept only so updatedSince sees the change).
      -- changed_at is the order's updated_at at the source, the same whatever the replay order.
      CREATE TABLE purchase_order_lines (
        account_id uuid NOT NULL,
        purchase_order_id uuid NOT NULL,
        item_id text NOT NULL,
        sku_id uuid NOT NULL,
        external_warehouse_id text NOT NULL,
        delivery_date date,
        open_quantity int NOT NULL,
        kind text NOT NULL,
        changed_at timestamptz,
        PRIMARY KEY (account_id, purchase_order_id, item_id)
      );
      CREATE INDEX purchase_order_lines_window ON purchase_order_lines (account_id, delivery_date)
        INCLUDE (sku_id, kind, open_quantity, external_warehouse_id) WHERE kind <> 'cancelled';
      CREATE INDEX purchase_order_lines_changed ON purchase_order_lines (account_id, changed_at) INCLUDE (sku_id, external_warehouse_id);
    `);
  },
  async down(db) {
    await db.raw("DROP TABLE purchase_order_lines, purchase_orders, stock, warehouses, skus, accounts");
  },
};
