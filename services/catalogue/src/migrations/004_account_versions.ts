import { createAccountVersions, type Migration } from "@analytics/db";

/**
 * The version of each account's catalogue data, behind the gateway's weak ETags on its lists
 * (CONTRACT "Conditional requests"): bumped by triggers (libs/db createAccountVersions) after
 * every statement that inserts, updates or deletes rows of the tables the lists read, in its
 * transaction: products (GET /products and /skus), brands, categories, key switches' synonyms,
 * images and mapping tables.
 */
export const accountVersions: Migration = {
  name: "004_account_versions",
  async up(db) {
    await createAccountVersions(db, ["brands", "categories", "products", "sku_synonyms", "images", "mapping_tables"]);
  },
};
