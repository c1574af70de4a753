import { busSettings, createLogger, dbTimeouts, exitOnStartupError, loadConfig, portTaken, required, serviceUrls, tracingSettings } from "@analytics/config";
import { startTracing } from "@analytics/telemetry";
import { createBus } from "@analytics/bus";
import { migrateOnly } from "@analytics/db";
import { buildGateway, gatewaySettings } from "./app";
import { migrations } from "./migrations";

/**
 * `node dist/gateway/main.js`: the gateway alone, with services at their *_URL addresses;
 * `node dist/gateway/main.js migrate-only`: its schema's pending migrations, then exit.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, "gateway");
  if (process.argv.includes("migrate-only")) process.exit(await migrateOnly({ url: required(config, "DATABASE_URL"), ...dbTimeouts(config) }, "gateway", migrations, logger));
  const tracing = startTracing({ serviceName: "analytics-gateway", ...tracingSettings(config) });
  const gateway = await buildGateway({
    databaseUrl: required(config, "DATABASE_URL"),
    services: serviceUrls(config),
    internalToken: required(config, "INTERNAL_TOKEN"),
    jwtSecret: required(config, "JWT_SECRET"),
    apiKeyPepper: required(config, "API_KEY_PEPPER"),
    ...gatewaySettings(config),
    bus: await createBus({ ...busSettings(config), logger, name: "gateway" }),
    outboxPollMs: config.OUTBOX_POLL_MS,
    host: config.HOST ?? "0.0.0.0",
    logger,
  });
  await gateway.app.listen({ port: config.PORT, host: config.HOST ?? "0.0.0.0" }).catch((error: unknown) => {
    throw portTaken(error, config.PORT, "PORT");
  });
  logger.info({ metrics: `${gateway.metricsUrl}/metrics` }, "metrics listening");
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void gateway.shutdown(config.SHUTDOWN_DRAIN_MS).then(() => tracing.stop()).then(() => process.exit(0)));
  }
}

main().catch(exitOnStartupError);
