import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { isUtf8 } from "node:buffer";
import type { AddressInfo } from "node:net";
import { constants as zlib } from "node:zlib";
import compress from "@fastify/compress";
import cors from "@fastify/cors";
import type { Logger } from "pino";
import { portTaken, traceLogFields, type Config } from "@analytics/config";
import type { Bus } from "@analytics/bus";
import { stringifyRest } from "@analytics/contracts";
import { OutboxRelay } from "@analytics/outbox";
import { createDb, DB_DEFAULTS, ping, prepareSchema, type Db, type MigrationMode } from "@analytics/db";
import { dependencyChecks, serviceReady, storeMetrics, withinDeadline } from "@analytics/rpc";
import { closeServer, createMetricsRegistry, listenMetrics } from "@analytics/telemetry";
import { adminAuthenticator, bearerAuthenticator, type AccountsOptions } from "./routes/accounts";
import { API_INFO, registerRoutes } from "./routes";
import { migrations } from "./migrations";
import { KeyStatusCache } from "./accounts/key-status";
import { TokenIssuer } from "./accounts/tokens";
import type { ServiceUrls } from "./clients";
import { HttpError, installErrorHandling } from "./http/errors";
import { installRequestDeadline } from "./http/request-deadline";
import { installResponseHeaders, requestIdOf, setAnswerHeaders } from "./http/headers";
import { answerRouterError, refuseHostileInput, refuseJsonShape } from "./http/hostile-input";
import { OpenApi } from "./http/openapi";
import { serveDocument } from "./http/prebuilt";
import { installTelemetry, requestSpan } from "./http/telemetry";
import { IdempotencyKeys } from "./http/idempotency";
import { RateLimiter, rateLimiterPoolMax } from "./limits/rate-limiter";
import type { RouteContext } from "./pipeline/route";
import type { StepOf } from "./pipeline/step";
import { installRateLimits } from "./limits/rate-limits";

export interface GatewayDeps {
  databaseUrl: string;
  services: ServiceUrls;
  internalToken: string;
  jwtSecret: string;
  /** IMAGE_URL_KEY when set: image URLs are signed with it rather than the key derived from jwtSecret. */
  imageUrlKey?: string;
  apiKeyPepper: string;
  adminToken?: string;
  tokenTtlSeconds: number;
  authMaxFailures: number;
  authFailureWindowSeconds: number;
  trustProxyHops: number;
  /** How long an Idempotency-Key holds (IDEMPOTENCY_KEY_TTL_SECONDS), 24 h when unset. */
  idempotencyKeyTtlSeconds?: number;
  /** Absolute base of image URLs (PUBLIC_BASE_URL); absent: relative. */
  publicBaseUrl?: string;
  /** Browser origins allowed by CORS (CORS_ORIGINS); empty or absent: CORS off. */
  corsOrigins?: string[];
  /** Deadlines (config: DB_ACQUIRE_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS, SERVICE_CALL_TIMEOUT_MS, REQUEST_TIMEOUT_MS). */
  dbAcquireTimeoutMs?: number;
  dbStatementTimeoutMs?: number;
  /** Connections of its pool (config: DB_POOL_MAX), 20 when unset. */
  dbPoolMax?: number;
  serviceCallTimeoutMs?: number;
  /** How long planning may compute a breakdown (PLANNING_QUERY_TIMEOUT_MS), 120 s when unset. */
  planningQueryTimeoutMs?: number;
  serviceDnsRefreshMs?: number;
  /** First-byte wait before a service replica is checked (SERVICE_FIRST_BYTE_TIMEOUT_MS). */
  serviceFirstByteTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Where the gateway's outbox (account settings changes) is relayed; absent, rows wait (tests). */
  bus?: Bus;
  outboxPollMs?: number;
  /** Run the gateway schema's pending migrations at start (apply, the default), or wait for the migration Job's (verify). */
  migrations?: MigrationMode;
  /**
   * The port of /metrics (METRICS_PORT), on `host`; unset, a free port on 127.0.0.1 (metricsUrl
   * says which). The gateway's own port never answers /metrics: anonymous scrapers would cost
   * every client.
   */
  metricsPort?: number;
  /** Where the metrics port listens when METRICS_PORT is set (HOST); 127.0.0.1 when unset. */
  host?: string;
  /** The steps every route's requests meet (pipeline/route.ts PIPELINE when unset): tests take one out to see what it carries. */
  pipeline?: readonly StepOf[];
  logger: Logger;
}

