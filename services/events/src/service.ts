import { loadConfig, webhookSettings } from "@analytics/config";
import { accountVersionText, startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { eventsRoutes } from "./handlers";
import { migrations } from "./migrations";
import { pruneQueuedVersions } from "./repository";
import { queueConsumer } from "./subscriptions";
import { webhookWorker, type WebhookWorkerSettings } from "./webhook-worker";

/** The events service: each account's external event queue, fed by integration messages, and its push to webhook endpoints. */
export function eventsService(webhooks: WebhookWorkerSettings): ServiceDefinition {
  return {
    name: "events",
    migrations,
    dataVersion: accountVersionText,
    routes: (router, { db }) => eventsRoutes(db, webhooks)(router),
    consumers: [queueConsumer],
    prune: (db) => pruneQueuedVersions(db),
    workers: [webhookWorker(webhooks)],
  };
}

/** Starts the service; the webhook settings come from the environment (WEBHOOK_*) unless given. */
export function startEventsService(deps: ServiceDeps, webhooks: WebhookWorkerSettings = webhookSettings(loadConfig())) {
  return startService(eventsService(webhooks), deps);
}
