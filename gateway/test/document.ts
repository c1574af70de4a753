import pino from "pino";
import { createTestDatabase, type TestDatabase } from "@analytics/testing";
import { buildGateway, type Gateway, type GatewayDeps } from "../src/app";
import { allServicesAt } from "./services";

export const TEST_ADMIN_TOKEN = "admin-token-for-tests-0123456789";

/** A gateway on a fresh test database; services are not running (their routes answer 503). */
export async function testGateway(overrides: Partial<GatewayDeps> = {}): Promise<{ gw: Gateway; database: TestDatabase; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const gw = await buildGateway({
    databaseUrl: database.url,
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
  });
  return {
    gw,
    database,
    close: async () => {
      await gw.close();
      await database.drop();
    },
  };
}

/** The OpenAPI document as the gateway serves it (admin API on, so every operation is in it). */
export async function servedDocument(): Promise<Record<string, any>> {
  const { gw, close } = await testGateway();
  try {
    return (await gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" })).json();
  } finally {
    await close();
  }
}