export interface Gateway {
  app: FastifyInstance;
  db: Db;
  /** http://127.0.0.1:port of the metrics port. */
  metricsUrl: string;
  close(): Promise<void>;
  /**
   * SIGTERM: /readyz answers 503 and every answer says `Connection: close` (clients and the load
   * balancer move on) while requests keep being served for `drainMs`; then close(), which lets
   * requests in flight finish.
   */
  shutdown(drainMs: number): Promise<void>;
}

const MiB = 1024 * 1024;
const READY_DEADLINE_MS = 2_000;

/** The gateway's settings that come straight from configuration. */
export function gatewaySettings(config: Config) {
  return {
    adminToken: config.ADMIN_TOKEN,
    tokenTtlSeconds: config.TOKEN_TTL_SECONDS,
    authMaxFailures: config.AUTH_MAX_FAILURES,
    authFailureWindowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    idempotencyKeyTtlSeconds: config.IDEMPOTENCY_KEY_TTL_SECONDS,
    corsOrigins: config.CORS_ORIGINS,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    imageUrlKey: config.IMAGE_URL_KEY,
    dbAcquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS,
    dbStatementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    dbPoolMax: config.DB_POOL_MAX,
    serviceCallTimeoutMs: config.SERVICE_CALL_TIMEOUT_MS,
    planningQueryTimeoutMs: config.PLANNING_QUERY_TIMEOUT_MS,
    serviceDnsRefreshMs: config.SERVICE_DNS_REFRESH_MS,
    serviceFirstByteTimeoutMs: config.SERVICE_FIRST_BYTE_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    migrations: config.MIGRATIONS,
    metricsPort: config.METRICS_PORT,
  };
}

/** How much longer than the longest wait of a handler a silent connection is kept. */
const CONNECTION_TIMEOUT_MARGIN_MS = 5_000;

/**
 * Fastify's connectionTimeout: the Node server's socket timeout (`server.timeout`), which closes a
 * connection with no bytes either way for that long, an answer still being computed included.
 * Its client would get no status at all: so it is a minute, or longer than the longest wait for
 * an answer's first byte, a planning breakdown's (its statement's PLANNING_QUERY_TIMEOUT_MS plus
 * a call's deadline, after which the gateway answers 503 itself).
 */
export function connectionTimeoutMs(planningQueryTimeoutMs: number, serviceCallTimeoutMs: number): number {
  return Math.max(60_000, planningQueryTimeoutMs + serviceCallTimeoutMs + CONNECTION_TIMEOUT_MARGIN_MS);
}

