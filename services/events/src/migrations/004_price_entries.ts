import type { Migration } from "@analytics/db";

/**
 * Prices are replicated one by one (a PriceChanged carries one price and its row's version), so a
 * price batch's messages no longer grow with the number of price lists, and a stale or replayed
 * message of a price is ignored. A deleted price stays as a tombstone, so an older upsert arriving
 * late cannot bring it back. A product's `prices` are its live rows in list order, then price order.
 * The replica of whole product price lists (003) is dropped; messages without a price_id (from
 * before this migration) are ignored.
 */
export const priceEntries: Migration = {
  name: "004_price_entries",
  async up(db) {
    await db.raw(`
      CREATE TABLE price_entry_replica (
        account_id uuid NOT NULL,
        price_id uuid NOT NULL,
        product_id uuid NOT NULL,
        version bigint NOT NULL,
        list_order bigint NOT NULL,
        price_order bigint NOT NULL,
        deleted boolean NOT NULL,
        price jsonb NOT NULL,
        PRIMARY KEY (account_id, price_id)
      );
      CREATE INDEX price_entry_replica_product ON price_entry_replica (account_id, product_id);
      DROP TABLE price_replica;
    `);
  },
};
