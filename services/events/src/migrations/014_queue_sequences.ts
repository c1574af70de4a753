import type { Migration } from "@analytics/db";

/**
 * The queue never goes back in time (subscriptions.ts, queueConsumer): per product, price, purchase
 * order and stock trigger, `queue_sequences` keeps the last version that passed (its entry queued,
 * or none due: an order that never was a draft), and a later version whose predecessor has not
 * come yet waits in `held_versions`, its message as it came, until the predecessor passes or the
 * gap has been open past EVENTS_GAP_HOLD_SECONDS (then the missing versions are superseded).
 * Seeded with what the replicas and queued_versions know, so an aggregate that has entries goes
 * on from its newest one. `entry_aggregate` is the aggregate whose lock the message's entry takes
 * (a price's product).
 */
export const queueSequences: Migration = {
  name: "014_queue_sequences",
  async up(db) {
    await db.raw(`
      CREATE TABLE queue_sequences (
        account_id uuid NOT NULL,
        aggregate text NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (account_id, aggregate)
      );
      INSERT INTO queue_sequences (account_id, aggregate, version)
        SELECT account_id, aggregate, max(version) FROM (
          SELECT account_id, 'sku:' || product_id AS aggregate, version FROM product_replica
          UNION ALL SELECT account_id, 'price:' || price_id, version FROM price_entry_replica
          UNION ALL SELECT account_id, aggregate, version FROM aggregate_versions
          UNION ALL SELECT account_id, aggregate, version FROM queued_versions
        ) AS known GROUP BY account_id, aggregate;
      CREATE TABLE held_versions (
        account_id uuid NOT NULL,
        aggregate text NOT NULL,
        version bigint NOT NULL,
        entry_aggregate text NOT NULL,
        message_id text NOT NULL,
        subject text NOT NULL,
        occurred_at text NOT NULL,
        payload bytea NOT NULL,
        held_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, aggregate, version)
      );
      CREATE INDEX held_versions_held_at ON held_versions (held_at);
    `);
  },
  async down(db) {
    await db.raw("DROP TABLE held_versions; DROP TABLE queue_sequences");
  },
};
