import { AsyncLocalStorage } from "node:async_hooks";
import { z } from "zod";
import pino, { type Logger } from "pino";
import { isSpanContextValid, trace, type Span } from "@opentelemetry/api";
import { serviceNames, serviceRegistry, serviceUrlVariable, type ServiceName } from "@analytics/contracts";

/**
 * Every environment variable the platform reads, in one schema. Each process parses it once at
 * start-up (loadConfig) and fails fast with every problem listed, before it opens a socket.
 */
const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z.string().url().optional();

export const configSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Postgres; absent: `npm start` runs an embedded Postgres under DATA_DIR. */
  DATABASE_URL: optionalUrl,
  /**
   * NATS with JetStream, one URL or a comma-separated list of a cluster's servers (the client
   * learns the others from whichever answers); absent: the in-process bus of the single-process default.
   */
  NATS_URL: z
    .string()
    .refine((v) => v.split(",").every((u) => z.string().url().safeParse(u.trim()).success), "must be a URL or comma-separated URLs")
    .optional(),
  /** JetStream stream and subject prefix; tests and shared NATS servers set their own. */
  NATS_STREAM: z.string().regex(/^[A-Za-z0-9_-]+$/).default("ANALYTICS"),
  NATS_SUBJECT_PREFIX: z.string().regex(/^([a-z0-9_-]+\.)*$/).default(""),
  /** How long the stream keeps messages: the horizon of a replica rebuild from the stream. */
  NATS_STREAM_MAX_AGE_SECONDS: z.coerce.number().int().min(3600).default(7 * 24 * 3600),
  /** Copies of the stream across a JetStream cluster (3 in the chart); an existing stream is brought to it at start. */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** Most bytes the stream keeps; the oldest messages go first beyond it (-1: no limit but NATS_STREAM_MAX_AGE_SECONDS). */
  NATS_STREAM_MAX_BYTES: z.coerce.number().int().min(-1).default(-1),
  /**
   * Partitions of every subject: an account's messages travel on one, read by a durable consumer
   * of its own, so one account's backlog holds back only the accounts of its partition.
   */
  NATS_PARTITIONS: z.coerce.number().int().min(1).max(64).default(8),
  DATA_DIR: z.string().default("./.data"),
  /** Gateway HTTP port. */
  PORT: port.default(8080),
  /** Where to listen; unset: 127.0.0.1 for `npm start` (a developer's machine), 0.0.0.0 for each deployable alone (the image). */
  HOST: z.string().optional(),
  /** Port of the embedded Postgres of `npm start` (used only without DATABASE_URL). */
  EMBEDDED_PG_PORT: port.default(54329),
  /** As root, where the embedded Postgres's binaries and data go when the checkout or DATA_DIR is private to root. */
  EMBEDDED_PG_SHARED_DIR: z.string().startsWith("/", "an absolute path").default("/var/lib/analytics-platform"),
  /** Believe X-Forwarded-For from this many proxies in front of the gateway (0: none). */
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  /** Browser origins allowed to call the API (CORS), comma-separated; unset: CORS off. */
  CORS_ORIGINS: z
    .string()
    .optional()
    .transform((v) => (v ?? "").split(",").map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/\s]+$/, "each origin is scheme://host[:port], without a path"))),
  /** Port of a service started alone (services/<name>/main); each has its own default. */
  SERVICE_PORT: port.optional(),
  /** A service's plain HTTP/1.1 port for /healthz, /readyz and /metrics (Kubernetes probes). */
  HEALTH_PORT: port.optional(),
  /**
   * A plain HTTP/1.1 port for /metrics alone (the gateway and each service); when set, no other
   * port answers /metrics. Unset: the gateway's on a free port of 127.0.0.1 (logged at start),
   * never its public port; a service's on its health and Connect ports.
   */
  METRICS_PORT: port.optional(),
  /**
   * apply: the process runs its pending migrations at start-up (under a lock per schema). verify:
   * it runs none and waits, its ports closed, until its schema has every migration it knows (a
   * migration Job applies them: `node <main.js> migrate-only`).
   */
  MIGRATIONS: z.enum(["apply", "verify"]).default("apply"),
  /** Enables the admin API when set. */
  /** Absolute base of the URLs the API hands out (image URLs), e.g. https://api.example.com; unset: relative URLs. */
  PUBLIC_BASE_URL: z.string().url().regex(/^https?:\/\/[^?#]*[^/?#]$/, "scheme://host[:port][/path] without a trailing slash").optional(),
  ADMIN_TOKEN: z.string().min(16, "ADMIN_TOKEN must be at least 16 characters").optional(),
  /** HS256 key for access tokens; the embedded default generates and keeps one under DATA_DIR. */
  JWT_SECRET: z.string().min(32, "JWT_SECRET must be at least 32 characters").optional(),
  /** The image URL key (64 hex digits, derived from JWT_SECRET: libs/auth imageUrlKey); set, the events service needs no JWT_SECRET. */
  IMAGE_URL_KEY: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "IMAGE_URL_KEY must be 64 lowercase hex digits (the key derived from JWT_SECRET)")
    .optional(),
  /** Key of the keyed hash under which API keys are stored. */
  API_KEY_PEPPER: z.string().min(32, "API_KEY_PEPPER must be at least 32 characters").optional(),
  /** Shared credential that services require of their callers (the gateway). */
  INTERNAL_TOKEN: z.string().min(32, "INTERNAL_TOKEN must be at least 32 characters").optional(),
  TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86400).default(3600),
  /** Failed POST /auth attempts allowed per client address and per account within the window. */
  AUTH_MAX_FAILURES: z.coerce.number().int().min(1).default(10),
  AUTH_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /** How long a write's Idempotency-Key holds (its answer is replayed, another request under it is a 422). */
  IDEMPOTENCY_KEY_TTL_SECONDS: z.coerce.number().int().min(1).max(7 * 86400).default(86400),
  OUTBOX_POLL_MS: z.coerce.number().int().min(10).default(250),
  /** An import whose upload appended no chunk for this long (its gateway died mid-file) is failed by its owner's sweep. */
  IMPORT_UPLOAD_IDLE_SECONDS: z.coerce.number().int().min(60).default(3600),
  /**
   * Webhook deliveries may go to plain http:// and to loopback, private and link-local addresses.
   * For tests and local development only: in production it would let an account reach the
   * cluster's own services and the cloud metadata endpoint, so loadConfig refuses it with NODE_ENV=production.
   */
  WEBHOOK_ALLOW_PRIVATE: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
  /** Attempts in flight at once to one webhook endpoint (a slow endpoint holds only its own). */
  WEBHOOK_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(100).default(16),
  /**
   * Attempts in flight at once in one events process, over all endpoints: shared between the
   * endpoints with due deliveries (docs/events.md "Slots shared between endpoints").
   */
  WEBHOOK_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(10_000).default(256),
  /**
   * How long the events queue holds a version of a product, price, purchase order or stock trigger
   * whose predecessor has not come yet (the outbox guarantees it comes): past it, the held versions
   * are queued and the missing ones superseded. Longer than NATS's redelivery of a dead replica's
   * batch (20 s ack wait), so a kill does not supersede anything.
   */
  EVENTS_GAP_HOLD_SECONDS: z.coerce.number().min(0.01).max(86400).default(60),
  /** How often the webhook worker looks for due deliveries when it has found none. */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).default(250),
  /** Longest wait for a database connection from the pool; then the request answers 503. */
  DB_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  /**
   * Connections this process's pool may open (per service in `npm start`); unset: 10 per service,
   * 20 for the gateway. Replicas x pools must fit in Postgres's max_connections (docs/operations.md, "Connection budget").
   */
  DB_POOL_MAX: z.coerce.number().int().min(1).max(1000).optional(),
  /** Longest SQL statement (Postgres statement_timeout); then the request answers 503. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /**
   * Longest statement of a planning breakdown (sales plans, breakdown, by warehouse: one statement
   * over the whole account, seconds at 100,000 SKUs), in place of DB_STATEMENT_TIMEOUT_MS; the
   * gateway waits this plus SERVICE_CALL_TIMEOUT_MS for such an answer's first chunk. Then 503.
   */
  PLANNING_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  /**
   * Planning answers (sales plans, breakdowns) one account may have running at once in one
   * planning process; more is a 429 with Retry-After. Unset: half of the pool less the fifth the
   * answers leave to everything else (4 of DB_POOL_MAX 10). docs/planning.md "Fair share and cancellation".
   */
  PLANNING_ACCOUNT_MAX_ANSWERS: z.coerce.number().int().min(1).max(1000).optional(),
  /** Deadline of each gateway-to-service call; then the request answers 503. */
  SERVICE_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** How often the gateway resolves each service's host name again: new replicas get calls, gone ones are let go. */
  SERVICE_DNS_REFRESH_MS: z.coerce.number().int().min(100).default(10_000),
  /**
   * On SIGTERM, how long a process keeps serving while /readyz answers 503 (the load balancer and
   * the gateways' name resolution let it go), before it closes, letting calls in flight finish.
   */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(0),
  /** How long a gateway-to-service call waits for its answer's first byte before the replica is checked (PING); unanswered as long again, it leaves the rotation. */
  SERVICE_FIRST_BYTE_TIMEOUT_MS: z.coerce.number().int().min(100).default(500),
  /** Longest time a client may take to send a whole request (headers and body); then 408 and the connection closes. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(30_000),
  /**
   * OpenTelemetry traces over OTLP/HTTP: the collector's base URL (spans go to <it>/v1/traces) or
   * the traces URL itself. Neither: tracing is off. OTEL_BSP_* tune the batches.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrl,
  /** service.name of the spans, instead of `analytics-<deployable>` (empty: that default). */
  OTEL_SERVICE_NAME: z.string().trim().optional().transform((name) => name || undefined),
  /** Where each service answers (`CATALOGUE_URL`, ...), one per entry of the service registry. */
  ...serviceUrlShape(),
});

