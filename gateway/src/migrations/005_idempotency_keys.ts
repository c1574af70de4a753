import type { Migration } from "@analytics/db";

/**
 * Idempotency-Key claims and the answers they keep, per (account, key), shared by every gateway
 * (CONTRACT "Retries"). A row without a status is a request still running, or one whose gateway
 * died before its answer was kept.
 */
export const idempotencyKeys: Migration = {
  name: "005_idempotency_keys",
  async up(db) {
    await db.raw(`CREATE TABLE idempotency_keys (
      account_id uuid NOT NULL,
      key text NOT NULL,
      -- sha256 of method, path and body: the same key with another request is a 422.
      fingerprint text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      status integer,
      content_type text,
      body text,
      PRIMARY KEY (account_id, key))`);
    // Expired claims are found by it and pruned.
    await db.raw("CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)");
  },
};
