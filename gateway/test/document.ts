import { createTestDatabase, databaseForFile, type TestDatabase } from "@analytics/testing";
import { buildGateway, type Gateway, type GatewayDeps } from "../src/app";
import { testGatewayDeps } from "./gateway-deps";

export { TEST_ADMIN_TOKEN } from "./gateway-deps";

/** A gateway on a fresh test database; services are not running (their routes answer 503). */
export async function testGateway(overrides: Partial<GatewayDeps> = {}): Promise<{ gw: Gateway; database: TestDatabase; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const gw = await buildGateway(testGatewayDeps(database.url, overrides));
  return {
    gw,
    database,
    close: async () => {
      await gw.close();
      await database.drop();
    },
  };
}

/** A gateway on the test file's own database: built in beforeAll, closed in afterAll. Read `gw` inside hooks and tests. */
export function gatewayForFile(overrides: Partial<GatewayDeps> = {}): { gw: Gateway } {
  const database = databaseForFile();
  const handle = {} as { gw: Gateway };
  beforeAll(async () => {
    handle.gw = await buildGateway(testGatewayDeps(database.url, overrides));
    database.atClose(() => handle.gw.close());
  });
  return handle;
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
