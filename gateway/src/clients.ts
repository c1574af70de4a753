import { callerHeaders, type Caller } from "@analytics/auth";
import { catalogueV1, eventsV1 } from "@analytics/contracts";
import { createServiceClient } from "@analytics/rpc";

/** Where each service answers; the gateway reaches services only through these generated clients. */
export interface ServiceUrls {
  catalogue: string;
  events: string;
}

export function createClients(urls: ServiceUrls) {
  return {
    catalogue: createServiceClient(catalogueV1.CatalogueService, urls.catalogue),
    events: createServiceClient(eventsV1.EventsService, urls.events),
  };
}

export type Clients = ReturnType<typeof createClients>;

/**
 * Call options that carry the caller to a service, with the internal credential, and the call's
 * deadline (SERVICE_CALL_TIMEOUT_MS): a service that does not answer in time is a 503, never a hang.
 */
export type CallAs = (caller: Caller) => { headers: Record<string, string>; timeoutMs: number };

export function callAs(internalToken: string, timeoutMs: number): CallAs {
  return (caller) => ({ headers: callerHeaders(internalToken, caller), timeoutMs });
}
