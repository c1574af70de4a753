import { startService, type ServiceDeps } from "@analytics/rpc";
import { eventsRoutes } from "./handlers";
import { migrations } from "./migrations";
import { queueSubscriptions } from "./subscriptions";

/** The events service: each account's external event queue, fed by integration messages. */
export function startEventsService(deps: ServiceDeps) {
  return startService(
    {
      name: "events",
      migrations,
      routes: (router, { db }) => eventsRoutes(db)(router),
      subscriptions: ({ db }) => queueSubscriptions(db),
    },
    deps,
  );
}
