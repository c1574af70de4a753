import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Code, createClient, type Client, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { INTERNAL_HEADERS, requireInternalCaller } from "@analytics/auth";
import { createBus, type Bus, type Subscription } from "@analytics/bus";
import { busSettings, createLogger, dbTimeouts, exitOnStartupError, loadConfig, portTaken, required, requestContext, StartupError, tracingSettings, type Config } from "@analytics/config";
import { createDb, duringCall, migrateOnly, ping, prepareSchema, type Db, type Migration, type MigrationMode } from "@analytics/db";
import { toConnectError } from "@analytics/errors";
import { pruneInbox } from "@analytics/inbox";
import { OutboxRelay } from "@analytics/outbox";
import { closeServer, createMetricsRegistry, endSpan, inSpan, listenMetrics, rpcServerDurations, scrapeOf, SpanKind, startSpan, startTracing, tracingEnabled } from "@analytics/telemetry";
import { consumerMetrics, durableName, subscribeConsumer, type ConsumerDefinition } from "./consumers";
import { consumerLagMetrics, storeMetrics } from "./metrics";
import type { ReplicaOptions } from "./replicas";
import { dataVersionInterceptor } from "./data-version";
import { createServiceTransport } from "./transport";

export { consumerHandler, type ConsumerDefinition, type Delivery } from "./consumers";
export { accountVersionHandler, accountVersionText, atRevision, batchResponse, batchResult, commit, dispatch, itemOutcome, MAX_PAGE_SIZE, notWritten, on, pageOf, refuseDuplicates, type Dispatch, type ItemOutcome, type Page, type Route } from "./kit";
export { createServiceTransport } from "./transport";
export { applyInRuns, IMPORT_FINAL_STATUSES, ImportJobs, IMPORT_UPLOAD_IDLE_MS, MAX_CHUNK_ATTEMPTS, importJobColumns, importRuns, importTables, type ImportResource, type LineOutcome } from "./imports";
export { answerDataVersion, askingDataVersions, DATA_VERSION_HEADER, dataVersionInterceptor, DataVersions, type ReadDataVersion } from "./data-version";
export { consumerLagMetrics, storeMetrics } from "./metrics";
export type { ReplicaOptions } from "./replicas";

/** What every service gets from whoever starts it (its own main, or the single-process launcher). */
export interface ServiceDeps {
  databaseUrl: string;
  bus: Bus;
  logger: Logger;
  internalToken: string;
  port: number;
  host?: string;
  outboxPollMs?: number;
  /** An import's upload that appended nothing for this long is failed (IMPORT_UPLOAD_IDLE_SECONDS; docs/imports.md). */
  importUploadIdleMs?: number;
  /**
   * Leave the outbox relay stopped until startRelay(): the single-process launcher subscribes
   * every service's consumers first, because the in-process bus keeps nothing for a consumer
   * that has not subscribed yet.
   */
  deferRelay?: boolean;
  /**
   * A plain HTTP/1.1 port for /healthz, /readyz and /metrics (HEALTH_PORT), for probes that
   * cannot speak h2c (the kubelet's httpGet). The same paths answer on the h2c port too.
   */
  healthPort?: number;
  /** A port of its own for /metrics (METRICS_PORT); when set, the h2c and health ports no longer answer /metrics. */
  metricsPort?: number;
  /** Run the pending migrations at start (apply, the default), or wait until a migration Job ran them (verify). */
  migrations?: MigrationMode;
  /**
   * Pool acquire and statement timeouts (DB_ACQUIRE_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS); the
   * planning breakdowns' statement timeout (PLANNING_QUERY_TIMEOUT_MS).
   */
  dbTimeouts?: { acquireTimeoutMs: number; statementTimeoutMs: number; poolMax?: number; planningQueryTimeoutMs?: number; planningAccountMaxAnswers?: number };
}

export interface RunningService {
  name: string;
  url: string;
  port: number;
  /** http://host:port of the HTTP/1.1 health port, when one was asked for. */
  healthUrl?: string;
  /** http://host:port of the metrics port, when one was asked for. */
  metricsUrl?: string;
  startRelay(): void;
  /** Stops publishing (rows written from now on wait in the outbox); close() stops the rest. */
  stopRelay(): Promise<void>;
  close(): Promise<void>;
  /** SIGTERM: /readyz answers 503 while calls keep being served for `drainMs`; then close() (calls in flight finish). */
  shutdown(drainMs: number): Promise<void>;
}

