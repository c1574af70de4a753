import type { DescService } from "@bufbuild/protobuf";
import { CatalogueService } from "./gen/catalogue/v1/catalogue_pb";
import { EventsService } from "./gen/events/v1/events_pb";
import { PricingService } from "./gen/pricing/v1/pricing_pb";
import { PlanningService } from "./gen/planning/v1/planning_pb";
import { InventoryService } from "./gen/inventory/v1/inventory_pb";
import { OrdersService } from "./gen/orders/v1/orders_pb";

/**
 * The one registry of services: name (= Postgres schema = durable consumer = Helm values key),
 * default port, and Connect descriptor. The config (`<NAME>_URL`), the gateway's clients and
 * /readyz, and the chart's consistency test read it. Adding a service: its folder, an entry
 * here, its start function in deploy/local/services.ts, and its block in the chart's values.
 */
export const serviceRegistry = {
  catalogue: { port: 50051, descriptor: CatalogueService },
  pricing: { port: 50052, descriptor: PricingService },
  inventory: { port: 50053, descriptor: InventoryService },
  orders: { port: 50054, descriptor: OrdersService },
  events: { port: 50055, descriptor: EventsService },
  planning: { port: 50056, descriptor: PlanningService },
} as const satisfies Record<string, { port: number; descriptor: DescService }>;

export type ServiceName = keyof typeof serviceRegistry;
export const serviceNames = Object.keys(serviceRegistry) as ServiceName[];

/** The environment variable that tells a process where a service answers: `CATALOGUE_URL`. */
export const serviceUrlVariable = <N extends ServiceName>(name: N) => `${name.toUpperCase()}_URL` as `${Uppercase<N>}_URL`;
