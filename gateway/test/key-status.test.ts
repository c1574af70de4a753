import pg from "pg";
import { createTestDatabase, databaseForFile, eventually } from "@analytics/testing";
import { KeyStatusCache } from "../src/accounts/key-status";
import { buildGateway, type Gateway } from "../src/app";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";

const admin = { authorization: `Bearer ${ADMIN}` };

/** API-key status is cached per replica, and a revocation reaches every replica when it commits. */
describe("API-key status across gateway replicas (real Postgres)", () => {
  const database = databaseForFile();
  let a: Gateway;
  let b: Gateway;

  beforeAll(async () => {
    a = await buildGatewayForSchema(database.url);
    b = await buildGatewayForSchema(database.url);
    database.atClose(async () => {
      await a.close();
      await b.close();
    });
  });

  async function signedIn(gw: Gateway) {
    const account = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    const token = (await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey } })).json().accessToken;
    // A protected route that answers without a service: 404 for an unknown path parameter shape is
    // decided after authentication, so 401 means the key was refused.
    const status = async (gw2: Gateway) =>
      (await gw2.app.inject({ method: "GET", url: "/v2/api/events?page=0", headers: { authorization: `Bearer ${token}` } })).statusCode;
    const revoke = (via: Gateway) => via.app.inject({ method: "DELETE", url: `/admin/v1/accounts/${account.accountID}/keys/${account.apiKeyId}`, headers: admin });
    return { status, revoke };
  }

  it("stops a revoked key at once on the replica that revoked it and, when it commits, on the others", async () => {
    const key = await signedIn(a);
    // Both replicas have the key cached as active (400: the page is refused after authentication).
    expect(await key.status(a)).toBe(400);
    expect(await key.status(b)).toBe(400);
    expect((await key.revoke(a)).statusCode).toBe(200);
    expect(await key.status(a)).toBe(401);
    await eventually(async () => (await key.status(b)) === 401, 2_000, "the other replica to hear of the revocation");
  });

  it("asks the database while its listening connection is down, so nothing revoked slips through", async () => {
    const key = await signedIn(a);
    expect(await key.status(b)).toBe(400);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      // Cut every replica's listening connection, then revoke: no notification can arrive.
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway-key-status' AND datname = current_database()");
      expect((await key.revoke(a)).statusCode).toBe(200);
      await eventually(async () => (await key.status(b)) === 401, 2_000, "the replica to stop trusting its cache");
    } finally {
      await admin.end();
    }
    // The listeners come back and caching resumes: a new key works on both replicas.
    await eventually(async () => (await admin_listeners(database.url)) >= 2, 5_000, "listeners to reconnect");
    const fresh = await signedIn(b);
    expect(await fresh.status(a)).toBe(400);
  });
});

async function admin_listeners(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'gateway-key-status' AND datname = current_database()");
    return rows[0].n;
  } finally {
    await c.end();
  }
}

describe("KeyStatusCache (real Postgres)", () => {
  it("caches nothing while it cannot hear revocations, so a revocation it missed still counts", async () => {
    const database = await createTestDatabase();
    const gw = await buildGatewayForSchema(database.url);
    const cache = new KeyStatusCache(gw.db, database.url, undefined, 60_000, 1000, 60_000);
    try {
      await cache.start();
      const account = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { authorization: "Bearer admin-token-for-tests-0123456789" }, payload: { name: "A" } })).json();
      expect(await cache.isActive(account.accountID, account.apiKeyId)).toBe(true);
      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      await c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'gateway-key-status' AND datname = current_database()");
      await eventually(async () => !cache.isListening, 5_000, "the cache to notice");
      expect(await cache.isActive(account.accountID, account.apiKeyId)).toBe(true);
      // Revoked behind its back (no notification reaches it).
      await c.query("UPDATE gateway.api_keys SET revoked_at = now() WHERE id = $1", [account.apiKeyId]);
      await c.end();
      expect(await cache.isActive(account.accountID, account.apiKeyId)).toBe(false);
    } finally {
      await cache.close();
      await gw.close();
      await database.drop();
    }
  });
});

function buildGatewayForSchema(url: string) {
  return buildGateway(testGatewayDeps(url, { authMaxFailures: 100 }));
}
