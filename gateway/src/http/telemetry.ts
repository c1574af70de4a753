import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Registry } from "prom-client";
import { endSpan, httpRequestDurations, inSpan, SpanKind, startSpan, tracingEnabled, type Span } from "@analytics/telemetry";

const spans = new WeakMap<FastifyRequest, Span>();

/**
 * Every request is counted by method, route template and status with its duration, and, while
 * tracing is on, is a span continuing the client's traceparent (if it sent one); the routes run
 * inside it (inRequestSpan), so their Connect calls carry it on. The registry is answered on a
 * port of its own (app.ts), never on this public one.
 */
export function installTelemetry(app: FastifyInstance, registry: Registry): void {
  const durations = httpRequestDurations(registry);
  // Tracing is started (or not) before the gateway is built: while off, no hook runs for it.
  if (tracingEnabled()) {
    app.addHook("onRequest", (request, _reply, done) => {
      const span = startSpan(`${request.method} ${request.routeOptions.url ?? "unmatched"}`, SpanKind.SERVER, request.headers, {
        "http.request.method": request.method,
        "http.route": request.routeOptions.url ?? "",
      });
      if (span) spans.set(request, span);
      done();
    });
  }
  // Callback hooks: no promise per request on the hot path.
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    durations.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    endSpan(spans.get(request), reply.statusCode >= 500 ? `status ${reply.statusCode}` : undefined, { "http.response.status_code": reply.statusCode });
    done();
  });
}

/** The request's span while tracing is on (ended or not: its ids stay). */
export function requestSpan(request: FastifyRequest): Span | undefined {
  return spans.get(request);
}

/** Runs a route's handler as part of its request's span, so the calls it makes continue the trace. */
export function inRequestSpan<T>(request: FastifyRequest, work: () => T): T {
  return inSpan(spans.get(request), work);
}
