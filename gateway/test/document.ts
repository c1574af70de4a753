import pino from "pino";
import { createTestDatabase } from "@analytics/testing";
import { buildGateway } from "../src/app";

/** The OpenAPI document as the gateway serves it (admin API on, so every operation is in it). */
export async function servedDocument(): Promise<Record<string, any>> {
  const database = await createTestDatabase();
  const gw = await buildGateway({
    databaseUrl: database.url,
    services: { catalogue: "http://127.0.0.1:9", events: "http://127.0.0.1:9" },
    internalToken: "i".repeat(40),
    jwtSecret: "j".repeat(40),
    apiKeyPepper: "p".repeat(40),
    adminToken: "admin-token-for-tests-0123456789",
    tokenTtlSeconds: 3600,
    authMaxFailures: 3,
    authFailureWindowSeconds: 60,
    trustProxyHops: 0,
    logger: pino({ level: "silent" }),
  });
  try {
    return (await gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" })).json();
  } finally {
    await gw.close();
    await database.drop();
  }
}
