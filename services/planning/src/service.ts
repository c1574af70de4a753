import { startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { planningRoutes } from "./handlers";
import { migrations } from "./migrations";
import { replicaConsumer } from "./replica";

/**
 * The planning service: planned volumes answered from its own replica of SKUs, warehouses, stock,
 * purchase-order lines and account settings, fed only by bus messages (one durable consumer).
 */
export const planningService: ServiceDefinition = {
  name: "planning",
  migrations,
  routes: (router, { db }) => planningRoutes(db)(router),
  consumers: [replicaConsumer],
};

export function startPlanningService(deps: ServiceDeps) {
  return startService(planningService, deps);
}
