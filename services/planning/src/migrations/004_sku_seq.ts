import type { Migration } from "@analytics/db";

/**
 * The replica keeps each SKU's integer id (the catalogue's, which never changes), so that the
 * skuIds filter takes it as well as the UUID. A SKU replicated before has none until its product
 * next changes.
 */
export const skuSeq: Migration = {
  name: "004_sku_seq",
  async up(db) {
    await db.raw("ALTER TABLE skus ADD COLUMN sku_seq bigint");
    await db.raw("CREATE INDEX skus_account_sku_seq ON skus (account_id, sku_seq)");
  },
};
