import type { Migration } from "@analytics/db";

/** A product's version: grows with every write, so replicas apply its messages last-writer-wins. */
export const productVersion: Migration = {
  name: "002_product_version",
  async up(db) {
    await db.raw("ALTER TABLE products ADD COLUMN version bigint NOT NULL DEFAULT 1");
  },
};