/** The REST edge: /v2/api routes translated to Connect calls, plus accounts, admin, health and docs. */
export async function buildGateway(deps: GatewayDeps): Promise<Gateway> {
  const serviceCallTimeoutMs = deps.serviceCallTimeoutMs ?? 10_000;
  // DB_POOL_MAX is the gateway's whole share of the connection budget: the rate limiter's own
  // small pool is taken out of it, leaving the main pool at least 2 (migrating at start holds the
  // schema's lock on one connection and migrates on another; with 1 it waits for itself).
  const poolMax = deps.dbPoolMax ?? 20;
  const limiterPoolMax = rateLimiterPoolMax(poolMax);
  const acquireTimeoutMs = deps.dbAcquireTimeoutMs ?? DB_DEFAULTS.acquireTimeoutMs;
  // The edge's own statements (keys, accounts, settings) are short: none may outlast the
  // deadline every route keeps, the driver's extra second (libs/db) included.
  const statementTimeoutMs = Math.min(deps.dbStatementTimeoutMs ?? DB_DEFAULTS.statementTimeoutMs, Math.max(1_000, serviceCallTimeoutMs - 1_000));
  const db = createDb({
    url: deps.databaseUrl,
    schema: "gateway",
    applicationName: "gateway",
    poolMax: Math.max(2, poolMax - limiterPoolMax),
    acquireTimeoutMs,
    statementTimeoutMs,
  });
  const requestTimeoutMs = deps.requestTimeoutMs ?? 30_000;
  const planningQueryTimeoutMs = deps.planningQueryTimeoutMs ?? 120_000;
  await prepareSchema(db, "gateway", migrations, deps.migrations, deps.logger);
  // Set once the rate limiter is installed (below); until then a router refusal gets the request id alone.
  let routerRefusalHeaders = async (request: FastifyRequest, reply: FastifyReply) => void reply.header("X-Request-Id", request.id);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // Fastify's two lines per request are replaced by the one onResponse line below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "requestId" }),
    // X-Request-Id: the client's when it is sane, else a new UUID; on every log line as requestId.
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request.headers["x-request-id"]),
    bodyLimit: 10 * MiB,
    // Client addresses (the /auth brake counts per address) come from X-Forwarded-For only behind
    // that many trusted proxies; otherwise anyone could pick their own address.
    trustProxy: (_address: string, hop: number) => hop < deps.trustProxyHops,
    // A mapping field may have 500 characters, percent-encoded up to 9 bytes each.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 5_000 },
    // The router's refusals run no hook: they get every answer's headers here (routerRefusalHeaders, set below).
    frameworkErrors: (error, request, reply) => void answerRouterError(error, request, reply, (rq, rp) => routerRefusalHeaders(rq, rp)),
    // A client gets 10 s for its headers (checked every second) and REQUEST_TIMEOUT_MS for the
    // rest of its request, per route (installRequestDeadline: an upload counts from its last
    // byte); a connection silent longer than connectionTimeoutMs is closed. Handlers are bounded
    // by the database and service-call deadlines.
    requestTimeout: 0,
    http: { headersTimeout: Math.min(10_000, requestTimeoutMs), connectionsCheckingInterval: 1_000 },
    connectionTimeout: connectionTimeoutMs(planningQueryTimeoutMs, serviceCallTimeoutMs),
  });
  installErrorHandling(app);
  installRequestDeadline(app, requestTimeoutMs);
  // REST answers carry decimals (money, rates) as JSON numbers with exactly their stored digits.
  app.setReplySerializer((payload) => stringifyRest(payload));
  installResponseHeaders(app);
  // JSON over 1 KiB travels br or gzip when the client accepts it (a page of 1000 products: about
  // 950 kB raw, 33 kB gzipped). Fast levels: the cost per request stays small (the compression bench).
  await app.register(compress, {
    global: true,
    threshold: 1024,
    encodings: ["br", "gzip"],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
    zlibOptions: { level: 5 },
  });
  // Request counts and latencies per route, traces, and /metrics (with the pool and outbox below).
  const metrics = createMetricsRegistry("gateway");
  installTelemetry(app, metrics);
  let draining = false;
  app.addHook("onRequest", async (request, reply) => {
    reply.header("X-Request-Id", request.id);
    if (draining) reply.header("Connection", "close");
    // A DELETE with no body is no JSON to read, whatever Content-Type the client sends with every
    // call (Fastify would parse the empty body: 400 "request body is empty").
    const { headers } = request;
    if (request.method === "DELETE" && headers["transfer-encoding"] === undefined && (headers["content-length"] ?? "0") === "0") delete headers["content-type"];
  });
  refuseHostileInput(app);
  // Bodies are JSON only: anything else is a 415 (Fastify would otherwise accept text/plain).
  app.removeContentTypeParser("text/plain");
  // JSON is read as bytes first: bytes that are not UTF-8 are a 400, where decoding them as text
  // would store U+FFFD in their place without a word; a body too wide or deep is a 400 before it
  // is parsed (hostile-input.ts). Then Fastify's own parser (prototype poisoning refused).
  const json = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    if (!isUtf8(body as Buffer)) return done(new HttpError(400, "invalid body: not valid UTF-8"), undefined);
    const tooWide = refuseJsonShape(body as Buffer, request.routeOptions.config?.maxObjectKeys);
    if (tooWide) return done(tooWide, undefined);
    json(request, (body as Buffer).toString("utf8"), done);
  });
  // One log line per request, with its duration.
  app.addHook("onResponse", async (request, reply) => {
    // Written after the handler's span context is gone: its trace is named from the request's span.
    request.log.info(
      { method: request.method, url: request.url, statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime), ...traceLogFields(requestSpan(request)) },
      "request",
    );
  });

  // CORS is off unless CORS_ORIGINS lists origins; then those origins (only) may call from a browser,
  // and preflights are answered.
  if (deps.corsOrigins?.length) {
    await app.register(cors, {
      origin: deps.corsOrigins,
      methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
      allowedHeaders: ["Authorization", "Content-Type", "X-Request-Id", "Idempotency-Key", "If-Match", "If-None-Match"],
      exposedHeaders: ["X-Total-Count", "Link", "Deprecation", "Sunset", "X-Request-Id", "Retry-After", "Idempotent-Replayed", "Idempotent-Redacted", "RateLimit", "RateLimit-Policy", "ETag"],
      maxAge: 600,
    });
  }

  const tokens = new TokenIssuer(deps.jwtSecret, deps.tokenTtlSeconds);
  const keys = new KeyStatusCache(db, deps.databaseUrl, deps.logger);
  await keys.start();
  const openapi = new OpenApi(API_INFO);
  const idempotency = new IdempotencyKeys(db, deps.idempotencyKeyTtlSeconds ?? 86_400, deps.logger);
  const rateLimiter = new RateLimiter({ url: deps.databaseUrl, schema: "gateway", poolMax: limiterPoolMax, acquireTimeoutMs, statementTimeoutMs }, deps.logger, metrics);
  const ctx: RouteContext = {
    app,
    openapi,
    authenticate: bearerAuthenticator(keys, tokens),
    authenticateAdmin: adminAuthenticator({ ...deps, db }),
    idempotency,
    rateLimiter,
    pipeline: deps.pipeline,
  };
  // Before the routes: the rate limit of answers refused before a route's handler (404, 413, 415, ...).
  const chargeRefused = installRateLimits(app, ctx.authenticate, rateLimiter);
  routerRefusalHeaders = async (request, reply) => {
    reply.header("X-Request-Id", request.id);
    setAnswerHeaders(request, reply);
    await chargeRefused(request, reply);
  };
  const relay = deps.bus ? new OutboxRelay({ db, bus: deps.bus, logger: deps.logger, pollMs: deps.outboxPollMs }) : undefined;
  relay?.start();
  storeMetrics(metrics, db, relay);
  const accountOptions: AccountsOptions = { db, relay, keys, ...deps };
  registerRoutes(ctx, { ...deps, accountOptions, tokens, serviceCallTimeoutMs, planningQueryTimeoutMs });

  // Alive, with each dependency's state (its database, every service): always 200, so a
  // service's outage restarts no gateway.
  app.get("/healthz", async () => ({
    status: "ok",
    checks: await dependencyChecks({
      database: () => ping(db),
      ...Object.fromEntries(Object.entries(deps.services).map(([name, url]) => [name, () => serviceReady(url, READY_DEADLINE_MS)])),
    }),
  }));
  // Ready is able to serve: its own database (accounts and keys). A service's outage answers
  // 503 on that service's routes and shows in /healthz; it does not take every gateway out of
  // its Kubernetes Service, nor does a disabled service keep them out.
  app.get("/readyz", async (_request, reply) => {
    if (draining) return reply.status(503).send({ status: "shutting down", checks: {} });
    const database = await withinDeadline(() => ping(db), READY_DEADLINE_MS);
    return reply.status(database ? 200 : 503).send({ status: database ? "ready" : "not ready", checks: { database } });
  });

  await serveDocument(app, openapi.document());

  const metricsServer = await listenMetrics(metrics, deps.metricsPort ?? 0, deps.metricsPort === undefined ? "127.0.0.1" : (deps.host ?? "127.0.0.1")).catch((error: unknown) => {
    throw portTaken(error, deps.metricsPort, "METRICS_PORT");
  });
  const close = async () => {
    await closeServer(metricsServer);
    await app.close();
    idempotency.close();
    await keys.close();
    await relay?.stop();
    await rateLimiter.close();
    await db.destroy();
  };
  return {
    app,
    db,
    metricsUrl: `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}`,
    close,
    shutdown: async (drainMs) => {
      draining = true;
      await new Promise((resolve) => setTimeout(resolve, drainMs));
      await close();
    },
  };
}
