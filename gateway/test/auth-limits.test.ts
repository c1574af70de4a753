import { createTestDatabase, databaseForFile, eventually, freezableProxy } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { FailureLimiter } from "../src/limits/failure-limiter";
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

  it("answers 200 to 30 right keys sent at once from one address, which leave no failure behind", async () => {
    const [one] = gateways;
    const account = (await one.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Burst" } })).json();
    const burst = await Promise.all(Array.from({ length: 30 }, () => auth(one, account.accountID, account.apiKey, "10.6.0.1")));
    expect(burst.map((r) => r.statusCode)).toEqual(Array(30).fill(200));
    // Not braked: the limit's worth of wrong keys are still checked (401), then the brake holds (429).
    const wrong = `${account.apiKeyId}.wrong`;
    for (let i = 0; i < 3; i++) expect((await auth(one, account.accountID, wrong, "10.6.0.1")).statusCode).toBe(401);
    expect((await auth(one, account.accountID, account.apiKey, "10.6.0.1")).statusCode).toBe(429);
    // Right keys at once on both gateways too.
    const spread = await Promise.all(Array.from({ length: 30 }, (_, n) => auth(gateways[n % 2], account.accountID, account.apiKey, "10.6.0.2")));
    expect(spread.map((r) => r.statusCode)).toEqual(Array(30).fill(200));
    expect((await auth(gateways[1], account.accountID, account.apiKey, "10.6.0.2")).statusCode).toBe(200);
  });

  it("answers every malformed credential as a wrong key (401, same body), counted by the brake like one", async () => {
    const [one] = gateways;
    const account = (await one.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Malformed" } })).json();
    const post = (payload: unknown, ip: string) => one.app.inject({ method: "POST", url: "/v2/api/auth", payload: payload as object, remoteAddress: ip });
    const wrong = await post({ accountID: account.accountID, apiKey: `${account.apiKeyId}.wrong` }, "10.7.0.1");
    expect(wrong.statusCode).toBe(401);
    const malformed: [string, unknown][] = [
      ["a NUL in accountID", { accountID: `${account.accountID}\u0000`, apiKey: account.apiKey }],
      ["a NUL in apiKey", { accountID: account.accountID, apiKey: `${account.apiKeyId}\u0000.x` }],
      ["an over-long accountID", { accountID: "a".repeat(10_000), apiKey: account.apiKey }],
      ["an over-long apiKey", { accountID: account.accountID, apiKey: "k".repeat(10_000) }],
      ["a number", { accountID: 12, apiKey: account.apiKey }],
      ["an object", { accountID: account.accountID, apiKey: { key: account.apiKey } }],
      ["an empty accountID", { accountID: "", apiKey: account.apiKey }],
    ];
    for (const [n, [what, payload]] of malformed.entries()) {
      const res = await post(payload, `10.7.1.${n}`);
      expect([what, res.statusCode, res.json()]).toEqual([what, 401, wrong.json()]);
    }
    // A lone surrogate, refused before any route looks at a body (http/hostile-input.ts), is a wrong key too.
    const surrogate = await one.app.inject({
      method: "POST",
      url: "/v2/api/auth",
      headers: { "content-type": "application/json" },
      payload: `{"accountID": "${account.accountID}", "apiKey": "\\ud800${account.apiKeyId}"}`,
      remoteAddress: "10.7.2.1",
    });
    expect([surrogate.statusCode, surrogate.json()]).toEqual([401, wrong.json()]);
    // Counted like wrong keys: after the limit's worth of them the next is refused unchecked.
    for (let i = 0; i < 3; i++) expect((await post({ accountID: `x\u0000${i}`, apiKey: account.apiKey }, "10.7.3.1")).statusCode).toBe(401);
    expect((await post({ accountID: "x\u0000", apiKey: account.apiKey }, "10.7.3.1")).statusCode).toBe(429);
    // A body that is not an object of the two fields stays a 400 naming what is wrong.
    const extra = await post({ accountID: account.accountID, apiKey: account.apiKey, admin: true }, "10.7.4.1");
    expect([extra.statusCode, extra.json().message]).toEqual([400, expect.stringContaining("admin")]);
    const missing = await post({ accountID: account.accountID }, "10.7.4.1");
    expect([missing.statusCode, missing.json().details]).toEqual([400, [expect.objectContaining({ path: "apiKey" })]]);
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