export type Config = z.infer<typeof configSchema>;

/** A process cannot start, for a reason its `message` tells the user with what to do; printed without a stack trace. */
export class StartupError extends Error {}

function serviceUrlShape() {
  const shape = Object.fromEntries(
    serviceNames.map((name) => [
      serviceUrlVariable(name),
      // Services speak HTTP/2 without TLS (h2c) inside the cluster; the gateway's client opens plain sockets.
      z
        .string()
        .url()
        .refine((u) => u.startsWith("http://"), "must be an http:// URL (services speak h2c; TLS belongs to the mesh or the ingress)")
        .default(`http://127.0.0.1:${serviceRegistry[name].port}`),
    ]),
  );
  return shape as Record<`${Uppercase<ServiceName>}_URL`, z.ZodDefault<z.ZodString>>;
}

/** The database timeouts (and pool size, when set) every pool uses; planning's breakdowns take their own statement timeout. */
export function dbTimeouts(config: Config) {
  return {
    acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    poolMax: config.DB_POOL_MAX,
    planningQueryTimeoutMs: config.PLANNING_QUERY_TIMEOUT_MS,
    planningAccountMaxAnswers: config.PLANNING_ACCOUNT_MAX_ANSWERS,
  };
}

/**
 * What image URLs are signed with: IMAGE_URL_KEY when set, else JWT_SECRET (the key derives from
 * it; `jwtSecret` is the single-process launcher's generated one).
 */
