import type { Migration } from "@analytics/db";

/**
 * Leases of rate limit tokens (gateway/src/limits/rate-limiter.ts): the tokens the last
 * statement on a bucket handed to its gateway, that statement's answer. `allowed` stays written
 * so that gateways of the previous release share the bucket during a rollout.
 */
export const rateLimitLeases: Migration = {
  name: "007_rate_limit_leases",
  async up(db) {
    await db.raw("ALTER TABLE rate_limit_buckets ADD COLUMN granted float8 NOT NULL DEFAULT 0");
  },
};
