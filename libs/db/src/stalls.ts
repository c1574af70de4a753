import { performance } from "node:perf_hooks";

/**
 * When this process last did not run for a while: stopped (SIGSTOP, a paused VM or node) or
 * blocked. Timers that came due meanwhile fire at once when it runs again, before the I/O that
 * happened while it stood still is read; a wait's timeout that fires then says nothing about what
 * it waited for (a pooled connection handed back, a server's answer).
 */
export const STALL_MS = 1_000;
const TICK_MS = 100;

let lastTick = performance.now();
let lastStallEnd = Number.NEGATIVE_INFINITY;
let watching: NodeJS.Timeout | undefined;

/** Starts the watch (once per process; it keeps no process alive). */
export function watchStalls(): void {
  if (watching) return;
  lastTick = performance.now();
  watching = setInterval(() => {
    const now = performance.now();
    if (now - lastTick > STALL_MS) lastStallEnd = now;
    lastTick = now;
  }, TICK_MS).unref();
}

/** The process stood still for over STALL_MS at some time since `since` (a performance.now() value), or does now. */
export function stalledSince(since: number): boolean {
  const now = performance.now();
  return now - lastTick > STALL_MS || lastStallEnd >= since;
}
