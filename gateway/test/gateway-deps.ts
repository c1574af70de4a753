import pino from "pino";
import type { GatewayDeps } from "../src/app";
import { allServicesAt } from "./services";

export const TEST_ADMIN_TOKEN = "admin-token-for-tests-0123456789";

/** A gateway's settings for tests: fixed secrets, silent logs, services where nothing listens (their routes answer 503). */
export function testGatewayDeps(databaseUrl: string, overrides: Partial<GatewayDeps> = {}): GatewayDeps {
  return {
    databaseUrl,
    services: allServicesAt(),
    internalToken: "i".repeat(40),
    jwtSecret: "j".repeat(40),
    apiKeyPepper: "p".repeat(40),
    adminToken: TEST_ADMIN_TOKEN,
    tokenTtlSeconds: 3600,
    authMaxFailures: 3,
    authFailureWindowSeconds: 60,
    trustProxyHops: 0,
    logger: pino({ level: "silent" }),
    ...overrides,
  };
}
