import { Counter } from "prom-client";
import { retrying } from "@analytics/db";
import type { Worker, WorkerContext } from "@analytics/rpc";
import { gaugeReadOnScrape } from "@analytics/telemetry";
import * as repo from "./repository/queue";
import { releaseExpiredHolds } from "./subscriptions";

/** Aggregates released per transaction of the sweep. */
const SWEEP_BATCH = 100;

/**
 * The events service's sweep of held versions (subscriptions.ts): about every second (more often
 * with a bound below 2 s), the versions held longer than `holdMs` are queued in order and the
 * missing versions before them superseded (a missing version arriving after that makes no entry).
 * Each aggregate is released under its lock, read again, so replicas sweeping side by side release
 * it once. Metrics: the versions held now, the oldest hold's age, the versions superseded.
 */
export function gapSweeper(holdMs: number) {
  return ({ db, logger, metrics }: WorkerContext): Worker => {
    const log = logger.child({ worker: "gap-sweep" });
    const superseded = new Counter({
      name: "events_queue_superseded_versions_total",
      help:
        "Versions of products, prices, purchase orders and stock triggers that never came within EVENTS_GAP_HOLD_SECONDS: the later versions were queued without them " +
        "(first_seen: none of the aggregate had passed before, e.g. an order written before the queue tracked it)",
      labelNames: ["first_seen"],
      registers: [metrics],
    });
    let reading: ReturnType<typeof repo.holdStats> | undefined;
    const read = () => (reading ??= repo.holdStats(db).finally(() => setImmediate(() => (reading = undefined))));
    gaugeReadOnScrape(metrics, "events_queue_held_versions", "Versions held until the versions before them are queued", [], async () => [{ labels: {}, value: (await read()).held }]);
    gaugeReadOnScrape(metrics, "events_queue_oldest_hold_seconds", "How long the oldest held version has waited for the versions before it", [], async () => [
      { labels: {}, value: (await read()).oldest_seconds },
    ]);

    const sweep = async () => {
      for (;;) {
        const due = await repo.expiredHolds(db, holdMs, SWEEP_BATCH);
        if (!due.length) return;
        const ranges = await retrying(() => db.transaction((tx) => releaseExpiredHolds(tx, due, holdMs)));
        for (const r of ranges) {
          superseded.inc({ first_seen: String(r.firstSeen) }, r.to - r.from + 1);
          log.warn({ aggregate: r.key, from: r.from, to: r.to, firstSeen: r.firstSeen, holdMs }, "versions never came within the hold: the later ones are queued without them");
        }
        if (due.length < SWEEP_BATCH) return;
      }
    };
    const intervalMs = Math.min(1000, Math.max(20, holdMs / 2));
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    const tick = () => {
      running = sweep()
        .catch((err) => log.warn({ err }, "releasing held versions failed (the next sweep tries again)"))
        .finally(() => {
          running = undefined;
          if (!stopped) timer = setTimeout(tick, intervalMs);
        });
    };
    tick();
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await running;
      },
    };
  };
}
