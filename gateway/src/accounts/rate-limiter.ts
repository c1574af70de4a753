import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import type { Db } from "@analytics/db";

/** What one request may do, and what its answer tells of the account's bucket. */
export interface RateDecision {
  allowed: boolean;
  /** Tokens left (whole), the bucket's size and refill per second. */
  remaining: number;
  burst: number;
  perSecond: number;
  /** Seconds until this request's cost is available again (when refused). */
  retryAfter: number;
}

/** A write costs 1 per item, at least this much (CONTRACT "Rate limits"). */
export const MIN_WRITE_COST = 5;
/** and at most the largest batch a route takes (1000 items): a body over it is a 400 that does no work. */
export const MAX_WRITE_COST = 1000;

/**
 * Per-account token buckets, shared by every gateway: one row per account in the gateway's
 * schema (`rate_limit_buckets`), refilled and spent by one statement per request (an upsert that
 * reads the account's settings in the same statement), exact under any concurrency and any number
 * of replicas; time is the database's clock. A store that cannot answer lets the request through
 * (fail open): the limiter protects the platform from one account, it must not take the platform
 * down with it. Each such pass is logged and counted (gateway_rate_limiter_failures_total).
 */
export class RateLimiter {
  private readonly failures: Counter;

  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.failures = new Counter({
      name: "gateway_rate_limiter_failures_total",
      help: "Requests let through unlimited because the rate limiter's store did not answer",
      registers: [registry],
    });
  }

  /** Spends `cost` tokens of the account's bucket if it has them; undefined when the store failed (the request passes). */
  async spend(accountId: string, cost: number): Promise<RateDecision | undefined> {
    try {
      const { rows } = await this.db.raw<{ rows: { tokens: number; allowed: boolean; per_second: number; burst: number }[] }>(SPEND, { accountId, cost });
      const row = rows[0];
      if (!row) return undefined;
      const wanted = Math.min(cost, row.burst);
      return {
        allowed: row.allowed,
        remaining: Math.floor(row.tokens),
        burst: row.burst,
        perSecond: row.per_second,
        retryAfter: row.allowed ? 0 : Math.max(1, Math.ceil((wanted - row.tokens) / row.per_second)),
      };
    } catch (err) {
      this.failures.inc();
      this.logger.warn({ err, accountId }, "rate limiter unavailable: request let through unlimited");
      return undefined;
    }
  }
}

// The bucket refilled since its last request (at most its size); a cost over the size is the size,
// so that a batch bigger than a small bucket still gets through once the bucket is full.
const refilled = "least(excluded.burst, b.tokens + excluded.per_second * greatest(0, extract(epoch FROM now() - b.updated_at)))";
const cost = "least(:cost, excluded.burst)";
/** The one statement of each request (bench/rate-limiter.mjs times it alone). */
export const SPEND = `
  INSERT INTO rate_limit_buckets AS b (account_id, per_second, burst, tokens, updated_at, allowed)
  SELECT id, rate_limit_per_second, rate_limit_burst, rate_limit_burst - least(:cost, rate_limit_burst), now(), true FROM accounts WHERE id = :accountId
  ON CONFLICT (account_id) DO UPDATE SET
    per_second = excluded.per_second,
    burst = excluded.burst,
    tokens = ${refilled} - CASE WHEN ${refilled} >= ${cost} THEN ${cost} ELSE 0 END,
    allowed = ${refilled} >= ${cost},
    updated_at = now()
  RETURNING tokens, allowed, per_second, burst`;
