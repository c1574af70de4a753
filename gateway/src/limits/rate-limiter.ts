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

/** How long a gateway may spend a lease on its own: a settings change, or tokens another gateway lacks, wait at most this long. */
export const LEASE_MS = 1_000;

/** Tokens of one account's bucket that this gateway holds, and what the bucket said when it took them. */
interface Lease {
  tokens: number;
  expiresAt: number;
  /** The shared bucket's tokens left just after this lease was taken. */
  sharedLeft: number;
  burst: number;
  perSecond: number;
}

/**
 * What the store answered when it refused one of the account's requests: its bucket's tokens then
 * (on this gateway's clock), by which the account's next requests are refused here without a
 * statement until the bucket could hold them, for at most LEASE_MS.
 */
interface Refusal {
  tokens: number;
  at: number;
  until: number;
  burst: number;
  perSecond: number;
}

/**
 * Per-account token buckets, shared by every gateway: one row per account in the gateway's
 * schema (`rate_limit_buckets`) that one statement refills and takes a lease of tokens from,
 * reading the account's settings in the same statement; time is the database's clock. Each
 * gateway spends its lease on its own and takes the next one only when the lease cannot pay a
 * request: at most one statement per request, and while the bucket is well filled one per
 * `perSecond / 10` (at most `burst / 50`) tokens. The tokens are deducted from the row when leased, so
 * all gateways together never spend more than the bucket gives; near the limit a lease is exactly
 * the request's cost, as exact as one statement per request. A lease lasts LEASE_MS: settings
 * changes apply at the next lease. A refusal is remembered the same way: the account's requests
 * that the refused bucket could not hold yet (refilled at its rate since) are refused here without
 * a statement, for at most LEASE_MS (tokens given back by other gateways, or a settings change,
 * show at the next statement), so a limited account's flood costs the shared store nothing. What a lease has left when the next one is taken (it could not
 * pay, or expired) goes back to the bucket in that same statement; an account that stops calling
 * leaves at most one lease per gateway out, a tenth of a second of refill, until it refills.
 *
 * A store that cannot answer lets the request through (fail open): the limiter protects the
 * platform from one account, it must not take the platform down with it. Each such pass is logged
 * and counted (gateway_rate_limiter_failures_total).
 *
 * It runs on a small pool of its own with plain pg and a named prepared statement (parsed and
 * planned once per connection), cheap next to the gateway hop (the rate-limit-leases bench,
 * docs/benchmarks.md).
 */
export class RateLimiter {
  private readonly failures: Counter;
  private readonly statements: Counter;
  private readonly pool: pg.Pool;
  private readonly now: () => number;
  private readonly leases = new Map<string, Lease>();
  private readonly refusals = new Map<string, Refusal>();
  /** The lease statement running per account: one at a time; the account's other requests wait for it. */
  private readonly taking = new Map<string, Promise<RateDecision | undefined>>();

