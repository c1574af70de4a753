import { createLogger, loadConfig, required } from "@analytics/config";
import { buildGateway } from "./app";

/** `node dist/gateway/main.js`: the gateway alone, with services at their *_URL addresses. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, "gateway");
  const gateway = await buildGateway({
    databaseUrl: required(config, "DATABASE_URL"),
    services: { catalogue: config.CATALOGUE_URL, events: config.EVENTS_URL },
    internalToken: required(config, "INTERNAL_TOKEN"),
    jwtSecret: required(config, "JWT_SECRET"),
    apiKeyPepper: required(config, "API_KEY_PEPPER"),
    adminToken: config.ADMIN_TOKEN,
    tokenTtlSeconds: config.TOKEN_TTL_SECONDS,
    authMaxFailures: config.AUTH_MAX_FAILURES,
    authFailureWindowSeconds: config.AUTH_FAILURE_WINDOW_SECONDS,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    logger,
  });
  await gateway.app.listen({ port: config.PORT, host: config.HOST });
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => void gateway.close().then(() => process.exit(0)));
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
