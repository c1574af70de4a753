import { loadConfig, webhookSettings } from "@analytics/config";
import { eventsV1 } from "@analytics/contracts";
import { accountVersionText, startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { gapSweeper } from "./gap-sweep";
import { eventsRoutes } from "./handlers";
import { migrations } from "./migrations";
import { pruneQueuedVersions } from "./repository/queue";
import { importsConsumer, queueConsumer } from "./subscriptions";
import { webhookWorker, type WebhookWorkerSettings } from "./webhook-worker";

/**
 * The events service: each account's external event queue, fed by integration messages, and its
 * push to webhook endpoints (with the events pushed only: import.finished). `gapHoldMs`: how long a version waits for its predecessor
 * (EVENTS_GAP_HOLD_SECONDS).
 */
export function eventsService(webhooks: WebhookWorkerSettings, gapHoldMs = loadConfig().EVENTS_GAP_HOLD_SECONDS * 1000): ServiceDefinition {
  return {
    name: "events",
    migrations,
    dataVersion: accountVersionText,
    // A page's version is read with its rows (repository listEvents).
    dataVersionReadByHandler: [eventsV1.EventsService.method.listEvents],
    routes: (router, { db }) => eventsRoutes(db, webhooks)(router),
    consumers: [queueConsumer, importsConsumer],
    prune: (db) => pruneQueuedVersions(db),
    workers: [webhookWorker(webhooks), gapSweeper(gapHoldMs)],
  };
}

/** Starts the service; the webhook settings and the gap hold come from the environment (WEBHOOK_*, EVENTS_GAP_HOLD_SECONDS) unless given. */
export function startEventsService(deps: ServiceDeps, webhooks: WebhookWorkerSettings = webhookSettings(loadConfig()), gapHoldMs?: number) {
  return startService(eventsService(webhooks, gapHoldMs), deps);
}
