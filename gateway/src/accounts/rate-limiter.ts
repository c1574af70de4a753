import pg from "pg";
import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";

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

/** The limiter's own connections, out of the gateway's DB_POOL_MAX (one when that is under 4). */
export function rateLimiterPoolMax(dbPoolMax: number): number {
  return dbPoolMax >= 4 ? 2 : 1;
}

export interface RateLimiterOptions {
  url: string;
  /** The gateway's schema, where `accounts` and `rate_limit_buckets` are. */
  schema: string;
  poolMax: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
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
 *
 * It runs on a small pool of its own with plain pg and a named prepared statement (parsed and
 * planned once per connection): the statement runs before every request, and knex's query
 * building was half of its cost (bench/rate-limiter.mjs, docs/benchmarks.md).
 */
export class RateLimiter {
  private readonly failures: Counter;
  private readonly pool: pg.Pool;

  constructor(
    options: RateLimiterOptions,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.failures = new Counter({
      name: "gateway_rate_limiter_failures_total",
      help: "Requests let through unlimited because the rate limiter's store did not answer",
      registers: [registry],
    });
    this.pool = new pg.Pool({
      connectionString: options.url,
      application_name: "gateway-rate-limiter",
      options: `-c search_path=${options.schema}`,
      max: options.poolMax,
      connectionTimeoutMillis: options.acquireTimeoutMs,
      statement_timeout: options.statementTimeoutMs,
      // A frozen server never sends the cancellation: the client stops waiting on its own (and
      // the pool drops a connection whose query failed).
      query_timeout: options.statementTimeoutMs + 1_000,
    });
    // An idle connection the server closed: the pool drops it; the next spend opens another.
    this.pool.on("error", (err) => this.logger.warn({ err }, "rate limiter connection lost"));
  }

  /** Closes the limiter's connections (gateway shutdown). */
  close(): Promise<void> {
    return this.pool.end();
  }

  /** Spends `cost` tokens of the account's bucket if it has them; undefined when the store failed (the request passes). */
  async spend(accountId: string, cost: number): Promise<RateDecision | undefined> {
    try {
      const { rows } = await this.pool.query<[number, boolean, number, number]>({ name: "rate-limit-spend", text: SPEND, values: [accountId, cost], rowMode: "array" });
      const row = rows[0];
      if (!row) return undefined;
      const [tokens, allowed, perSecond, burst] = row;
      const wanted = Math.min(cost, burst);
      return {
        allowed,
        remaining: Math.floor(tokens),
        burst,
        perSecond,
        retryAfter: allowed ? 0 : Math.max(1, Math.ceil((wanted - tokens) / perSecond)),
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
const cost = "least($2, excluded.burst)";
/** The one statement of each request, $1 the account, $2 the cost (bench/rate-limiter.mjs times it alone). */
export const SPEND = `
  INSERT INTO rate_limit_buckets AS b (account_id, per_second, burst, tokens, updated_at, allowed)
  SELECT id, rate_limit_per_second, rate_limit_burst, rate_limit_burst - least($2, rate_limit_burst), now(), true FROM accounts WHERE id = $1
  ON CONFLICT (account_id) DO UPDATE SET
    per_second = excluded.per_second,
    burst = excluded.burst,
    tokens = ${refilled} - CASE WHEN ${refilled} >= ${cost} THEN ${cost} ELSE 0 END,
    allowed = ${refilled} >= ${cost},
    updated_at = now()
  RETURNING tokens, allowed, per_second, burst`;
