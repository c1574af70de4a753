import type { Migration } from "@analytics/db";

/**
 * Every version of a product, purchase order or stock trigger makes its entry, also one arriving
 * after a newer one (subscriptions.ts, queueConsumer): `queued_versions` holds the versions that
 * have one, so that a replay of a version makes none again; aggregate_versions keeps, beside the
 * newest version of an order or trigger with an entry, that entry's payload, appended again
 * after a late older entry so that the newest entry shows the newest state (a product's comes
 * from product_replica). The versions already queued are the newest ones known; a row from before
 * this migration has no payload, and a message older than it makes no entry (the rule before).
 */
export const queuedVersions: Migration = {
  name: "008_queued_versions",
  async up(db) {
    await db.raw(`
      CREATE TABLE queued_versions (
        account_id uuid NOT NULL,
        aggregate text NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (account_id, aggregate, version)
      );
      INSERT INTO queued_versions (account_id, aggregate, version)
        SELECT account_id, 'sku:' || product_id, version FROM product_replica
        UNION ALL SELECT account_id, aggregate, version FROM aggregate_versions;
      ALTER TABLE aggregate_versions ADD COLUMN payload jsonb;
    `);
  },
};