/** What a service hands to its Connect routes and bus subscriptions. */
export interface ServiceContext {
  db: Db;
  /** Wakes the outbox relay after a commit that wrote outbox rows. */
  relay: OutboxRelay;
  logger: Logger;
}

export interface ServiceDefinition {
  /** Service name = its Postgres schema = its durable consumer name. */
  name: string;
  migrations: Migration[];
  routes(router: ConnectRouter, context: ServiceContext): void;
  consumers?: ConsumerDefinition[];
  /** Background loops of the service (started after its consumers, stopped before them). */
  workers?: ((context: WorkerContext) => Worker)[];
  /**
   * The caller's data version as its GetAccountVersion answers it, as text (accountVersionText):
   * answered with every call that asks for it (data-version.ts), for the gateway's weak ETags.
   */
  dataVersion?(db: Db, accountId: string): Promise<string>;
  /**
   * The calls whose handlers read that version with their data, in the same statement
   * (withAccountVersion), and answer it (answerDataVersion): it is not read again before them.
   */
  dataVersionReadByHandler?: readonly DescMethod[];
  /** Forgets what the service keeps only to de-duplicate deliveries: hourly, after its inbox (if it consumes). */
  prune?(db: Db): Promise<unknown>;
}

/** What a service's background worker gets: its pool, its logger, its metrics registry. */
export interface WorkerContext {
  db: Db;
  logger: Logger;
  metrics: Registry;
  /** Wakes the outbox relay after a commit that wrote outbox rows (a worker that writes needs it). */
  relay?: OutboxRelay;
  /** ServiceDeps.importUploadIdleMs, for the import worker's sweep. */
  importUploadIdleMs?: number;
}

export interface Worker {
  /** Resolves when the worker's work in progress has ended. */
  stop(): Promise<void>;
}

/**
 * Starts one service: its pool on its own schema, migrations, an h2c Connect server with
 * /healthz, /readyz and /metrics, then its bus consumers, then the outbox relay. The port opens
 * before relaying and consuming start, and if anything fails on the way everything started is
 * stopped again.
 */
