import type { Migration } from "@analytics/db";

/**
 * An item keeps its product's integer id beside its UUID (the catalogue's, which never changes),
 * so that REST answers and draft_po_change payloads give `skuId` as the published client reads
 * it. Items written before have none: the orders service cannot read the catalogue's tables, so
 * the gateway resolves theirs when it answers them, until the order's next write stores them.
 */
export const itemSkuSeq: Migration = {
  name: "006_item_sku_seq",
  async up(db) {
    await db.raw("ALTER TABLE purchase_order_items ADD COLUMN sku_seq bigint");
  },
};
