import type { Migration } from "@analytics/db";

/**
 * Each SKU's EAN: a sales item that names its SKU by EAN alone (no key, no sku, as POS systems
 * send scans) counts toward the SKU with that EAN. SKUs replicated before get theirs from the
 * catalogue's re-announcement (catalogue migration 005, analytics.catalogue.sku.backfilled).
 */
export const skuEan: Migration = {
  name: "010_sku_ean",
  async up(db) {
    await db.raw(`
      ALTER TABLE skus ADD COLUMN ean text;
      CREATE INDEX skus_ean ON skus (account_id, ean) WHERE ean IS NOT NULL;
      CREATE INDEX sales_lines_ean ON sales_lines (account_id, ean) WHERE key IS NULL AND sku IS NULL;
    `);
  },
  async down(db) {
    await db.raw("DROP INDEX sales_lines_ean, skus_ean; ALTER TABLE skus DROP COLUMN ean");
  },
};
