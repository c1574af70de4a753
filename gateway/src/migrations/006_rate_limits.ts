import type { Migration } from "@analytics/db";

/**
 * Per-account rate limits (CONTRACT "Rate limits"): each account's bucket size and refill rate
 * (admin settings) and its token bucket, shared by every gateway.
 */
export const rateLimits: Migration = {
  name: "006_rate_limits",
  async up(db) {
    await db.raw("ALTER TABLE accounts ADD COLUMN rate_limit_per_second integer NOT NULL DEFAULT 100");
    await db.raw("ALTER TABLE accounts ADD COLUMN rate_limit_burst integer NOT NULL DEFAULT 6000");
    // One row per account, updated by one statement per lease of tokens (007, rate-limiter.ts;
    // before leases, one per request): the account's settings copied in
    // (that statement's refill reads them), the tokens left, and `allowed`, that request's answer.
    // Unlogged: no WAL, so a request's update commits without waiting for a disk flush; a crash of
    // Postgres empties it, which only gives every account a full bucket.
    await db.raw(`CREATE UNLOGGED TABLE rate_limit_buckets (
      account_id uuid PRIMARY KEY,
      per_second integer NOT NULL,
      burst integer NOT NULL,
      tokens float8 NOT NULL,
      updated_at timestamptz NOT NULL,
      allowed boolean NOT NULL)`);
  },
};
