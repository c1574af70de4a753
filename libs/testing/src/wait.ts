// Waits for a condition, never for a fixed time.

/**
 * Awaits `done(count())`, failing only when the count has not moved for `stallMs`: each wait is
 * eventually()'s for the next move, so a loaded machine gets the time it needs (a backlog
 * draining) and a stuck one fails as quickly as an idle one would.
 */
export async function whileProgressing(
  count: () => Promise<number>,
  done: (n: number) => boolean,
  stallMs = 15_000,
  what: string | (() => string) = "progress",
  options: WaitOptions = {},
): Promise<number> {
  let last: number | undefined;
  for (;;) {
    const seen = last;
    const n = await eventually(
      async () => {
        const now = await count();
        return done(now) || now !== seen ? now : undefined;
      },
      stallMs,
      () => `${typeof what === "function" ? what() : what} (stalled at ${seen})`,
      options,
    );
    if (done(n)) return n;
    last = n;
  }
}

export interface WaitOptions {
  /** An error thrown by the check ends the wait at once (default: it is retried until the time is up). */
  rethrow?: boolean;
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what: string | (() => string) = "condition",
  options: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      if (options.rethrow) throw error;
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "function" ? what() : what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
