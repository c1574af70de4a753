import type { Migration } from "@analytics/db";

/**
 * The replica's epoch: a random id made when the schema is created. The durable consumer is named
 * after it, so a new or wiped schema gets a new consumer, which JetStream starts at the stream's
 * first message: the replica rebuilds itself by replay (docs/planning.md, "Rebuild").
 */
export const replicaEpoch: Migration = {
  name: "002_replica_epoch",
  async up(db) {
    await db.raw(`
      CREATE TABLE replica_epoch (id text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO replica_epoch (id) VALUES (substr(md5(gen_random_uuid()::text), 1, 12));
    `);
  },
};
