import http from "node:http";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type TextMapGetter } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";

/**
 * What every deployable (the gateway, each service) tells an operator: Prometheus metrics on
 * /metrics and, when an OTLP endpoint is configured, OpenTelemetry traces that follow a request
 * from the gateway through a service and the bus to each consumer (W3C traceparent in Connect and
 * NATS headers, and in the outbox row between a commit and its publication).
 */

export { SpanKind, type Span } from "@opentelemetry/api";

/** Request latencies from 2.5 ms to 10 s: a page of 1000 products takes about 100 ms. */
const LATENCY_BUCKETS = [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A registry with the process's own metrics (CPU, memory, event-loop lag), every series labelled with its deployable. */
export function createMetricsRegistry(deployable: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ deployable });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** REST requests by method, route template (never the raw URL: ids would make a series each) and status. */
export function httpRequestDurations(registry: Registry) {
  return new Histogram({
    name: "http_request_duration_seconds",
    help: "REST requests by method, route and status code",
    labelNames: ["method", "route", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
}

/** Connect calls a service answered, by method and Connect code. */
export function rpcServerDurations(registry: Registry) {
  return new Histogram({
    name: "rpc_server_duration_seconds",
    help: "Connect calls answered, by RPC and code",
    labelNames: ["rpc", "code"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
}

/** Consumer batches handled, by consumer and outcome. */
export function consumerBatchDurations(registry: Registry) {
  return new Histogram({
    name: "consumer_batch_duration_seconds",
    help: "Bus message batches handled (inbox and effect in one transaction), by consumer and outcome",
    labelNames: ["consumer", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
}

/** One sample of a gauge read at scrape time. */
export interface Sample<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

/** How long a scrape waits for one reading (a query, a JetStream request). */
const READING_DEADLINE_MS = 2_000;

/**
 * A gauge whose samples are read when Prometheus scrapes (pool use, outbox backlog, consumer
 * lag). A reading that fails or takes over READING_DEADLINE_MS (its database or NATS is down)
 * leaves the gauge empty for that scrape instead of failing or stalling the whole answer.
 */
export function gaugeReadOnScrape<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Promise<Sample<L>[]> | Sample<L>[],
): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<Sample<L>[]>((resolve) => (timer = setTimeout(() => resolve([]), READING_DEADLINE_MS)));
      const samples = await Promise.race([Promise.resolve().then(read).catch(() => []), late]).finally(() => clearTimeout(timer));
      for (const { labels, value } of samples) this.set(labels, value);
    },
  });
}

/** A counter kept elsewhere (a component's own stats), read when Prometheus scrapes. */
export function counterReadOnScrape(registry: Registry, name: string, help: string, read: () => number): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** The shortest time between two renders of a registry's metrics. */
export const SCRAPE_INTERVAL_MS = 1_000;

/**
 * A registry's /metrics text, rendered at most once per `intervalMs` however many scrape: a
 * render in progress is shared by every scrape that arrives meanwhile, and its text answers them
 * until the interval has passed. Each render reads gauges from Postgres and NATS: 32 scrapers
 * cost one. A failed render is not kept.
 */
export function sharedRender(registry: Registry, intervalMs = SCRAPE_INTERVAL_MS, now: () => number = Date.now): () => Promise<string> {
  let last: { at: number; text: Promise<string> } | undefined;
  let rendering = false;
  return () => {
    if (!last || (!rendering && now() - last.at >= intervalMs)) {
      rendering = true;
      const text = registry.metrics().finally(() => (rendering = false));
      text.catch(() => last?.text === text && (last = undefined));
      last = { at: now(), text };
    }
    return last.text;
  };
}

const renders = new WeakMap<Registry, () => Promise<string>>();

/** The registry's one sharedRender: every port that answers its /metrics shares it. */
export function scrapeOf(registry: Registry): () => Promise<string> {
  let render = renders.get(registry);
  if (!render) renders.set(registry, (render = sharedRender(registry)));
  return render;
}

/**
 * /metrics alone on a port of its own (METRICS_PORT), plain HTTP/1.1: Prometheus scrapes it and
 * the NetworkPolicy opens it to the monitoring namespace only, while the public port serves none.
 */
export async function listenMetrics(registry: Registry, port: number, host: string): Promise<http.Server> {
  const scrape = scrapeOf(registry);
  const server = http.createServer((req, res) => {
    if (req.url !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    scrape().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/** Stops a server of listenMetrics (or any), resolved when its connections are gone. */
export async function closeServer(server: http.Server | undefined): Promise<void> {
  if (!server?.listening) return;
  server.closeIdleConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

let tracing = false;

/** Whether spans are recorded and exported (an OTLP endpoint is configured). */
export function tracingEnabled(): boolean {
  return tracing;
}

export interface TracingOptions {
  /** service.name of the spans: `analytics-<deployable>`. */
  serviceName: string;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT (base URL; traces go to <it>/v1/traces) or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL). Neither: tracing stays off and costs nothing.
   */
  endpoint?: string;
  tracesEndpoint?: string;
}

/**
 * Starts exporting spans over OTLP/HTTP (JSON) when an endpoint is set; otherwise does nothing.
 * Spans leave in batches (OTEL_BSP_* settings apply); stop() flushes what is left.
 */
export function startTracing(options: TracingOptions): { stop(): Promise<void> } {
  const url = options.tracesEndpoint ?? (options.endpoint ? `${options.endpoint.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (!url) return { stop: async () => undefined };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  // The W3C trace-context propagator and the AsyncLocalStorage context manager, process-wide.
  provider.register();
  tracing = true;
  return {
    stop: async () => {
      tracing = false;
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

type Carrier = Record<string, string | string[] | undefined> | Headers;

const carrierGetter: TextMapGetter<Carrier> = {
  keys: (carrier) => (carrier instanceof Headers ? [...carrier.keys()] : Object.keys(carrier)),
  get: (carrier, key) => (carrier instanceof Headers ? (carrier.get(key) ?? undefined) : carrier[key]),
};

const tracer = () => trace.getTracer("analytics-platform");

/**
 * A span continuing the trace whose context `carrier` holds (a `traceparent` header; none: a new
 * trace). Undefined while tracing is off, so hot paths pay nothing.
 */
export function startSpan(name: string, kind: SpanKind, carrier: Carrier | undefined, attributes?: Attributes): Span | undefined {
  if (!tracing) return undefined;
  const parent = carrier ? propagation.extract(ROOT_CONTEXT, carrier, carrierGetter) : ROOT_CONTEXT;
  return tracer().startSpan(name, { kind, attributes }, parent);
}

/** Runs `work` with `span` as the current span, so calls and outbox rows made in it carry its trace. */
export function inSpan<T>(span: Span | undefined, work: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), work) : work();
}

/** Ends a span, marked failed when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown, attributes?: Attributes): void {
  if (!span) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}

/** The current trace as headers (`traceparent`, `tracestate`), for a Connect call or a NATS message; {} while off. */
export function traceHeaders(span?: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (!tracing) return carrier;
  propagation.inject(span ? trace.setSpan(context.active(), span) : context.active(), carrier);
  return carrier;
}
