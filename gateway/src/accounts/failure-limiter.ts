/**
 * Brute-force brake: counts failures per key (a client address, an address and account) in a
 * fixed window. Kept in memory: each gateway replica brakes on its own, which bounds an attacker
 * to replicas x limit attempts per window.
 *
 * Every window has the same length, so a Map kept in insertion order (a key whose window is
 * renewed is deleted and inserted again) is also in order of expiry: expired keys are dropped from
 * its head as failures arrive, each failure costs O(1) amortised, and memory stays bounded by the
 * keys that failed within one window.
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
    this.dropExpired(t);
    for (const key of keys) {
      const w = this.windows.get(key);
      if (w && w.resetAt > t) {
        w.failures++;
        continue;
      }
      this.windows.delete(key);
      this.windows.set(key, { failures: 1, resetAt: t + this.windowMs });
    }
  }

  /** Keys that currently count failures (expired ones leave as new failures arrive). */
  get size(): number {
    return this.windows.size;
  }

  private dropExpired(t: number): void {
    for (const [key, w] of this.windows) {
      if (w.resetAt > t) return;
      this.windows.delete(key);
    }
  }
}
