import type { Migration } from "@analytics/db";

/**
 * A trigger keeps its product's integer id (the catalogue's, which never changes), so that it is
 * answered as the published client reads it (`skuId` an integer). Triggers written before have
 * none until their next write.
 */
export const triggerSkuSeq: Migration = {
  name: "003_trigger_sku_seq",
  async up(db) {
    await db.raw("ALTER TABLE stock_triggers ADD COLUMN sku_seq bigint");
    await db.raw("CREATE INDEX stock_triggers_account_sku_seq ON stock_triggers (account_id, sku_seq)");
  },
};
