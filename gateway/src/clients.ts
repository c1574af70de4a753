import type { Client } from "@connectrpc/connect";
import { callerHeaders, type Caller } from "@analytics/auth";
import { serviceNames, serviceRegistry, type ServiceName } from "@analytics/contracts";
import type { ContextValues } from "@connectrpc/connect";
import { askingDataVersions, createServiceClient, DataVersions, type ReplicaOptions } from "@analytics/rpc";
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

/** The caller of a list's calls that collect the answer's data versions (pipeline/route.ts). */
export type AnsweringCaller = Caller & { dataVersions?: DataVersions };

/**
 * Call options that carry the caller to a service, with the internal credential, the request's
 * trace (while tracing is on), and the call's deadline (SERVICE_CALL_TIMEOUT_MS): a service that
 * does not answer in time is a 503, never a hang. A list's calls also ask the services owning its
 * data for their versions (libs/rpc data-version.ts).
 */
export type CallAs = (caller: AnsweringCaller) => { headers: Record<string, string>; timeoutMs: number; contextValues?: ContextValues };

export function callAs(internalToken: string, timeoutMs: number): CallAs {
  return (caller) => ({
    headers: { ...callerHeaders(internalToken, caller), ...traceHeaders() },
    timeoutMs,
    ...(caller.dataVersions ? { contextValues: askingDataVersions(caller.dataVersions) } : {}),
  });
}

/** A service that answers GetAccountVersion (libs/rpc accountVersionHandler; planning adds the account-local date). */
interface Versioned {
  getAccountVersion(request: object, options: ReturnType<CallAs>): Promise<{ version: bigint; today?: string }>;
}

/** A version as the service answers it with a call (its ServiceDefinition's dataVersion). */
const versionText = ({ version, today }: { version: bigint; today?: string }) => (today ? `${version}-${today}` : String(version));

/**
 * The data version of a list (pipeline/route.ts): each owning service's version of the caller's data,
 * e.g. `catalogue-<version>.pricing-<version>`; a write of the account in any of them gives the
 * answer a new weak ETag. Read before the answer by GetAccountVersion calls when the request
 * has an If-None-Match (a 304 then runs no query), otherwise by each service with the answer's
 * first call to it.
 */
export interface DataVersionOf {
  /** One GetAccountVersion call per owning service, together. */
  read(caller: Caller): Promise<string>;
  /** What the answer's calls fill in: the owners' versions, read by the services. */
  collect(): DataVersions;
  /**
   * The version from what the calls collected. An owner no call reached is read now (none of its
   * data is in the answer, e.g. pricing for an empty product page); undefined when an owner
   * answered none (an older service) or its call failed.
   */
  collected(versions: DataVersions, caller: Caller): Promise<string | undefined>;
}

export function dataVersionOf<N extends ServiceName>(as: CallAs, services: Partial<Record<N, Versioned>>): DataVersionOf {
  const owners = (Object.entries(services) as [N, Versioned][]).map(([name, service]) => ({ name, service, typeName: serviceRegistry[name].descriptor.typeName }));
  const typeNames = new Set(owners.map((o) => o.typeName));
  return {
    read: async (caller) => (await Promise.all(owners.map(async ({ name, service }) => `${name}-${versionText(await service.getAccountVersion({}, as(caller)))}`))).join("."),
    collect: () => new DataVersions(typeNames),
    collected: async (versions, caller) => {
      const each = await Promise.all(
        owners.map(async ({ name, service, typeName }) => {
          const answered = versions.versionOf(typeName);
          const version = answered === "not called" ? versionText(await service.getAccountVersion({}, as(caller))) : await answered;
          return version === undefined ? undefined : `${name}-${version}`;
        }),
      );
      return each.includes(undefined) ? undefined : each.join(".");
    },
  };
}
