import type { RunningService, ServiceDeps } from "@analytics/rpc";
import { startEventsService } from "@analytics/events-service";

/** Every service the single-process launcher starts, in start order (producers before consumers is not needed: the outbox waits). */
export const localServices: { name: "events"; start: (deps: ServiceDeps) => Promise<RunningService> }[] = [
  { name: "events", start: startEventsService },
];