export function imageUrlSigning(config: Config, jwtSecret?: string): string | { key: string } {
  return config.IMAGE_URL_KEY ? { key: config.IMAGE_URL_KEY } : (jwtSecret ?? required(config, "JWT_SECRET"));
}

/**
 * The events service's webhook worker (services/events/src/webhook-worker.ts). A delivery's data is
 * the entry as GET /events answers it, image capability URLs included: the worker signs them as the
 * gateway does (imageUrlSigning, PUBLIC_BASE_URL). The events service reads its settings here at
 * start (alone and in `npm start`), so this is where an operator is warned that private addresses are open.
 */
export function webhookSettings(config: Config, jwtSecret?: string, logger: Pick<Logger, "warn"> = createLogger(config, "events")) {
  if (config.WEBHOOK_ALLOW_PRIVATE) {
    logger.warn(
      { setting: "WEBHOOK_ALLOW_PRIVATE" },
      "WEBHOOK_ALLOW_PRIVATE=true: webhook deliveries may go to http:// and to loopback, private and link-local addresses (tests and local development only)",
    );
  }
  return {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    concurrencyPerEndpoint: config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
    maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
    pollMs: config.WEBHOOK_POLL_MS,
    imageUrls: { signing: imageUrlSigning(config, jwtSecret), publicBaseUrl: config.PUBLIC_BASE_URL },
  };
}

