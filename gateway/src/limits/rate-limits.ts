import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "@analytics/auth";
import type { RateDecision, RateLimiter } from "./rate-limiter";
import { HttpError } from "../http/errors";

declare module "fastify" {
  interface FastifyContextConfig {
    /** An account's route (auth bearer): its answers carry the account's rate limit, also those refused before its handler. */
    rateLimited?: boolean;
  }
}

/** What answers that no route decided cost: as a read (CONTRACT "Rate limits"). */
export const REFUSED_BEFORE_ROUTE_COST = 1;

/** Requests whose cost was decided (spent by their route, or refused at once): none is charged twice. */
const decided = new WeakSet<FastifyRequest>();

/** RateLimit-Policy and RateLimit (IETF httpapi ratelimit-headers draft): the bucket's size, refilled in `w` seconds; tokens left and seconds until full. */
export function setRateLimitHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header("RateLimit-Policy", `"account";q=${d.burst};w=${Math.max(1, Math.ceil(d.burst / d.perSecond))}`);
  reply.header("RateLimit", `"account";r=${d.remaining};t=${d.allowed ? Math.ceil((d.burst - d.remaining) / d.perSecond) : d.retryAfter}`);
}

function tooManyRequests(d: RateDecision): HttpError {
  return new HttpError(429, `the account's rate limit is spent; retry after ${d.retryAfter} s`, undefined, { "Retry-After": String(d.retryAfter) });
}

/** Spends `cost` of the account's bucket for the request, saying so in its answer's headers; over the limit, the 429. */
export async function spendOrRefuse(limiter: RateLimiter, request: FastifyRequest, reply: FastifyReply, accountId: string, cost: number): Promise<void> {
  decided.add(request);
  const d = await limiter.spend(accountId, cost);
  if (!d) return;
  setRateLimitHeaders(reply, d);
  if (!d.allowed) throw tooManyRequests(d);
}

/**
 * The rate limit of answers that no route handler decided, for requests of an account: an
 * account route's (route.ts marks them `config.rateLimited`) and an unknown path's under /v2/api
 * (404, 405) with a bearer token.
 *
 * - Before the body is read: an account whose bucket this gateway knows cannot pay even a read
 *   (RateLimiter.refusal, no statement) is a 429 at once, so a flood of oversized, mistyped or
 *   malformed bodies from a limited account is neither read nor parsed.
 * - An answer refused before the route ran (404, 405, 413, 415, a body that is not JSON, a
 *   hostile one) costs a read and carries the headers; when the bucket cannot pay it the answer
 *   stays what it was (it did no work) with `r=0`, and the account's next requests are the 429
 *   above.
 * - A 401 has no account, so no bucket to spend or report: no headers.
 *
 * The token is checked once per request: `authenticate` is the routes' own, which remembers its
 * answer per request.
 */
export function installRateLimits(
  app: FastifyInstance,
  authenticate: (request: FastifyRequest) => Promise<Caller>,
  limiter: RateLimiter,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const ofAccount = (request: FastifyRequest) => {
    if (request.routeOptions.config?.rateLimited) return true;
    return request.routeOptions.url === undefined && request.url.startsWith("/v2/api/") && request.headers.authorization !== undefined;
  };
  const accountOf = (request: FastifyRequest) =>
    authenticate(request).then(
      (caller) => caller.accountId,
      () => undefined,
    );
  app.addHook("onRequest", async (request, reply) => {
    if (!ofAccount(request)) return;
    const accountId = await accountOf(request);
    const refused = accountId === undefined ? undefined : limiter.refusal(accountId, REFUSED_BEFORE_ROUTE_COST);
    if (!refused) return;
    decided.add(request);
    setRateLimitHeaders(reply, refused);
    throw tooManyRequests(refused);
  });
  const charge = async (request: FastifyRequest, reply: FastifyReply) => {
    if (decided.has(request) || !ofAccount(request)) return;
    decided.add(request);
    const accountId = await accountOf(request);
    if (accountId === undefined) return;
    const d = await limiter.spend(accountId, REFUSED_BEFORE_ROUTE_COST);
    if (d) setRateLimitHeaders(reply, d);
  };
  app.addHook("onSend", async (request, reply, payload) => {
    await charge(request, reply);
    return payload;
  });
  // The router's own refusals (a malformed URL, a path parameter over its limit) run no hook: app.ts charges them with this.
  return charge;
}
