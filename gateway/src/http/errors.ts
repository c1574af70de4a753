import type { FastifyError, FastifyInstance } from "fastify";
import { ConnectError } from "@connectrpc/connect";
import { generalResponse, httpErrorOf, infrastructureKind, isPostgresDataException, type ErrorCode, type FieldViolation, type GeneralResponse } from "@analytics/errors";

/** An HTTP answer decided at the edge (validation, auth, limits); `code` when narrower than its status's. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: FieldViolation[],
    readonly headers: Record<string, string> = {},
    readonly code?: ErrorCode,
  ) {
    super(message);
  }
}

const fastifyCodes: Record<string, [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, "request body is too large"],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, "Content-Type must be application/json"],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, "Content-Length does not match the body"],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, "request body is empty"],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, "request body is not valid JSON"],
};

/** The methods of every registered path, to answer a wrong method with 405 and `Allow`. */
function knownPaths(app: FastifyInstance): (path: string) => string[] {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook("onRoute", (route) => {
    if (route.url === "*" || route.url === "/*") return;
    const source = route.url
      .split("/")
      .map((s) => (s.startsWith(":") ? "[^/]+" : s === "*" ? ".*" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/");
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    routes.push({ pattern: new RegExp(`^${source}$`), methods });
  });
  return (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
}

/** Every non-2xx answer is a GeneralResponse; nothing internal ever reaches the client. */
export function installErrorHandling(app: FastifyInstance): void {
  const allowed = knownPaths(app);
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    let body: GeneralResponse;
    if (error instanceof HttpError) {
      body = generalResponse(error.statusCode, error.message, error.details, error.code);
      reply.headers(error.headers);
    } else if (error instanceof ConnectError) {
      // A write that got no answer in time may still be committed: 504, outcome unknown; a read's is a 503.
      body = httpErrorOf(error, request.method !== "GET" && request.method !== "HEAD");
      if (body.statusCode >= 500) request.log.error({ err: error }, "service call failed");
    } else if (infrastructureKind(error) || isPostgresDataException(error)) {
      // The gateway's own database is down, frozen or busy (503), or refused a value (400): never a 500.
      body = httpErrorOf(error);
      if (body.statusCode >= 500) request.log.warn({ err: error }, "database unavailable");
    } else {
      const fe = error as FastifyError;
      const known = fe.code ? fastifyCodes[fe.code] : undefined;
      if (known) body = generalResponse(known[0], known[1]);
      else if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
        // Fastify's own 4xx (e.g. a JSON syntax error): its message names no internals.
        body = generalResponse(fe.statusCode, fe.statusCode === 400 ? "request body is not valid JSON" : fe.message);
      } else {
        request.log.error({ err: error }, "unhandled error");
        body = generalResponse(500, "internal error");
      }
    }
    return reply.status(body.statusCode).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0];
    // A known path with another method is a 405 that says which methods it has.
    const methods = allowed(path);
    if (methods.length) {
      return reply.status(405).header("Allow", methods.join(", ")).send(generalResponse(405, `${request.method} is not allowed on ${path}; allowed: ${methods.join(", ")}`));
    }
    return reply.status(404).send(generalResponse(404, `no route ${request.method} ${path}`));
  });
}
