import type { Db } from "@analytics/db";

/** A key that failures count against (a client address, an address and account) and how many it may have per window. */
export interface Brake {
  key: string;
  maxFailures: number;
}

/** Expired rows deleted by each failure: enough to outpace new keys, bounded so a failure stays cheap. */
const PRUNE_BATCH = 100;

/**
 * Brute-force brake: counts failures per key in a fixed window that starts with the key's first
 * failure. The counts live in the gateway's database (`auth_failures`), so every gateway brakes
 * on the same count: N gateways do not give N times the attempts. Time is the database's clock,
 * the same for all of them.
 *
 * An attempt is counted before its secret is checked, in one statement: an upsert that counts
 * atomically under any concurrency, and deletes a batch of expired rows of other keys on the way,
 * so the table holds about the keys that failed within one window. A right secret gives its count
 * back. Attempts on the same keys take turns within a gateway (check): a burst of right keys from
 * one address never holds more than one count at a time, so it is never braked by itself, while
 * attempts over the limit are still refused unchecked on every gateway. A database that cannot
 * answer fails the request (503), never lets it through unbraked.
 */
export class FailureLimiter {
  private readonly turns = new Turns();

  constructor(
    private readonly db: Db,
    private readonly windowSeconds: number,
  ) {}

  /** Seconds until every braked key may try again, or 0 when none is braked. */
  async retryAfter(brakes: Brake[]): Promise<number> {
    const { rows } = await this.db.raw<{ rows: { key: string; failures: number; seconds: number }[] }>(
      "SELECT key, failures, extract(epoch FROM reset_at - now())::float8 AS seconds FROM auth_failures WHERE key = ANY(?::text[]) AND reset_at > now()",
      [brakes.map((b) => b.key)],
    );
    let wait = 0;
    for (const row of rows) {
      const brake = brakes.find((b) => b.key === row.key);
      if (brake && row.failures >= brake.maxFailures) wait = Math.max(wait, Math.ceil(row.seconds));
    }
    return wait;
  }

  async fail(keys: string[]): Promise<void> {
    await this.count(keys);
  }

  /**
   * One attempt: counted, then `isRight` run unless the count is over a brake's limit; a right
   * attempt gives its count back, so only wrong ones stay counted. The seconds to wait when it was
   * refused unchecked, else whether it was right. Counted first, attempts made at once on several
   * gateways cannot all read a count from before any of them failed; taking turns here, right
   * ones made at once on this gateway never add up to the limit.
   */
  async check(brakes: Brake[], isRight: () => Promise<boolean>): Promise<{ retryAfter: number } | { right: boolean }> {
    const keys = brakes.map((b) => b.key);
    return this.turns.run(keys, async () => {
      const rows = await this.count(keys);
      let wait = 0;
      for (const row of rows) {
        const brake = brakes.find((b) => b.key === row.key);
        if (brake && row.failures > brake.maxFailures) wait = Math.max(wait, Math.ceil(row.seconds));
      }
      if (wait > 0) return { retryAfter: wait };
      const right = await isRight();
      if (right) await this.succeeded(keys);
      return { right };
    });
  }

  /** An attempt that was right: it counts as no failure. */
  private async succeeded(keys: string[]): Promise<void> {
    await this.db.raw("UPDATE auth_failures SET failures = greatest(failures - 1, 0) WHERE key = ANY(?::text[]) AND reset_at > now()", [[...new Set(keys)].sort()]);
  }

  /** One more for each key (in its window), with each key's count and seconds left after it. */
  private async count(keys: string[]): Promise<{ key: string; failures: number; seconds: number }[]> {
    // Keys in one order, so two failures on the same keys never wait for each other's rows crosswise.
    const sorted = [...new Set(keys)].sort();
    const { rows } = await this.db.raw<{ rows: { key: string; failures: number; seconds: number }[] }>(
      `WITH pruned AS (
         DELETE FROM auth_failures WHERE key IN (
           SELECT key FROM auth_failures WHERE reset_at <= now() AND key <> ALL(:keys::text[])
           ORDER BY reset_at LIMIT :batch FOR UPDATE SKIP LOCKED))
       INSERT INTO auth_failures (key, failures, reset_at)
       SELECT key, 1, now() + make_interval(secs => :window) FROM unnest(:keys::text[]) AS key
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN auth_failures.reset_at > now() THEN auth_failures.failures + 1 ELSE 1 END,
         reset_at = CASE WHEN auth_failures.reset_at > now() THEN auth_failures.reset_at ELSE excluded.reset_at END
       RETURNING key, failures, extract(epoch FROM reset_at - now())::float8 AS seconds`,
      { keys: sorted, batch: PRUNE_BATCH, window: this.windowSeconds },
    );
    return rows;
  }
}

/** Work on a set of keys run one at a time per key, in this process (no connection held while waiting). */
class Turns {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(keys: string[], work: () => Promise<T>): Promise<T> {
    // Keys taken in one order: two attempts sharing keys never wait for each other crosswise.
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.take(key));
      return await work();
    } finally {
      for (const release of releases) release();
    }
  }

  private take(key: string): Promise<() => void> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = before.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.tails.set(key, tail);
    return before.then(() => () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
  }
}
