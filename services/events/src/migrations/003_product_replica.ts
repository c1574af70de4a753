import type { Migration } from "@analytics/db";

/**
 * What an update_sku entry shows, fed only by messages: each product as the catalogue last
 * announced it (applied by version) and its prices as pricing last announced them, so that a
 * product change and a price change both give the product as GET /products returns it.
 */
export const productReplica: Migration = {
  name: "003_product_replica",
  async up(db) {
    await db.raw(`
      CREATE TABLE product_replica (
        account_id uuid NOT NULL,
        product_id uuid NOT NULL,
        version bigint NOT NULL,
        product jsonb NOT NULL,
        PRIMARY KEY (account_id, product_id)
      );
      CREATE TABLE price_replica (
        account_id uuid NOT NULL,
        product_id uuid NOT NULL,
        prices jsonb NOT NULL,
        PRIMARY KEY (account_id, product_id)
      );
    `);
  },
};
