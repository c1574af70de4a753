import { startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { eventsRoutes } from "./handlers";
import { migrations } from "./migrations";
import { queueConsumer } from "./subscriptions";

/** The events service: each account's external event queue, fed by integration messages. */
export const eventsService: ServiceDefinition = {
  name: "events",
  migrations,
  routes: (router, { db }) => eventsRoutes(db)(router),
  consumers: [queueConsumer],
};

export function startEventsService(deps: ServiceDeps) {
  return startService(eventsService, deps);
}