export async function startService(definition: ServiceDefinition, deps: ServiceDeps): Promise<RunningService> {
  const { name } = definition;
  const logger = deps.logger.child({ service: name });
  const db = createDb({ url: deps.databaseUrl, schema: name, applicationName: name, ...deps.dbTimeouts });
  const relay = new OutboxRelay({ db, bus: deps.bus, logger, pollMs: deps.outboxPollMs });
  const context: ServiceContext = { db, relay, logger };
  const metrics = createMetricsRegistry(name);
  storeMetrics(metrics, db, relay);
  const consumers = definition.consumers ?? [];
  consumerLagMetrics(metrics, deps.bus, consumers.map((c) => ({ durable: durableName(name, c), subjects: c.topics.map((t) => t.subject) })));
  const observeConsumer = consumerMetrics(metrics);
  const subscriptions: Subscription[] = [];
  const workers: Worker[] = [];
  let pruning: NodeJS.Timeout | undefined;
  let server: http2.Http2Server | undefined;
  let healthServer: http.Server | undefined;
  let metricsServer: http.Server | undefined;
  const sessions = new Set<http2.ServerHttp2Session>();
  let draining = false;

  const close = async () => {
    clearInterval(pruning);
    await Promise.all(workers.map((w) => w.stop()));
    if (healthServer?.listening) await new Promise<void>((resolve) => healthServer!.close(() => resolve()));
    await closeServer(metricsServer);
    await Promise.all(subscriptions.map((s) => s.stop()));
    await relay.stop();
    if (server?.listening) {
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const session of sessions) session.close();
      });
    }
    await db.destroy();
  };

  try {
    await prepareSchema(db, name, definition.migrations, deps.migrations, logger);
    // Ready is this process able to serve: its own database. The bus is a dependency: while it is
    // down writes still commit, their messages waiting in the outbox, so it shows in /healthz and
    // the metrics, not as not-ready (in Kubernetes, every replica unready would be an outage).
    const ready = () => (draining ? Promise.resolve(false) : ping(db));
    const dependencies = { database: () => ping(db), bus: () => deps.bus.ping() };
    // With a metrics port, /metrics answers there alone.
    const health = healthHandler(ready, dependencies, deps.metricsPort === undefined ? scrapeOf(metrics) : undefined, metrics.contentType);
    server = http2.createServer(
      connectNodeAdapter({
        routes: (router) => definition.routes(router, context),
        interceptors: [
          errorsAndLogging(logger, rpcServerDurations(metrics)),
          requireInternalCaller(deps.internalToken),
          ...(definition.dataVersion ? [dataVersionInterceptor((accountId) => definition.dataVersion!(db, accountId), new Set(definition.dataVersionReadByHandler))] : []),
        ],
        fallback: health,
      }),
    );
    // Clients keep HTTP/2 sessions open; close() ends them gracefully so in-flight calls finish.
    server.on("session", (session) => {
      sessions.add(session);
      session.once("close", () => sessions.delete(session));
    });
    await new Promise<void>((resolve, reject) => {
      server!.once("error", (error) => reject(portTaken(error, deps.port, "SERVICE_PORT")));
      server!.listen(deps.port, deps.host ?? "127.0.0.1", () => resolve());
    });
    if (deps.healthPort !== undefined) {
      healthServer = http.createServer(health as unknown as http.RequestListener);
      await new Promise<void>((resolve, reject) => {
        healthServer!.once("error", (error) => reject(portTaken(error, deps.healthPort, "HEALTH_PORT")));
        healthServer!.listen(deps.healthPort, deps.host ?? "127.0.0.1", () => resolve());
      });
    }
    if (deps.metricsPort !== undefined) {
      metricsServer = await listenMetrics(metrics, deps.metricsPort, deps.host ?? "127.0.0.1").catch((error: unknown) => {
        throw portTaken(error, deps.metricsPort, "METRICS_PORT");
      });
    }
    for (const consumer of consumers) subscriptions.push(await subscribeConsumer(deps.bus, db, name, consumer, observeConsumer));
    if (consumers.length || definition.prune) {
      const prune = async () => {
        if (consumers.length) await pruneInbox(db);
        await definition.prune?.(db);
      };
      pruning = setInterval(() => void prune().catch((err) => logger.warn({ err }, "pruning failed")), 3600_000);
      pruning.unref();
    }
    for (const start of definition.workers ?? []) workers.push(start({ db, logger, metrics, relay, importUploadIdleMs: deps.importUploadIdleMs }));
    if (!deps.deferRelay) relay.start();
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }

  const port = (server.address() as AddressInfo).port;
  const url = `http://${deps.host && deps.host !== "0.0.0.0" ? deps.host : "127.0.0.1"}:${port}`;
  logger.info({ url }, "service listening");
  const healthUrl = healthServer ? `http://127.0.0.1:${(healthServer.address() as AddressInfo).port}` : undefined;
  const metricsUrl = metricsServer ? `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}` : undefined;
  const shutdown = async (drainMs: number) => {
    draining = true;
    await new Promise((resolve) => setTimeout(resolve, drainMs));
    await close();
  };
  return { name, url, port, healthUrl, metricsUrl, startRelay: () => relay.start(), stopRelay: () => relay.stop(), close, shutdown };
}

/** The messages of `stream`, each read within `store`'s request context. */
function inContext<T>(store: { requestId: string } | undefined, stream: AsyncIterable<T>): AsyncIterable<T> {
  if (!store) return stream;
  return {
    [Symbol.asyncIterator]() {
      const it = stream[Symbol.asyncIterator]();
      return {
        next: (...args) => requestContext.run(store, () => it.next(...args)),
        return: (value?: unknown) => requestContext.run(store, () => it.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined as never })),
        throw: (error?: unknown) => requestContext.run(store, () => it.throw?.(error) ?? Promise.reject(error)),
      };
    },
  };
}

/** A request id as the gateway forwards it: at most 128 visible characters. */
const saneRequestId = (value: string | null) => (value && /^[A-Za-z0-9._:@/+=-]{1,128}$/.test(value) ? value : undefined);

/**
 * Every call: its log lines carry the gateway's request id, its span continues the gateway's trace
 * (so the outbox rows it writes carry it on), its duration and code are counted, its transactions
 * do not commit once it has ended, and whatever it throws leaves as a ConnectError (an unexpected
 * one logged, never its text).
 */
