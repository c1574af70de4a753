/**
 * Brute-force brake for POST /auth: counts failures per key (client address, account) in a fixed
 * window. Kept in memory: each gateway replica brakes on its own, which bounds an attacker to
 * replicas x limit attempts per window.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the first blocked key may try again, or 0 when none is blocked. */
  retryAfter(keys: string[]): number {
    const t = this.now();
    let wait = 0;
    for (const key of keys) {
      const w = this.windows.get(key);
      if (!w || w.resetAt <= t) continue;
      if (w.failures >= this.maxFailures) wait = Math.max(wait, Math.ceil((w.resetAt - t) / 1000));
    }
    return wait;
  }

  fail(keys: string[]): void {
    const t = this.now();
    if (this.windows.size > 100_000) this.sweep(t);
    for (const key of keys) {
      const w = this.windows.get(key);
      if (!w || w.resetAt <= t) this.windows.set(key, { failures: 1, resetAt: t + this.windowMs });
      else w.failures++;
    }
  }

  private sweep(t: number): void {
    for (const [key, w] of this.windows) if (w.resetAt <= t) this.windows.delete(key);
  }
}
