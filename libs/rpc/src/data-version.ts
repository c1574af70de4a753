import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, createContextValues, type ContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { callerKey } from "@analytics/auth";

/**
 * The caller's data version carried with an answer, for the gateway's weak ETag on a list
 * (CONTRACT "Conditional requests") without a GetAccountVersion call before it. A call asks with
 * this request header; the service answers it in this response header (a server stream: before
 * its first message), read either by its handler's own statement, in the data's snapshot
 * (answerDataVersion), or before its handler, so before the answer's query. The tag can then be
 * older than the data answered, never newer: a newer one would let a client's If-None-Match be a
 * 304 for a write it never saw.
 */
export const DATA_VERSION_HEADER = "x-data-version";

/** Reads the account's data version as the tag names it, e.g. `17322…` or planning's `17322…-2026-11-27`. */
export type ReadDataVersion = (accountId: string) => Promise<string>;

/**
 * The service side: a call asking for the version gets it, read before the handler (after
 * requireInternalCaller, which names the caller), unless its method is one of `readByHandler`,
 * whose handler answers it itself (answerDataVersion).
 */
export function dataVersionInterceptor(read: ReadDataVersion, readByHandler: ReadonlySet<DescMethod> = new Set()): Interceptor {
  return (next) => async (req) => {
    if (!req.header.has(DATA_VERSION_HEADER) || readByHandler.has(req.method)) return next(req);
    const caller = req.contextValues.get(callerKey);
    if (!caller) throw new ConnectError("no caller", Code.Unauthenticated);
    const version = await read(caller.accountId);
    const res = await next(req);
    res.header.set(DATA_VERSION_HEADER, version);
    return res;
  };
}

/**
 * A handler's answer to a call that asks for the version: the one its statement read in the same
 * snapshot as the data (libs/db withAccountVersion), no round trip of its own. A stream's handler
 * answers it before its first message (connect-node sends the headers with it).
 */
export function answerDataVersion(ctx: HandlerContext, version: string): void {
  if (ctx.requestHeader.has(DATA_VERSION_HEADER)) ctx.responseHeader.set(DATA_VERSION_HEADER, version);
}

/**
 * The caller side: the versions of one answer's owning services (by service type name), each
 * read by the service with the answer's first call to it. A later call to the same service waits
 * until that first one answered, so that no query of it can run before the version it is tagged
 * with was read (the calls of a handler in parallel, too).
 */
export class DataVersions {
  private readonly firsts = new Map<string, Promise<string | undefined>>();

  constructor(private readonly owners: ReadonlySet<string>) {}

  /**
   * Before a call to `service`: for the first call to an owner, the function that takes the
   * version it answered (undefined when it answered none or failed), and the call must ask;
   * otherwise undefined, once the first call answered.
   */
  async beforeCall(service: string): Promise<((version: string | undefined) => void) | undefined> {
    if (!this.owners.has(service)) return undefined;
    const first = this.firsts.get(service);
    if (first) {
      await first;
      return undefined;
    }
    let answered!: (version: string | undefined) => void;
    this.firsts.set(service, new Promise((resolve) => (answered = resolve)));
    return answered;
  }

  /** The version `service`'s first call answered; undefined: it answered none; "not called": no call reached it. */
  versionOf(service: string): Promise<string | undefined> | "not called" {
    return this.firsts.get(service) ?? "not called";
  }
}

const dataVersionsKey = createContextKey<DataVersions | undefined>(undefined, { description: "the answer's data versions" });

/** The call options' contextValues that make a call ask for its service's version (createServiceTransport). */
export function askingDataVersions(versions: DataVersions): ContextValues {
  return createContextValues().set(dataVersionsKey, versions);
}

export function dataVersionsOf(contextValues: ContextValues | undefined): DataVersions | undefined {
  return contextValues?.get(dataVersionsKey);
}
