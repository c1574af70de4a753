import type { Migration } from "@analytics/db";

/**
 * The published client's additional fields (CONTRACT.md, "Compatibility"): kept as sent in an
 * `attributes` object per purchase order, purchase-order item and distribution-order row.
 * Transactions keep theirs inside their proto JSON body.
 */
export const clientAttributes: Migration = {
  name: "005_client_attributes",
  async up(db) {
    await db.raw("ALTER TABLE purchase_orders ADD COLUMN attributes jsonb");
    await db.raw("ALTER TABLE purchase_order_items ADD COLUMN attributes jsonb");
    await db.raw("ALTER TABLE distribution_orders ADD COLUMN attributes jsonb");
  },
};
