import type { Client } from "@connectrpc/connect";
import { callerHeaders, type Caller } from "@analytics/auth";
import { serviceNames, serviceRegistry, type ServiceName } from "@analytics/contracts";
import { createServiceClient, type ReplicaOptions } from "@analytics/rpc";
import { traceHeaders } from "@analytics/telemetry";

/** Where each service answers; the gateway reaches services only through these generated clients. */
export type ServiceUrls = Record<ServiceName, string>;

export type Clients = { [N in ServiceName]: Client<(typeof serviceRegistry)[N]["descriptor"]> };

/** One client per registered service; each resolves its service's name again every `options.refreshMs`. */
export function createClients(urls: ServiceUrls, options: ReplicaOptions = {}): Clients {
  return Object.fromEntries(
    serviceNames.map((name) => [name, createServiceClient(serviceRegistry[name].descriptor, urls[name], options)]),
  ) as unknown as Clients;
}

/**
 * Call options that carry the caller to a service, with the internal credential, the request's
 * trace (while tracing is on), and the call's deadline (SERVICE_CALL_TIMEOUT_MS): a service that
 * does not answer in time is a 503, never a hang.
 */
export type CallAs = (caller: Caller) => { headers: Record<string, string>; timeoutMs: number };

export function callAs(internalToken: string, timeoutMs: number): CallAs {
  return (caller) => ({ headers: { ...callerHeaders(internalToken, caller), ...traceHeaders() }, timeoutMs });
}

/** A service that answers GetAccountVersion (libs/rpc accountVersionHandler). */
interface Versioned {
  getAccountVersion(request: object, options: ReturnType<CallAs>): Promise<{ version: bigint }>;
}

/**
 * The dataVersion (http/route.ts) of answers read from `services`: each one's version of the
 * caller's data, read together, e.g. `catalogue-<version>.pricing-<version>`; a write of the
 * account in any of them gives the answer a new weak ETag.
 */
export function dataVersionOf(as: CallAs, services: Record<string, Versioned>): (caller: Caller) => Promise<string> {
  const named = Object.entries(services);
  return async (caller) => (await Promise.all(named.map(async ([name, service]) => `${name}-${(await service.getAccountVersion({}, as(caller))).version}`))).join(".");
}