  constructor(
    options: RateLimiterOptions,
    private readonly logger: Logger,
    registry: Registry,
    /** Milliseconds of a monotonic clock, for the leases' expiry (tests move it). */
    now: () => number = () => performance.now(),
  ) {
    this.now = now;
    this.failures = new Counter({
      name: "gateway_rate_limiter_failures_total",
      help: "Requests let through unlimited because the rate limiter's store did not answer",
      registers: [registry],
    });
    this.statements = new Counter({
      name: "gateway_rate_limiter_statements_total",
      help: "Lease statements the rate limiter ran on its store (a lease or a remembered refusal answers the other requests)",
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
    for (;;) {
      const lease = this.leases.get(accountId);
      if (lease && this.now() < lease.expiresAt && lease.tokens >= Math.min(cost, lease.burst)) {
        lease.tokens -= Math.min(cost, lease.burst);
        return decisionOf(lease);
      }
      const refused = this.refusal(accountId, cost);
      if (refused) return refused;
      const taking = this.taking.get(accountId);
      if (!taking) break;
      // Another request of this account is taking a lease: this one is served from it if it can
      // be, and passes if the store failed.
      if (!(await taking.then(() => true, () => false))) return this.failedOpen();
    }
    const taking = this.takeLease(accountId, cost).finally(() => this.taking.delete(accountId));
    this.taking.set(accountId, taking);
    try {
      return await taking;
    } catch (err) {
      this.logger.warn({ err, accountId }, "rate limiter unavailable: request let through unlimited");
      return this.failedOpen();
    }
  }

  /**
   * The refusal of a request of `cost` when the account's last refusal here says its bucket cannot
   * hold it yet; no statement. Undefined when the store has to be asked.
   */
  refusal(accountId: string, cost: number): RateDecision | undefined {
    const refusal = this.refusals.get(accountId);
    if (!refusal) return undefined;
    const now = this.now();
    if (now >= refusal.until) {
      this.refusals.delete(accountId);
      return undefined;
    }
    const { burst, perSecond } = refusal;
    const tokens = Math.min(burst, refusal.tokens + ((now - refusal.at) / 1000) * perSecond);
    const wanted = Math.min(cost, burst);
    if (tokens >= wanted) return undefined;
    return { allowed: false, remaining: Math.floor(tokens), burst, perSecond, retryAfter: Math.max(1, Math.ceil((wanted - tokens) / perSecond)) };
  }

  /**
   * One statement: gives back what the account's lease has left and takes a new lease that pays
   * `cost` (paid from it here) if the bucket has it; the refusal when it has not.
   */
  private async takeLease(accountId: string, cost: number): Promise<RateDecision | undefined> {
    const expiresAt = this.now() + LEASE_MS;
    // Lost if the statement fails (it may have been taken back): never spent twice.
    const returned = this.leases.get(accountId)?.tokens ?? 0;
    this.leases.delete(accountId);
    this.refusals.delete(accountId);
    this.statements.inc();
    const { rows } = await this.pool.query<[number, number, number, number]>({ name: "rate-limit-lease", text: LEASE, values: [accountId, cost, returned], rowMode: "array" });
    const row = rows[0];
    if (!row) return undefined;
    const [tokens, granted, perSecond, burst] = row;
    const wanted = Math.min(cost, burst);
    if (granted === 0) {
      const at = this.now();
      this.refusals.set(accountId, { tokens, at, until: at + LEASE_MS, burst, perSecond });
      return { allowed: false, remaining: Math.floor(tokens), burst, perSecond, retryAfter: Math.max(1, Math.ceil((wanted - tokens) / perSecond)) };
    }
    const lease = { tokens: granted - wanted, expiresAt, sharedLeft: tokens, burst, perSecond };
    this.leases.set(accountId, lease);
    return decisionOf(lease);
  }

  private failedOpen(): undefined {
    this.failures.inc();
    return undefined;
  }
}

/** An allowed request's answer: the bucket's tokens as the lease found them, less what this gateway spent of the lease since (other gateways' spending and the refill since are not seen). */
function decisionOf(lease: Lease): RateDecision {
  return { allowed: true, remaining: Math.floor(lease.sharedLeft + lease.tokens), burst: lease.burst, perSecond: lease.perSecond, retryAfter: 0 };
}

// The bucket refilled since its last statement, with what the gateway gives back of its lease (at
// most its size).
const refilled = "least(excluded.burst, b.tokens + $3 + excluded.per_second * greatest(0, extract(epoch FROM now() - b.updated_at)))";
/**
 * The lease out of `available` tokens of a bucket of `burst` refilled `perSecond`: bigger than the
 * cost only while the bucket holds ten such leases, a tenth of a second of refill and at most a
 * fiftieth of the bucket (what a gateway that stops calling leaves unused); below that exactly the
 * cost, so that near the limit no gateway holds tokens another lacks; none when the cost is not
 * there. A cost over the bucket's size is the size, so that a batch bigger than a small bucket
 * still gets through once the bucket is full.
 */
function leaseOf(available: string, perSecond: string, burst: string): string {
  const cost = `least($2, ${burst})`;
  const big = `floor(least(${perSecond}::float8 / 10, ${burst}::float8 / 50))`;
  return `CASE WHEN ${big} > ${cost} AND ${available} >= 10 * ${big} THEN ${big} WHEN ${available} >= ${cost} THEN ${cost} ELSE 0 END`;
}
const firstLease = leaseOf("rate_limit_burst", "rate_limit_per_second", "rate_limit_burst");
const lease = leaseOf(refilled, "excluded.per_second", "excluded.burst");
/** The one statement of a lease, $1 the account, $2 the cost, $3 the tokens given back (the rate-limit-leases bench times it alone). */
export const LEASE = `
  INSERT INTO rate_limit_buckets AS b (account_id, per_second, burst, tokens, updated_at, allowed, granted)
  SELECT id, rate_limit_per_second, rate_limit_burst, rate_limit_burst - ${firstLease}, now(), true, ${firstLease}
  FROM accounts WHERE id = $1
  ON CONFLICT (account_id) DO UPDATE SET
    per_second = excluded.per_second,
    burst = excluded.burst,
    tokens = ${refilled} - ${lease},
    allowed = ${lease} > 0,
    granted = ${lease},
    updated_at = now()
  RETURNING tokens, granted, per_second, burst`;
