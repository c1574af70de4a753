import { loadConfig, webhookSettings } from "@analytics/config";
import type { RunningService, ServiceDeps } from "@analytics/rpc";
import { startCatalogueService } from "@analytics/catalogue-service";
import { startEventsService } from "@analytics/events-service";
import { startPricingService } from "@analytics/pricing-service";
import { startPlanningService } from "@analytics/planning-service";
import { startInventoryService } from "@analytics/inventory-service";
import { startOrdersService } from "@analytics/orders-service";

/** The launcher's secrets a service needs besides its deps. */
export interface LauncherSecrets {
  JWT_SECRET: string;
}

/** Every service the single-process launcher starts (order does not matter: outboxes wait). */
export const localServices = [
  { name: "catalogue", start: startCatalogueService },
  { name: "pricing", start: startPricingService },
  { name: "orders", start: startOrdersService },
  // The webhook worker signs image URLs as the gateway does: with the secret the launcher has (maybe generated).
  { name: "events", start: (deps: ServiceDeps, secrets: LauncherSecrets) => startEventsService(deps, webhookSettings(loadConfig(), secrets.JWT_SECRET)) },
  { name: "planning", start: startPlanningService },
  { name: "inventory", start: startInventoryService },
] as const satisfies readonly { name: string; start: (deps: ServiceDeps, secrets: LauncherSecrets) => Promise<RunningService> }[];
