import type { Migration } from "@analytics/db";

/** PurchaseOrder.buyer: who placed the order at the brand. */
export const purchaseOrderBuyer: Migration = {
  name: "006_purchase_order_buyer",
  async up(db) {
    await db.raw("ALTER TABLE purchase_orders ADD COLUMN buyer text");
  },
};