function errorsAndLogging(logger: Logger, durations: ReturnType<typeof rpcServerDurations>): Interceptor {
  return (next) => async (req) => {
    const requestId = saneRequestId(req.header.get(INTERNAL_HEADERS.requestId));
    const span = tracingEnabled()
      ? startSpan(`${req.method.parent.typeName}/${req.method.name}`, SpanKind.SERVER, req.header, {
          "rpc.system": "connect_rpc",
          "rpc.service": req.method.parent.typeName,
          "rpc.method": req.method.name,
        })
      : undefined;
    // Every log line of the call (this interceptor's, the handler's, the repository's) carries it.
    const run = () => inSpan(span, () => call(next, req, span));
    return requestId ? requestContext.run({ requestId }, run) : run();
  };
  async function call(next: Parameters<Interceptor>[0], req: Parameters<ReturnType<Interceptor>>[0], span: ReturnType<typeof startSpan>) {
    const started = performance.now();
    const rpc = `${req.method.parent.typeName}/${req.method.name}`;
    const finished = (code: string, error?: unknown) => {
      durations.observe({ rpc, code }, (performance.now() - started) / 1000);
      endSpan(span, error, { "rpc.connect_rpc.error_code": code });
    };
    const failed = (error: unknown) => {
      const wire = toConnectError(error, (e) => logger.error({ err: e, rpc: req.method.name }, "internal error"));
      logger.debug({ rpc: req.method.name, code: Code[wire.code], ms: Math.round(performance.now() - started) }, "rpc failed");
      finished(codeName(wire.code), wire);
      return wire;
    };
    try {
      // The call's signal (its deadline, the caller hanging up, shutdown) and deadline reach its
      // transactions: none commits once the call has ended (libs/db inTransaction).
      const res = await duringCall(req.signal, () => next(req), timeoutOf(req.header));
      if (!res.stream) {
        logger.debug({ rpc: req.method.name, ms: Math.round(performance.now() - started) }, "rpc");
        finished("ok");
        return res;
      }
      // A streaming handler runs as its messages are read: its errors surface here, not above,
      // and it runs in the context of whoever reads, so each read is put back in this call's
      // (its log lines carry the request id).
      const store = requestContext.getStore();
      const messages = inContext(store, res.message);
      return {
        ...res,
        message: (async function* () {
          let ended = false;
          try {
            yield* messages;
            ended = true;
            logger.debug({ rpc: req.method.name, ms: Math.round(performance.now() - started), ...store }, "rpc");
            finished("ok");
          } catch (error) {
            ended = true;
            throw failed(error);
          } finally {
            // The reader left (the client hung up and the stream was reset): the call still has a
            // duration and its span an end.
            if (!ended) finished("canceled");
          }
        })(),
      };
    } catch (error) {
      throw failed(error);
    }
  }
}

/** The call's deadline as its caller sent it (Connect-Timeout-Ms), in ms from now. */
function timeoutOf(header: Headers): number | undefined {
  const ms = Number(header.get("connect-timeout-ms") ?? undefined);
  return Number.isInteger(ms) && ms > 0 ? ms : undefined;
}

/** Connect's own code names (`not_found`), as on the wire. */
const codeName = (code: Code) => Code[code].replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase());

const READY_DEADLINE_MS = 2_000;

type NodeHandler = NonNullable<Parameters<typeof connectNodeAdapter>[0]["fallback"]>;

/** How long /healthz waits for each dependency: quicker than a liveness probe's timeout. */
const DEPENDENCY_DEADLINE_MS = 500;

