import { createHash, timingSafeEqual } from "node:crypto";
import { Code, ConnectError, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { isUuid } from "@analytics/db";

/**
 * Internal calls: the gateway authenticates the client, then calls services with the caller's
 * account and API key in headers. Services believe those headers only next to the internal
 * service credential, so nobody who reaches a service port directly can act as an account.
 */
export const INTERNAL_HEADERS = {
  credential: "x-internal-token",
  accountId: "x-account-id",
  apiKeyId: "x-api-key-id",
  requestId: "x-request-id",
} as const;

export interface Caller {
  accountId: string;
  apiKeyId: string;
  /** The gateway's request id (X-Request-Id), passed on so the service's log lines carry it. */
  requestId?: string;
}

export const callerKey = createContextKey<Caller | undefined>(undefined, { description: "authenticated caller" });

/** Headers for one call on behalf of `caller`. */
export function callerHeaders(internalToken: string, caller: Caller): Record<string, string> {
  return {
    [INTERNAL_HEADERS.credential]: internalToken,
    [INTERNAL_HEADERS.accountId]: caller.accountId,
    [INTERNAL_HEADERS.apiKeyId]: caller.apiKeyId,
    ...(caller.requestId ? { [INTERNAL_HEADERS.requestId]: caller.requestId } : {}),
  };
}

const digestOf = (secret: string) => createHash("sha256").update(secret).digest();

/** Constant-time comparison of two secrets of any length. */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digestOf(a), digestOf(b));
}

/** Server interceptor: refuses calls without the credential and puts the caller in the context. */
export function requireInternalCaller(internalToken: string): Interceptor {
  // The credential's digest is made once, not on every call.
  const expected = digestOf(internalToken);
  return (next) => async (req) => {
    const credential = req.header.get(INTERNAL_HEADERS.credential) ?? "";
    if (!credential || !timingSafeEqual(digestOf(credential), expected)) {
      throw new ConnectError("missing or wrong internal credential", Code.Unauthenticated);
    }
    const accountId = req.header.get(INTERNAL_HEADERS.accountId) ?? "";
    const apiKeyId = req.header.get(INTERNAL_HEADERS.apiKeyId) ?? "";
    if (!isUuid(accountId)) throw new ConnectError("missing caller account", Code.Unauthenticated);
    req.contextValues.set(callerKey, { accountId, apiKeyId });
    return next(req);
  };
}

/** The caller of a handler; every query is scoped by its account. */
export function callerOf(ctx: HandlerContext): Caller {
  const caller = ctx.values.get(callerKey);
  if (!caller) throw new ConnectError("no caller", Code.Unauthenticated);
  return caller;
}

export { imageCapabilities, imageUrlKey, withCapabilityImageUrl, type ImageCapabilities } from "./image-capabilities";
