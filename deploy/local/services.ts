import type { RunningService, ServiceDeps } from "@analytics/rpc";
import { startCatalogueService } from "@analytics/catalogue-service";
import { startEventsService } from "@analytics/events-service";
import { startPricingService } from "@analytics/pricing-service";
import { startPlanningService } from "@analytics/planning-service";
import { startInventoryService } from "@analytics/inventory-service";
import { startOrdersService } from "@analytics/orders-service";

/** Every service the single-process launcher starts (order does not matter: outboxes wait). */
export const localServices = [
  { name: "catalogue", start: startCatalogueService },
  { name: "pricing", start: startPricingService },
  { name: "orders", start: startOrdersService },
  { name: "events", start: startEventsService },
  { name: "planning", start: startPlanningService },
  { name: "inventory", start: startInventoryService },
] as const satisfies readonly { name: string; start: (deps: ServiceDeps) => Promise<RunningService> }[];