/** What every process connects its bus with (libs/bus createBus). */
export function busSettings(config: Config) {
  return {
    natsUrl: config.NATS_URL,
    stream: config.NATS_STREAM,
    subjectPrefix: config.NATS_SUBJECT_PREFIX,
    maxAgeSeconds: config.NATS_STREAM_MAX_AGE_SECONDS,
    maxBytes: config.NATS_STREAM_MAX_BYTES,
    replicas: config.NATS_STREAM_REPLICAS,
    partitions: config.NATS_PARTITIONS,
  };
}

/**
 * Where spans go (libs/telemetry startTracing); both unset: tracing off. Spread after the
 * deployable's own serviceName: OTEL_SERVICE_NAME, when set, replaces it.
 */
export function tracingSettings(config: Config) {
  return {
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    tracesEndpoint: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    ...(config.OTEL_SERVICE_NAME ? { serviceName: config.OTEL_SERVICE_NAME } : {}),
  };
}

/** Every service's address from configuration, by service name. */
export function serviceUrls(config: Config): Record<ServiceName, string> {
  return Object.fromEntries(serviceNames.map((name) => [name, config[serviceUrlVariable(name)]])) as Record<ServiceName, string>;
}

/** One line per problem, each with the bad value. */
export class ConfigError extends StartupError {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/** Variables whose value must not appear in a log or terminal, even when it is wrong. */
const SECRET = /TOKEN|SECRET|PEPPER|PASSWORD|_KEY$/;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set", as in most deployment tools.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = i.path.join(".");
        const value = present[name];
        const shown = value === undefined ? "" : SECRET.test(name) ? ` (got ${value.length} characters)` : ` (got ${JSON.stringify(value)})`;
        return `${name}: ${i.message}${shown}`;
      }),
    );
  }
  // Across two variables, so not in the schema: its shape is the list of variables (docs test).
  if (parsed.data.NODE_ENV === "production" && parsed.data.WEBHOOK_ALLOW_PRIVATE) {
    throw new ConfigError([
      "WEBHOOK_ALLOW_PRIVATE: must not be true with NODE_ENV=production (it lets webhook deliveries reach the cluster's own services and the cloud metadata endpoint; for tests and local development only)",
    ]);
  }
  return parsed.data;
}

/** Prints why a process cannot start (a StartupError: its message only; a bug: with its stack) and exits. */
export function exitOnStartupError(error: unknown): never {
  console.error(error instanceof StartupError ? error.message : error);
  process.exit(1);
}

/**
 * What a listen on `port` failed with: when the port is taken, a StartupError naming the port and
 * the variable that chose it (one line, not a stack trace); anything else as it was.
 */
export function portTaken(error: unknown, port: number | undefined, variable: string): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== "EADDRINUSE") return error;
  return new StartupError(`port ${port} is already in use (${variable}): stop what uses it, or set ${variable} to a free port`);
}

/** The value of an optional setting that this process cannot run without. */
export function required<K extends keyof Config>(config: Config, key: K): NonNullable<Config[K]> {
  const value = config[key];
  if (value === undefined || value === null) throw new ConfigError([`${String(key)}: required`]);
  return value as NonNullable<Config[K]>;
}

/**
 * The request a piece of work belongs to: a service runs each call inside it, so every log line
 * the call writes carries the gateway's request id.
 */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/**
 * `trace_id` and `span_id` of a span (none: the active one), for a log line to join its trace;
 * {} when there is none (tracing off: no context manager, so no active span).
 */
export function traceLogFields(span: Span | undefined = trace.getActiveSpan()): { trace_id?: string; span_id?: string } {
  const ids = span?.spanContext();
  return ids && isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}

export function createLogger(config: Pick<Config, "LOG_LEVEL">, name: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level: config.LOG_LEVEL,
    // Every line written inside a request (its service call) carries its request id and, while
    // tracing is on, the trace it belongs to.
    mixin: (merge) => {
      const requestId = requestContext.getStore()?.requestId;
      const fields = "trace_id" in merge ? {} : traceLogFields();
      return requestId && !("requestId" in merge) ? { requestId, ...fields } : fields;
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
