import { createTestDatabase, databaseForFile, eventually, freezableProxy } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { FailureLimiter } from "../src/accounts/failure-limiter";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";

const admin = { authorization: `Bearer ${ADMIN}` };

const auth = (gw: Gateway, accountID: string, apiKey: string, ip: string) => gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID, apiKey }, remoteAddress: ip });

describe("/auth failure limits shared by every gateway (one database)", () => {
  const database = databaseForFile();
  let gateways: Gateway[];
  beforeAll(async () => {
    // Two gateways starting together on the empty database, as two replicas do.
    gateways = await Promise.all([buildGateway(testGatewayDeps(database.url)), buildGateway(testGatewayDeps(database.url))]);
    database.atClose(async () => {
      for (const gw of gateways) await gw.close();
    });
  });

  it("brakes on both gateways once the failures spread over them reach the limit", async () => {
    const [one, two] = gateways;
    const account = (await one.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    const wrong = `${account.apiKeyId}.wrong`;
    // AUTH_MAX_FAILURES = 3: two failures on one gateway, one on the other.
    expect((await auth(one, account.accountID, wrong, "10.1.0.1")).statusCode).toBe(401);
    expect((await auth(two, account.accountID, wrong, "10.1.0.1")).statusCode).toBe(401);
    expect((await auth(one, account.accountID, wrong, "10.1.0.1")).statusCode).toBe(401);
    for (const gw of [one, two]) {
      // Even the right key is refused while braked.
      const braked = await auth(gw, account.accountID, account.apiKey, "10.1.0.1");
      expect(braked.statusCode).toBe(429);
      expect(Number(braked.headers["retry-after"])).toBeGreaterThan(0);
      expect(Number(braked.headers["retry-after"])).toBeLessThanOrEqual(60);
    }
    // Another address is not braked, on either gateway.
    expect((await auth(two, account.accountID, account.apiKey, "10.1.0.2")).statusCode).toBe(200);
  });

  it("counts every one of 50 failures made at once, over both gateways", async () => {
    const limiters = gateways.map((gw) => new FailureLimiter(gw.db, 60));
    await Promise.all(Array.from({ length: 50 }, (_, n) => limiters[n % 2].fail(["test ip:10.2.0.1"])));
    const row = await gateways[0].db("auth_failures").where({ key: "test ip:10.2.0.1" }).first();
    expect(row.failures).toBe(50);
    expect(await limiters[1].retryAfter([{ key: "test ip:10.2.0.1", maxFailures: 50 }])).toBeGreaterThan(0);
    expect(await limiters[1].retryAfter([{ key: "test ip:10.2.0.1", maxFailures: 51 }])).toBe(0);
  });

  it("checks only the limit's worth of wrong admin tokens sent at once: the rest are 429 unchecked", async () => {
    const sent = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        gateways[n % 2].app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { authorization: "Bearer wrong" }, payload: { name: "X" }, remoteAddress: "10.5.0.1" }),
      ),
    );
    const counts = sent.reduce<Record<number, number>>((c, r) => ({ ...c, [r.statusCode]: (c[r.statusCode] ?? 0) + 1 }), {});
    // AUTH_MAX_FAILURES = 3.
    expect(counts).toEqual({ 401: 3, 429: 27 });
    // A right token is not counted as a failure: it does not use up the budget.
    for (let i = 0; i < 5; i++) expect((await gateways[0].app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: `Y${i}` }, remoteAddress: "10.5.0.2" })).statusCode).toBe(201);
  });

  it("lets a key go when its window ends, starts a new window, and prunes expired keys as failures arrive", async () => {
    const limiter = new FailureLimiter(gateways[0].db, 1);
    const brake = { key: "test ip:10.3.0.1", maxFailures: 2 };
    await limiter.fail([brake.key]);
    await limiter.fail([brake.key]);
    expect(await limiter.retryAfter([brake])).toBe(1);
    await eventually(async () => (await limiter.retryAfter([brake])) === 0);
    // A failure after the window counts from one again.
    await limiter.fail([brake.key]);
    expect(await limiter.retryAfter([brake])).toBe(0);
    await limiter.fail([brake.key]);
    expect(await limiter.retryAfter([brake])).toBe(1);
    // Once expired, the key's row is deleted by the next failure of another key.
    await eventually(async () => (await limiter.retryAfter([brake])) === 0);
    await limiter.fail(["test ip:10.3.0.2"]);
    expect(await gateways[0].db("auth_failures").where({ key: brake.key }).first()).toBeUndefined();
  });
});

describe("/auth with its database down", () => {
  it("answers 503 with Retry-After to a wrong key, neither 500 nor an unbraked 401", async () => {
    const database = await createTestDatabase();
    const proxy = await freezableProxy(database.url);
    const gw = await buildGateway(testGatewayDeps(proxy.url, { dbAcquireTimeoutMs: 500, dbStatementTimeoutMs: 500 }));
    try {
      const account = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
      await proxy.close(); // pooled connections drop, new ones are refused
      for (let i = 0; i < 5; i++) {
        const res = await auth(gw, account.accountID, `${account.apiKeyId}.wrong`, "10.4.0.1");
        expect([res.statusCode, res.json().message]).toEqual([503, "a service is unavailable, try again"]);
        expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      }
    } finally {
      await gw.close();
      await database.drop();
    }
  });
});
