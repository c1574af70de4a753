import { randomUUID } from "node:crypto";
import { Counter, Histogram } from "prom-client";
import { imageCapabilities, withCapabilityImageUrl, type ImageCapabilities } from "@analytics/auth";
import type { Db } from "@analytics/db";
import type { Worker, WorkerContext } from "@analytics/rpc";
import { gaugeReadOnScrape } from "@analytics/telemetry";
import { closeIdleConnections, postSafely, type Resolve } from "./outbound";
import * as repo from "./repository/webhooks";
import type { AttemptOutcome, ClaimedDelivery } from "./repository/webhooks";
import { WEBHOOK_ONLY_TYPES } from "./resources";
import { DISABLE_AFTER_FAILING_MS, retryDelayMs, signature } from "./webhooks";

export interface WebhookWorkerSettings {
  allowPrivate: boolean;
  concurrencyPerEndpoint: number;
  /** Attempts in flight in this process over all endpoints (MAX_IN_FLIGHT by default; tests take fewer). */
  maxInFlight?: number;
  pollMs: number;
  /** How the gateway signs image capability URLs (IMAGE_URL_KEY, else JWT_SECRET; PUBLIC_BASE_URL): `data` carries the same URLs as GET /events. */
  imageUrls: { signing: string | { key: string }; publicBaseUrl?: string };
  /** Name resolution for the outbound calls (tests inject one). */
  resolve?: Resolve;
}

/** Success is a 2xx within this (CONTRACT.md). */
export const ATTEMPT_TIMEOUT_MS = 15_000;
const CONNECT_TIMEOUT_MS = 5_000;
const MAX_RESPONSE_BYTES = 64 * 1024;
/**
 * How long a claimed delivery is this worker's: longer than any attempt, so a live worker always
 * records its outcome first; a killed worker's deliveries are sent again (same webhook-id) after it.
 */
export const LEASE_MS = ATTEMPT_TIMEOUT_MS + 10_000;
/** Attempts in flight in one process, over all endpoints, shared between them (repository/webhooks.ts, claimDue). */
export const MAX_IN_FLIGHT = 256;

/**
 * The body of a delivery: `{id, type, timestamp, data}`, data the entry as GET /events answers it
 * (gateway/src/routes/events.ts): the payload is the JSON text Postgres keeps, never parsed
 * (decimals keep their digits), with a product's image the account's capability URL. An event
 * pushed to webhooks only (import.finished) is no entry: its data is its payload itself.
 */
export function deliveryBody(d: ClaimedDelivery, images: ImageCapabilities): string {
  const iso = (t: Date | null) => (t ? JSON.stringify(t.toISOString()) : "null");
  const data = WEBHOOK_ONLY_TYPES.has(d.event_type)
    ? d.payload
    : `{"id":${JSON.stringify(d.event_id)},"accountId":${JSON.stringify(d.account_id)},"eventType":${JSON.stringify(d.event_type)},` +
      `"payload":${withCapabilityImageUrl(images, d.account_id, d.payload)},"createdAt":${iso(d.created_at)},"completedAt":${iso(d.completed_at)},"failedAt":${iso(d.failed_at)}}`;
  return `{"id":${JSON.stringify(d.event_id)},"type":${JSON.stringify(d.event_type)},"timestamp":${iso(d.created_at)},"data":${data}}`;
}

/** What an answer (or none) means for the delivery and its endpoint. */
export function outcomeOf(statusCode: number | undefined, attempt: number): AttemptOutcome {
  if (statusCode !== undefined && statusCode >= 200 && statusCode < 300) return { kind: "delivered" };
  if (statusCode === 410) return { kind: "gone" };
  return { kind: "failed", retryInMs: retryDelayMs(attempt), disableIfFailingSinceMs: DISABLE_AFTER_FAILING_MS };
}

/**
 * The delivery worker of the events service, a pipeline: each attempt that ends is recorded and
 * its slot refilled by the next round, one statement that records the outcomes of the attempts
 * ended since the last and claims due deliveries for the free slots (repository/webhooks.ts, recordAndClaim:
 * per endpoint and product in queue order, at most `concurrencyPerEndpoint` per endpoint in flight
 * over all replicas, the process's slots shared so that endpoints that never answer cannot take
 * them all); each is sent signed, on a kept-alive connection to the address its attempt
 * resolved and checked, or a new one (outbound.ts). The deliveries are rows written with their
 * queue entries, so a killed worker or a NATS outage loses none.
 */
