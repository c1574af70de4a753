import type { Tx } from "@analytics/db";

/**
 * Two transactions that lock rows 1 and 2 of `table` (columns `id`, `n`) in opposite orders on
 * their first attempt, so Postgres aborts one of them as a deadlock victim (40P01). `run` is the
 * transaction runner under test; `attempts` counts how often each side's work ran.
 */
export function crossingTransactions(table: string, run: (work: (tx: Tx) => Promise<void>) => Promise<unknown>) {
  const attempts = [0, 0];
  let bothLocked!: () => void;
  const barrier = new Promise<void>((resolve) => (bothLocked = resolve));
  let locked = 0;
  const side = (which: 0 | 1) =>
    run(async (tx) => {
      const attempt = ++attempts[which];
      const [first, second] = which === 0 ? [1, 2] : [2, 1];
      await tx(table).where({ id: first }).increment("n", 1);
      if (attempt === 1) {
        if (++locked === 2) bothLocked();
        await barrier;
      }
      await tx(table).where({ id: second }).increment("n", 1);
    });
  return { attempts, settled: Promise.allSettled([side(0), side(1)]) };
}
