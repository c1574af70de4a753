import type { Migration } from "@analytics/db";

/**
 * The newest version of each purchase order and stock trigger the queue has seen (products have
 * theirs in product_replica), so that a message arriving after a newer one of the same aggregate
 * (redelivered after a replica died holding it, or handed to another replica's batch) makes no
 * entry: the newest entry of an aggregate is never older than its newest write.
 */
export const aggregateVersions: Migration = {
  name: "005_aggregate_versions",
  async up(db) {
    await db.raw(`
      CREATE TABLE aggregate_versions (
        account_id uuid NOT NULL,
        aggregate text NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (account_id, aggregate)
      )
    `);
  },
};