export function webhookWorker(settings: WebhookWorkerSettings) {
  return ({ db, logger, metrics }: WorkerContext): Worker => {
    const log = logger.child({ worker: "webhooks" });
    const attempts = new Counter({ name: "webhook_attempts_total", help: "Webhook delivery attempts by outcome (delivered, failed, gone, gave_up)", labelNames: ["outcome"], registers: [metrics] });
    const latency = new Histogram({
      name: "webhook_attempt_duration_seconds",
      help: "Webhook delivery attempts: connect to the end of the answer, by outcome",
      labelNames: ["outcome"],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [metrics],
    });
    backlogMetrics(metrics, db);
    const images = imageCapabilities(settings.imageUrls.signing, settings.imageUrls.publicBaseUrl);

    const maxInFlight = settings.maxInFlight ?? MAX_IN_FLIGHT;
    const inFlight = new Set<Promise<void>>();
    /** This process's attempts in flight per endpoint: the claim shares the free slots by them. */
    const perEndpoint = new Map<string, number>();
    /** Attempts done whose outcome is not recorded yet: the next round records them all in one statement. */
    const finished: repo.FinishedAttempt[] = [];
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let round: Promise<void> | undefined;
    let again = false;
    /** The attempts the last round sent that are still under way, how long that round took, and the wait for them. */
    let lastSent = new Set<Promise<void>>();
    let lastRoundMs = 0;
    let gathering: NodeJS.Timeout | undefined;

    /** One attempt: sent signed, its outcome counted and kept for the next round to record. */
    const send = async (d: ClaimedDelivery, token: string) => {
      const startedAt = new Date();
      const body = deliveryBody(d, images);
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        "content-type": "application/json",
        "user-agent": "analytics-webhooks/1",
        "webhook-id": d.event_id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature(d.secrets, d.event_id, timestamp, body),
      };
      const result = await postSafely(d.url, headers, body, {
        allowPrivate: settings.allowPrivate,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        timeoutMs: ATTEMPT_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        resolve: settings.resolve,
      });
      const outcome = outcomeOf(result.statusCode, d.attempts + 1);
      const label = outcome.kind === "failed" && outcome.retryInMs === undefined ? "gave_up" : outcome.kind;
      attempts.inc({ outcome: label });
      latency.observe({ outcome: label }, result.durationMs / 1000);
      if (outcome.kind !== "delivered") log.debug({ endpoint: d.endpoint_id, event: d.event_id, status: result.statusCode, error: result.error }, "webhook attempt failed");
      finished.push({ id: d.id, token, startedAt, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error, outcome });
    };

    /**
     * A round: one statement records every attempt finished since the last round, then claims
     * what is due and free to send (repository/webhooks.ts, recordAndClaim), so the claim already counts the
     * slots those attempts freed and sees the products they let go on. An attempt that ends starts
     * a round (see wake), or the one after the round under way: its slot is refilled within about
     * a round, and a busy endpoint costs one statement per round, not per attempt.
     */
    const work = async () => {
      const started = performance.now();
      const batch = finished.splice(0);
      const free = stopped ? 0 : maxInFlight - inFlight.size;
      const token = randomUUID();
      const due = await repo
        .recordAndClaim(db, batch, { limit: free, perEndpoint: settings.concurrencyPerEndpoint, leaseMs: LEASE_MS, token, inFlight: perEndpoint })
        .catch((err) => {
          log.warn({ err, deliveries: batch.length }, "recording and claiming webhook deliveries failed (what was sent is sent again when its lease runs out)");
          return [];
        });
      const sent = new Set<Promise<void>>();
      for (const d of due) {
        perEndpoint.set(d.endpoint_id, (perEndpoint.get(d.endpoint_id) ?? 0) + 1);
        const attempt: Promise<void> = send(d, token)
          .catch((err) => log.warn({ err, delivery: d.id }, "a webhook attempt failed unexpectedly (its lease runs out, it is sent again)"))
          .finally(() => {
            const left = (perEndpoint.get(d.endpoint_id) ?? 1) - 1;
            if (left > 0) perEndpoint.set(d.endpoint_id, left);
            else perEndpoint.delete(d.endpoint_id);
            inFlight.delete(attempt);
            sent.delete(attempt);
            wake();
          });
        inFlight.add(attempt);
        sent.add(attempt);
      }
      lastSent = sent;
      lastRoundMs = performance.now() - started;
      if (free > 0 && due.length === free) again = true;
    };

    const start = () => {
      clearTimeout(timer);
      clearTimeout(gathering);
      gathering = undefined;
      if (stopped) return;
      round = work()
        .catch((err) => log.warn({ err }, "claiming webhook deliveries failed"))
        .finally(() => {
          round = undefined;
          if (again) {
            again = false;
            return wake();
          }
          if (!stopped) timer = setTimeout(wake, settings.pollMs);
        });
    };

    /**
     * Something ended (an attempt, a round) or the poll is due. While the attempts the last round
     * sent are under way, the next round waits for them, no longer than that round took: a quick
     * endpoint's attempts end about together, so they are recorded and their slots refilled in one
     * round, not one by one (the first to end would take a round for its slot alone, and the
     * others the next).
     */
    const wake = () => {
      if (stopped) return;
      if (round) {
        again = true;
        return;
      }
      if (lastSent.size) {
        gathering ??= setTimeout(start, lastRoundMs);
        return;
      }
      start();
    };
    wake();

    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        clearTimeout(gathering);
        await round;
        await Promise.all(inFlight);
        // What finished last is recorded too, not sent again after its lease.
        await repo.recordAttempts(db, finished.splice(0)).catch((err) => log.warn({ err }, "recording the last webhook attempts failed (they are sent again when their leases run out)"));
        closeIdleConnections();
      },
    };
  };
}

/** Per endpoint: deliveries pending and the age of the oldest, read on scrape (one statement for both). */
function backlogMetrics(metrics: WorkerContext["metrics"], db: Db): void {
  let reading: ReturnType<typeof repo.backlogByEndpoint> | undefined;
  const read = () => (reading ??= repo.backlogByEndpoint(db).finally(() => setImmediate(() => (reading = undefined))));
  gaugeReadOnScrape(metrics, "webhook_pending_deliveries", "Webhook deliveries not yet delivered nor given up, per endpoint", ["endpoint"], async () =>
    (await read()).map((r) => ({ labels: { endpoint: r.endpoint_id }, value: r.pending })),
  );
  gaugeReadOnScrape(metrics, "webhook_oldest_pending_age_seconds", "Age of each endpoint's oldest pending webhook delivery", ["endpoint"], async () =>
    (await read()).map((r) => ({ labels: { endpoint: r.endpoint_id }, value: r.oldest_seconds })),
  );
}
