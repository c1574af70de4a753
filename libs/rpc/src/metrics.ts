import type { Registry } from "prom-client";
import type { Bus } from "@analytics/bus";
import type { Db } from "@analytics/db";
import type { OutboxRelay } from "@analytics/outbox";
import { counterReadOnScrape, gaugeReadOnScrape } from "@analytics/telemetry";

/**
 * What every deployable with a database and an outbox reports (the gateway and each service):
 * its pool's connections, its outbox's backlog (how far publication lags behind commits) and the
 * relay's counters.
 */
export function storeMetrics(registry: Registry, db: Db, relay: OutboxRelay | undefined): void {
  gaugeReadOnScrape(registry, "db_pool_connections", "Connections of this process's Postgres pool, by state (pending: callers waiting for one)", ["state"], () => {
    const pool = db.client.pool;
    if (!pool) return [];
    return [
      { labels: { state: "used" }, value: pool.numUsed() },
      { labels: { state: "idle" }, value: pool.numFree() },
      { labels: { state: "pending" }, value: pool.numPendingAcquires() },
    ];
  });
  gaugeReadOnScrape(registry, "db_pool_max_connections", "Connections this process's pool may open (DB_POOL_MAX)", [], () => [{ labels: {}, value: db.client.pool?.max ?? 0 }]);
  // One statement per scrape for the three outbox readings (one pooled connection, not three), each
  // over a partial index that holds exactly its rows (outbox_pending, outbox_dead).
  let reading: Promise<{ pending: number; age: number; dead: number }> | undefined;
  const outbox = () =>
    (reading ??= db
      .raw(
        `SELECT (SELECT count(*)::int FROM outbox WHERE published_at IS NULL AND dead_at IS NULL) AS pending,
           (SELECT coalesce(extract(epoch FROM now() - min(occurred_at)), 0)::float8 FROM outbox WHERE published_at IS NULL AND dead_at IS NULL) AS age,
           (SELECT count(*)::int FROM outbox WHERE dead_at IS NOT NULL) AS dead`,
      )
      .then((r: { rows: { pending: number; age: number; dead: number }[] }) => r.rows[0])
      .finally(() => setImmediate(() => (reading = undefined))));
  gaugeReadOnScrape(registry, "outbox_pending_messages", "Committed changes whose message is not published yet (dead-lettered ones aside)", [], async () => [{ labels: {}, value: (await outbox()).pending }]);
  gaugeReadOnScrape(registry, "outbox_oldest_pending_age_seconds", "Age of the oldest unpublished message: how far the bus lags behind commits", [], async () => [{ labels: {}, value: (await outbox()).age }]);
  gaugeReadOnScrape(registry, "outbox_dead_lettered_messages", "Outbox rows given up on (kept, no longer retried)", [], async () => [{ labels: {}, value: (await outbox()).dead }]);
  if (!relay) return;
  const { stats } = relay;
  counterReadOnScrape(registry, "outbox_published_total", "Messages this process's relay published", () => stats.published);
  counterReadOnScrape(registry, "outbox_refused_total", "Publications the bus refused (each retried later)", () => stats.refused);
  counterReadOnScrape(registry, "outbox_dead_lettered_total", "Messages this process's relay gave up on", () => stats.deadLettered);
  counterReadOnScrape(registry, "outbox_bus_unavailable_total", "Relay claims given back untouched while the bus was unavailable", () => stats.unavailable);
}

/** Each durable consumer's lag: messages of its subjects it has not acknowledged yet. */
export function consumerLagMetrics(registry: Registry, bus: Bus, consumers: { durable: string; subjects: string[] }[]): void {
  if (!consumers.length) return;
  gaugeReadOnScrape(registry, "consumer_pending_messages", "Messages a durable consumer has not acknowledged yet (delivered or not)", ["consumer"], async () =>
    Promise.all(consumers.map(async ({ durable, subjects }) => ({ labels: { consumer: durable }, value: await bus.backlog(durable, subjects) }))),
  );
}
