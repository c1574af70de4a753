import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { RETRY_AFTER_SECONDS } from "@analytics/errors";

/** Answers that carry credentials or account administration: no cache may keep them. */
function holdsSecrets(routeUrl: string | undefined): boolean {
  return routeUrl === "/v2/api/auth" || Boolean(routeUrl?.startsWith("/admin/"));
}

/**
 * Headers of every answer: `nosniff` (a JSON answer is never run as a script or page),
 * `Cache-Control: no-store` on tokens, admin answers and every answer to a call that carries
 * credentials (an account's data; a route that sets its own caching keeps it), and `Retry-After`
 * on every 503.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply) => setAnswerHeaders(request, reply));
}

/** installResponseHeaders' headers, for an answer no hook runs for (the router's refusals, app.ts). */
export function setAnswerHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header("X-Content-Type-Options", "nosniff");
  if (holdsSecrets(request.routeOptions.url) || (request.headers.authorization && !reply.hasHeader("Cache-Control"))) reply.header("Cache-Control", "no-store");
  if (reply.statusCode === 503 && !reply.hasHeader("Retry-After")) reply.header("Retry-After", String(RETRY_AFTER_SECONDS));
}

/**
 * The interactive reference's Content-Security-Policy: @fastify/swagger-ui's own (scripts and
 * styles by hash), without `upgrade-insecure-requests`, which would break `/docs` served over
 * plain http on localhost.
 */
export const docsContentSecurityPolicy = {
  staticCSP: true,
  transformStaticCSP: (header: string) => header.replace(/\s*upgrade-insecure-requests;?/, ""),
};

/** The client's X-Request-Id when it is sane (1 to 128 visible characters of a safe set), else a new UUID. */
export function requestIdOf(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && /^[A-Za-z0-9._:@/+=-]{1,128}$/.test(value) ? value : randomUUID();
}
