import type { RunningService, ServiceDeps } from "@analytics/rpc";
import { startCatalogueService } from "@analytics/catalogue-service";
import { startEventsService } from "@analytics/events-service";
import { startOrdersService } from "@analytics/orders-service";

/** Every service the single-process launcher starts (order does not matter: outboxes wait). */
export const localServices = [
  { name: "catalogue", start: startCatalogueService },
  { name: "orders", start: startOrdersService },
  { name: "events", start: startEventsService },
] as const satisfies readonly { name: string; start: (deps: ServiceDeps) => Promise<RunningService> }[];