/** True when `probe` succeeds within `ms` (a probe resolving false fails too); false when it fails or is late. */
export async function withinDeadline(probe: () => Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([probe().then((v) => v !== false, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each dependency's state, all probed at once, each within `ms`. */
export async function dependencyChecks(probes: Record<string, () => Promise<unknown>>, ms = DEPENDENCY_DEADLINE_MS): Promise<Record<string, boolean>> {
  const names = Object.keys(probes);
  const results = await Promise.all(names.map((n) => withinDeadline(probes[n], ms)));
  return Object.fromEntries(names.map((n, i) => [n, results[i]]));
}

/**
 * /healthz: alive (always 200), with each dependency's state in `checks`; /readyz: able to serve
 * (its own database answers), within READY_DEADLINE_MS even when Postgres hangs; /metrics
 * (rendered at most once a second, telemetry's scrapeOf).
 */
function healthHandler(ready: () => Promise<unknown>, dependencies: Record<string, () => Promise<unknown>>, metrics: (() => Promise<string>) | undefined, metricsType: string): NodeHandler {
  return (req, res) => {
    if (req.url === "/metrics" && metrics) {
      const answer = (status: number, text: string) => {
        res.writeHead(status, { "content-type": metricsType });
        res.end(text);
      };
      return void metrics().then((text) => answer(200, text), () => answer(500, ""));
    }
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/healthz") return void dependencyChecks(dependencies).then((checks) => reply(200, { status: "ok", checks }));
    if (req.url === "/readyz") {
      return void withinDeadline(ready, READY_DEADLINE_MS).then((ok) => reply(ok ? 200 : 503, { status: ok ? "ready" : "not ready" }));
    }
    reply(404, { status: "not found" });
  };
}

/**
 * A Connect client of one service over HTTP/2 (one multiplexed session per replica). No gzip
 * between gateway and services: on a local network it costs more CPU than it saves.
 */
export function createServiceClient<T extends DescService>(service: T, baseUrl: string, options?: ReplicaOptions): Client<T> {
  return createClient(service, createServiceTransport(baseUrl, options));
}

/** Asks a service's /readyz over HTTP/2. */
export async function serviceReady(baseUrl: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const session = http2.connect(baseUrl);
    const done = (ok: boolean) => {
      session.close();
      resolve(ok);
    };
    session.on("error", () => done(false));
    session.setTimeout(timeoutMs, () => done(false));
    const req = session.request({ ":path": "/readyz" });
    req.on("response", (headers) => {
      req.resume();
      req.on("end", () => done(headers[":status"] === 200));
    });
    req.on("error", () => done(false));
    req.end();
  });
}

/**
 * `node dist/services/<name>/main.js`: one service alone, as in Kubernetes. Requires DATABASE_URL;
 * without NATS_URL it runs on the in-process bus (useful only for trying a service alone).
 */
export async function runServiceMain(
  name: string,
  start: (deps: ServiceDeps) => Promise<RunningService>,
  defaultPort: number,
  migrations: Migration[],
): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(String((error as Error).message));
    process.exit(1);
  }
  const logger = createLogger(config, name);
  if (process.argv.includes("migrate-only")) process.exit(await migrateOnly({ url: required(config, "DATABASE_URL"), ...dbTimeouts(config) }, name, migrations, logger));
  const tracing = startTracing({ serviceName: `analytics-${name}`, ...tracingSettings(config) });
  try {
    const bus = await createBus({ ...busSettings(config), logger, name });
    if (bus.kind === "in-process") logger.warn("NATS_URL not set: in-process bus, messages do not leave this process");
    const service = await start({
      databaseUrl: required(config, "DATABASE_URL"),
      bus,
      logger,
      internalToken: required(config, "INTERNAL_TOKEN"),
      port: config.SERVICE_PORT ?? defaultPort,
      host: config.HOST ?? "0.0.0.0",
      dbTimeouts: dbTimeouts(config),
      healthPort: config.HEALTH_PORT,
      metricsPort: config.METRICS_PORT,
      migrations: config.MIGRATIONS,
      outboxPollMs: config.OUTBOX_POLL_MS,
      importUploadIdleMs: config.IMPORT_UPLOAD_IDLE_SECONDS * 1000,
    });
    const shutdown = async (signal: string) => {
      logger.info({ signal }, "shutting down");
      await service.shutdown(config.SHUTDOWN_DRAIN_MS);
      await bus.close();
      await tracing.stop();
      process.exit(0);
    };
    process.once("SIGTERM", () => void shutdown("SIGTERM"));
    process.once("SIGINT", () => void shutdown("SIGINT"));
  } catch (error) {
    // A taken port and the like: the one line that says what to do, as every process prints it.
    if (error instanceof StartupError) exitOnStartupError(error);
    logger.fatal({ err: error }, "start-up failed");
    process.exit(1);
  }
}
