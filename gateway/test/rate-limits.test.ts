import { databaseForFile, eventually } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt } from "./services";
import { countingInventory } from "./counting-inventory";

const admin = { authorization: `Bearer ${ADMIN}` };

/** An account with these rate limits, and a token of it. */
async function account(gw: Gateway, limits?: { rateLimitPerSecond: number; rateLimitBurst: number }) {
  const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
  if (limits) {
    const put = await gw.app.inject({ method: "PUT", url: `/admin/v1/accounts/${created.accountID}/settings`, headers: admin, payload: limits });
    expect([put.statusCode, put.json().rateLimitBurst]).toEqual([200, limits.rateLimitBurst]);
  }
  const auth = await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey } });
  return auth.json().accessToken as string;
}

describe("per-account rate limits (real Postgres, shared by every gateway)", () => {
  const database = databaseForFile();
  let inventory: Awaited<ReturnType<typeof countingInventory>>;
  let gw: Gateway;
  let replica: Gateway;

  beforeAll(async () => {
    inventory = await countingInventory();
    const deps = testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url } });
    gw = await buildGateway(deps);
    replica = await buildGateway(deps);
  });
  afterAll(async () => {
    await replica?.close();
    await gw?.close();
    await inventory?.close();
  });

  const list = (on: Gateway, token: string) => on.app.inject({ method: "GET", url: "/v2/api/warehouses", headers: { authorization: `Bearer ${token}` } });

  it("answers RateLimit-Policy and RateLimit on every answer: default 100 per second, bursts of 6000", async () => {
    const token = await account(gw);
    const res = await list(gw, token);
    expect(res.statusCode).toBe(200);
    expect(res.headers["ratelimit-policy"]).toBe('"account";q=6000;w=60');
    expect(res.headers["ratelimit"]).toMatch(/^"account";r=5999;t=[01]$/);
    // A 4xx of the account carries them too (the bucket refills 100 a second meanwhile, up to its size).
    const bad = await gw.app.inject({ method: "GET", url: "/v2/api/warehouses?pageSize=0", headers: { authorization: `Bearer ${token}` } });
    expect([bad.statusCode, bad.headers["ratelimit"]]).toEqual([400, expect.stringMatching(/^"account";r=599[89];/)]);
  });

  it("costs a write 1 per item, at least 5 and at most 1000 (the largest batch)", async () => {
    const token = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 5000 });
    const post = (n: number) =>
      gw.app.inject({
        method: "POST",
        url: "/v2/api/warehouses",
        headers: { authorization: `Bearer ${token}` },
        payload: Array.from({ length: n }, (_, i) => ({ externalId: `W${i}`, name: "W" })),
      });
    expect((await post(1)).headers["ratelimit"]).toMatch(/^"account";r=4995;/);
    expect((await post(20)).headers["ratelimit"]).toMatch(/^"account";r=497[56];/);
    const tooMany = await post(1001);
    expect([tooMany.statusCode, tooMany.headers["ratelimit"]]).toEqual([400, expect.stringMatching(/^"account";r=39(7[5-9]|8\d);/)]);
    // Items that are not a batch's elements: the keys of a price deletion, a mapping table's values.
    const headers = { authorization: `Bearer ${token}` };
    const keys = Array.from({ length: 30 }, (_, i) => `K${i}`);
    const deletePrices = await gw.app.inject({ method: "DELETE", url: "/v2/api/prices/batch", headers, payload: { listExternalID: "L", Keys: keys } });
    const mappingValues = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`v${i}`, `w${i}`]));
    const mapping = await gw.app.inject({ method: "PUT", url: "/v2/api/mappingtables/color?mappingType=products", headers, payload: { mappingValues } });
    const remaining = (res: { headers: Record<string, unknown> }) => Number(/r=(\d+)/.exec(String(res.headers["ratelimit"]))![1]);
    // 30 and 40 tokens (the bucket refills 1 a second meanwhile).
    expect(remaining(mapping) - remaining(tooMany)).toBeGreaterThanOrEqual(-70);
    expect(remaining(mapping) - remaining(tooMany)).toBeLessThanOrEqual(-68);
    expect(remaining(deletePrices) - remaining(tooMany)).toBeGreaterThanOrEqual(-30);
    expect(remaining(deletePrices) - remaining(tooMany)).toBeLessThanOrEqual(-29);
  });

  it("counts the lines nested in a write as its items: a purchase order's items and deliveries, a transaction's items and statements, up to 1000", async () => {
    const token = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 5000 });
    const headers = { authorization: `Bearer ${token}` };
    const remaining = (res: { headers: Record<string, unknown> }) => Number(/r=(\d+)/.exec(String(res.headers["ratelimit"]))![1]);
    const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ externalRowID: String(i), key: "K", quantity: 1 }));
    // The orders service is not running: each answer is a 503, after its cost was spent.
    const first = await gw.app.inject({ method: "GET", url: "/v2/api/warehouses", headers });
    const order = await gw.app.inject({ method: "POST", url: "/v2/api/purchaseorders", headers, payload: { externalPONo: "PO-1", items: [...lines(299), { ...lines(1)[0], deliveries: Array.from({ length: 20 }, () => ({ quantity: 1 })) }] } });
    const batch = await gw.app.inject({ method: "POST", url: "/v2/api/purchaseorders/batch", headers, payload: [{ externalPONo: "PO-2", items: lines(200) }, { externalPONo: "PO-3", items: lines(100) }] });
    const transaction = await gw.app.inject({ method: "POST", url: "/v2/api/transactions", headers, payload: { externalTransactionID: "T", items: lines(40), statements: lines(10) } });
    const huge = await gw.app.inject({ method: "POST", url: "/v2/api/purchaseorders", headers, payload: { externalPONo: "PO-4", items: lines(10_000) } });
    // 320, 302, 50 and 1000 tokens; the bucket refills 1 a second meanwhile.
    const spent = [order, batch, transaction, huge].map((res, i, all) => remaining(i ? all[i - 1] : first) - remaining(res));
    const costs = [320, 302, 50, 1000];
    expect(spent.map((n, i) => (n <= costs[i] && n >= costs[i] - 5 ? costs[i] : n))).toEqual(costs);
  });

  it("answers 429 with Retry-After over the limit, counted across gateway replicas, and never slows another account", async () => {
    const limited = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 10 });
    const other = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 1000 });
    const started = Date.now();
    // Spent on two gateways at once: one bucket.
    const spent = await Promise.all(Array.from({ length: 10 }, (_, i) => list(i % 2 ? replica : gw, limited)));
    expect(spent.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    // Over it, on either gateway: 429 (a second's refill allows one more per second taken so far).
    const over = await Promise.all(Array.from({ length: 6 }, (_, i) => list(i % 2 ? replica : gw, limited)));
    const refilled = Math.floor((Date.now() - started) / 1000);
    const refused = over.filter((r) => r.statusCode === 429);
    expect(refused.length).toBeGreaterThanOrEqual(6 - refilled);
    for (const res of refused) {
      expect(res.json()).toMatchObject({ statusCode: 429, error: "Too Many Requests" });
      expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      expect(res.headers["ratelimit"]).toMatch(/^"account";r=0;t=[1-9]/);
    }
    // Meanwhile another account's requests all pass.
    const theirs = await Promise.all(Array.from({ length: 50 }, (_, i) => list(i % 2 ? replica : gw, other)));
    expect(theirs.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
  });

  it("answers the headers on answers refused before the route too (404, 405, 413, 415, malformed JSON, the router's malformed URL and over-long parameter), each costing a read", async () => {
    const token = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 5000 });
    const authorization = `Bearer ${token}`;
    const refusedBeforeRoute = [
      { method: "GET", url: "/v2/api/no-such-route", headers: { authorization } },
      { method: "PATCH", url: "/v2/api/warehouses", headers: { authorization } },
      { method: "POST", url: "/v2/api/warehouses", headers: { authorization, "content-type": "application/json" }, payload: Buffer.alloc(10 * 1024 * 1024 + 1, 32) },
      { method: "POST", url: "/v2/api/warehouses", headers: { authorization, "content-type": "text/plain" }, payload: "W1" },
      { method: "POST", url: "/v2/api/warehouses", headers: { authorization, "content-type": "application/json" }, payload: '[{"externalId": ' },
      // Refused by the router itself, where no hook runs: a malformed URL, a path parameter over its limit.
      { method: "GET", url: "/v2/api/warehouses/%E0%A4%A", headers: { authorization } },
      { method: "GET", url: `/v2/api/warehouses/${"x".repeat(6000)}`, headers: { authorization } },
    ] as const;
    const answers: Array<[number, string | undefined, string | undefined]> = [];
    for (const request of refusedBeforeRoute) {
      const res = await gw.app.inject(request);
      answers.push([res.statusCode, res.headers["ratelimit-policy"] as string | undefined, res.headers["ratelimit"] as string | undefined]);
      // Every answer's own headers too, the router's refusals included.
      expect([request.url.slice(0, 40), res.headers["x-request-id"], res.headers["x-content-type-options"], res.headers["cache-control"]]).toEqual([
        request.url.slice(0, 40),
        expect.any(String),
        "nosniff",
        "no-store",
      ]);
    }
    // One token each (the bucket refills 1 a second meanwhile).
    expect(answers).toEqual(
      [404, 405, 413, 415, 400, 400, 414].map((status, i) => [status, '"account";q=5000;w=5000', expect.stringMatching(new RegExp(`^"account";r=(${4999 - i}|${5000 - i});`))]),
    );
  });

  it("refuses a limited account's bad bodies with 429 before reading them, once it knows the bucket is spent", async () => {
    const token = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 3 });
    const malformed = (contentType = "application/json") =>
      gw.app.inject({ method: "POST", url: "/v2/api/warehouses", headers: { authorization: `Bearer ${token}`, "content-type": contentType }, payload: "[{" });
    const answers: Array<{ status: number; rateLimit: string; retryAfter?: string }> = [];
    // The bucket holds 3 and refills 1 a second: a few more than that are refused.
    while (answers.length < 20 && answers.at(-1)?.status !== 429) {
      const res = await malformed();
      answers.push({ status: res.statusCode, rateLimit: String(res.headers["ratelimit"]), retryAfter: res.headers["retry-after"] as string | undefined });
    }
    const first429 = answers.findIndex((a) => a.status === 429);
    expect(first429).toBeGreaterThanOrEqual(3);
    // Every answer before it was the 400 it is, with the headers; the last of them found the bucket empty.
    expect(answers.slice(0, first429).map((a) => a.status)).toEqual(Array(first429).fill(400));
    expect(answers[first429 - 1].rateLimit).toMatch(/^"account";r=0;t=[1-9]/);
    expect(answers[first429]).toEqual({ status: 429, rateLimit: expect.stringMatching(/^"account";r=0;t=[1-9]/), retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    // Refused before its Content-Type is looked at: a 429, not the 415 it would be.
    const wrongType = await malformed("text/plain");
    expect([wrongType.statusCode, wrongType.headers["retry-after"]]).toEqual([429, expect.any(String)]);
  });

  it("answers a 401 without RateLimit headers: without a valid token there is no account to count", async () => {
    const token = await account(gw, { rateLimitPerSecond: 1, rateLimitBurst: 5000 });
    const forged = `${token.slice(0, -4)}AAAA`;
    for (const request of [
      { method: "GET" as const, url: "/v2/api/warehouses", headers: {} },
      { method: "GET" as const, url: "/v2/api/warehouses", headers: { authorization: `Bearer ${forged}` } },
      { method: "GET" as const, url: "/v2/api/no-such-route", headers: { authorization: `Bearer ${forged}` } },
    ]) {
      const res = await gw.app.inject(request);
      expect([res.statusCode, res.headers["ratelimit"], res.headers["ratelimit-policy"]]).toEqual([request.url.endsWith("warehouses") ? 401 : 404, undefined, undefined]);
    }
    // The account's bucket was not touched by them.
    expect((await list(gw, token)).headers["ratelimit"]).toMatch(/^"account";r=4999;/);
  });

  it("lets requests through when its store fails (fail open), logged and counted", async () => {
    const token = await account(gw);
    const failures = async () => Number(/^gateway_rate_limiter_failures_total\{[^}]*\} (\d+)/m.exec((await (await fetch(`${gw.metricsUrl}/metrics`)).text()))?.[1] ?? 0);
    const before = await failures();
    await gw.db.raw("ALTER TABLE rate_limit_buckets RENAME TO rate_limit_buckets_away");
    try {
      const res = await list(gw, token);
      expect([res.statusCode, res.headers["ratelimit"]]).toEqual([200, undefined]);
    } finally {
      await gw.db.raw("ALTER TABLE rate_limit_buckets_away RENAME TO rate_limit_buckets");
    }
    // A scrape's text holds for a second (libs/telemetry sharedRender).
    await eventually(async () => (await failures()) === before + 1, 5_000, "the failure counted");
    expect((await list(gw, token)).headers["ratelimit"]).toBeDefined();
  });

  it("spends on at most 2 connections of its own, out of the gateway's DB_POOL_MAX, closed with the gateway", async () => {
    const limiterConnections = async () =>
      Number((await gw.db.raw("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'gateway-rate-limiter'")).rows[0].n);
    // The other gateways' limiter connections, ended by the server: their pools drop them and open new ones.
    await gw.db.raw("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'gateway-rate-limiter'");
    await eventually(async () => (await limiterConnections()) === 0, 5_000, "the limiter connections to end");
    const small = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url }, dbPoolMax: 4 }));
    try {
      const token = await account(small);
      const answers = await Promise.all(Array.from({ length: 20 }, () => list(small, token)));
      expect(answers.map((r) => [r.statusCode, r.headers["ratelimit"] !== undefined])).toEqual(Array(20).fill([200, true]));
      expect(await limiterConnections()).toBeGreaterThanOrEqual(1);
      expect(await limiterConnections()).toBeLessThanOrEqual(2);
    } finally {
      await small.close();
    }
    await eventually(async () => (await limiterConnections()) === 0, 5_000, "the closed gateway's limiter connections to end");
    expect((await list(gw, await account(gw))).headers["ratelimit"]).toBeDefined();
  });
});
