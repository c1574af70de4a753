import pino from "pino";
import { Registry } from "prom-client";
import { databaseForFile, eventually } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { LEASE_MS, RateLimiter, type RateDecision } from "../src/limits/rate-limiter";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";

const admin = { authorization: `Bearer ${ADMIN}` };

describe("rate limiter leases: each gateway spends tokens leased from the shared bucket (real Postgres)", () => {
  const database = databaseForFile();
  let gw: Gateway;

  beforeAll(async () => {
    gw = await buildGateway(testGatewayDeps(database.url));
    database.atClose(() => gw.close());
  });

  /** A gateway's limiter on the file's database; its lease clock is `clock.ms` (real time when not given). */
  function limiter(clock?: { ms: number }, registry = new Registry(), logger = pino({ level: "silent" })) {
    const made = new RateLimiter(
      { url: database.url, schema: "gateway", poolMax: 2, acquireTimeoutMs: 5_000, statementTimeoutMs: 5_000 },
      logger,
      registry,
      clock ? () => clock.ms : undefined,
    );
    database.atClose(() => made.close());
    return made;
  }

  async function account(limits: { rateLimitPerSecond: number; rateLimitBurst: number }): Promise<string> {
    const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    await setLimits(created.accountID, limits);
    return created.accountID;
  }
  async function setLimits(accountId: string, limits: { rateLimitPerSecond: number; rateLimitBurst: number }) {
    const put = await gw.app.inject({ method: "PUT", url: `/admin/v1/accounts/${accountId}/settings`, headers: admin, payload: limits });
    expect(put.statusCode).toBe(200);
  }
  /** The database's clock, in seconds: the buckets refill by it. */
  const databaseSeconds = async () => Number((await gw.db.raw("SELECT extract(epoch FROM clock_timestamp()) AS s")).rows[0].s);
  /** The shared bucket's tokens. */
  const sharedTokens = async (accountId: string) => Number((await gw.db.raw("SELECT tokens FROM rate_limit_buckets WHERE account_id = ?", [accountId])).rows[0].tokens);
  /** The shared bucket at `tokens` (unchanged when undefined), not refilled before its next statement (its last update in an hour). */
  const freeze = (accountId: string, tokens?: number) =>
    gw.db.raw("UPDATE rate_limit_buckets SET tokens = coalesce(?, tokens), updated_at = now() + interval '1 hour' WHERE account_id = ?", [tokens ?? null, accountId]);
  const summary = (d: RateDecision | undefined) => d && { allowed: d.allowed, remaining: d.remaining, burst: d.burst, perSecond: d.perSecond };

  // Default-like settings: leases of 10 tokens (a tenth of a second of refill) while the bucket holds 100.
  const leasing = { rateLimitPerSecond: 100, rateLimitBurst: 5000 };

  it("takes one lease for the account's simultaneous requests in one gateway, and spends it there", async () => {
    const id = await account(leasing);
    const gateway = limiter();
    const decisions = await Promise.all(Array.from({ length: 10 }, () => gateway.spend(id, 1)));
    expect(decisions.every((d) => d?.allowed)).toBe(true);
    expect(decisions.map((d) => d!.remaining).sort((a, b) => b - a)).toEqual([4999, 4998, 4997, 4996, 4995, 4994, 4993, 4992, 4991, 4990]);
    // One statement took 10 tokens from the shared bucket.
    expect(await sharedTokens(id)).toBe(4990);
  });

  it("never grants more than the bucket and its refill in total, whatever the gateways", async () => {
    const burst = 1000;
    const perSecond = 100;
    const id = await account({ rateLimitPerSecond: perSecond, rateLimitBurst: burst });
    const gateways = [limiter(), limiter()];
    const started = await databaseSeconds();
    const decisions: Array<RateDecision | undefined> = [];
    // Each gateway 10 requests at a time, 1500 in all: more than the bucket holds.
    await Promise.all(
      gateways.flatMap((gateway) =>
        Array.from({ length: 10 }, async () => {
          for (let i = 0; i < 150; i++) decisions.push(await gateway.spend(id, 1));
        }),
      ),
    );
    const seconds = (await databaseSeconds()) - started;
    const granted = decisions.filter((d) => d?.allowed).length;
    expect(decisions.every((d) => d !== undefined)).toBe(true);
    expect(granted).toBeLessThanOrEqual(burst + perSecond * seconds);
    // Drained: refused meanwhile, and no more lost than the two gateways' last leases.
    expect(decisions.some((d) => !d!.allowed)).toBe(true);
    expect(granted).toBeGreaterThanOrEqual(burst - 2 * 10);
  });

  it("grants the bucket and its refill, no fewer, to gateways asking for more all along: no token lost between leases", async () => {
    const burst = 1000;
    const perSecond = 100;
    const cost = 5;
    const id = await account({ rateLimitPerSecond: perSecond, rateLimitBurst: burst });
    const gateways = [limiter(), limiter()];
    const started = await databaseSeconds();
    let granted = 0;
    let more = true;
    // Each gateway 5 requests at a time, each costing 5, for 2 s: far more than the refill, so the
    // bucket is drained at once and every token refilled after is asked for.
    const asking = gateways.flatMap((gateway) =>
      Array.from({ length: 5 }, async () => {
        while (more) {
          if ((await gateway.spend(id, cost))?.allowed) granted += cost;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }),
    );
    await eventually(async () => (await databaseSeconds()) - started >= 2, 30_000, "2 s of asking");
    more = false;
    await Promise.all(asking);
    const seconds = (await databaseSeconds()) - started;
    // At most each gateway's last lease and one request's cost short (the test above bounds it from above).
    expect(granted).toBeGreaterThanOrEqual(burst + perSecond * seconds - 2 * 10 - 2 * cost);
  });

  it("does not spend a lease past its expiry: the next request takes a new one, giving back what was left", async () => {
    const id = await account(leasing);
    const clock = { ms: 0 };
    const gateway = limiter(clock);
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 4999, burst: 5000, perSecond: 100 });
    // Another gateway spends the shared bucket meanwhile: what this one holds is its own.
    await freeze(id, 0);
    clock.ms = LEASE_MS - 1;
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 4998, burst: 5000, perSecond: 100 });
    expect(await sharedTokens(id)).toBe(0);
    // Expired: the 8 left go back and the request takes exactly its cost (the bucket is low).
    clock.ms = LEASE_MS;
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 7, burst: 5000, perSecond: 100 });
    expect(await sharedTokens(id)).toBe(7);
  });

  it("applies a settings change at the next lease, at the latest when the lease expires", async () => {
    const id = await account(leasing);
    const clock = { ms: 0 };
    const gateway = limiter(clock);
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 4999, burst: 5000, perSecond: 100 });
    await setLimits(id, { rateLimitPerSecond: 1, rateLimitBurst: 10 });
    clock.ms = LEASE_MS - 1;
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 4998, burst: 5000, perSecond: 100 });
    clock.ms = LEASE_MS;
    // The bucket is its new size, and its leases exactly the cost (a tenth of a second of refill is no token).
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 9, burst: 10, perSecond: 1 });
    expect(summary(await gateway.spend(id, 1))).toEqual({ allowed: true, remaining: 8, burst: 10, perSecond: 1 });
    expect(await sharedTokens(id)).toBeLessThan(9);
  });

  it("grants exactly near the empty bucket: leases of the cost, so no gateway is refused while another holds tokens", async () => {
    const id = await account(leasing);
    // Never expiring here: a lease is spent as long as it pays.
    const clock = { ms: 0 };
    const [a, b] = [limiter(clock), limiter(clock)];
    expect((await limiter(clock).spend(id, 1))?.allowed).toBe(true);
    // 12 tokens left (under ten leases of 10), never refilled meanwhile: twelve requests pass, alternating gateways, and no more.
    await freeze(id, 12);
    const answers: Array<[boolean, number]> = [];
    for (let i = 0; i < 14; i++) {
      const d = await (i % 2 ? b : a).spend(id, 1);
      answers.push([d!.allowed, d!.remaining]);
      await freeze(id);
    }
    expect(answers).toEqual([...Array.from({ length: 12 }, (_, i): [boolean, number] => [true, 11 - i]), [false, 0], [false, 0]]);
  });

  it("gives back what a lease has left when it cannot pay the request, in the statement that takes the next", async () => {
    const id = await account(leasing);
    const clock = { ms: 0 };
    const [a, b] = [limiter(clock), limiter(clock)];
    expect(summary(await a.spend(id, 1))).toEqual({ allowed: true, remaining: 4999, burst: 5000, perSecond: 100 });
    await freeze(id, 3);
    // a holds 9, the bucket 3: a write of 10 passes on both.
    expect(summary(await a.spend(id, 10))).toEqual({ allowed: true, remaining: 2, burst: 5000, perSecond: 100 });
    await freeze(id);
    const refused = await b.spend(id, 5);
    expect([refused?.allowed, refused?.remaining, refused?.retryAfter]).toEqual([false, 2, 1]);
    await freeze(id);
    expect(summary(await b.spend(id, 2))).toEqual({ allowed: true, remaining: 0, burst: 5000, perSecond: 100 });
  });

  it("remembers a refusal until the bucket could hold the request: a limited account's flood costs no statements, and another account's spends run", async () => {
    const limited = await account({ rateLimitPerSecond: 1, rateLimitBurst: 10 });
    const other = await account({ rateLimitPerSecond: 1, rateLimitBurst: 1000 });
    const clock = { ms: 0 };
    const registry = new Registry();
    const gateway = limiter(clock, registry);
    const statements = async () => Number(/^gateway_rate_limiter_statements_total (\d+)$/m.exec(await registry.metrics())![1]);
    expect((await gateway.spend(limited, 10))?.allowed).toBe(true);
    await freeze(limited, 0);
    const refused = await gateway.spend(limited, 1);
    expect([refused?.allowed, refused?.retryAfter]).toEqual([false, 1]);
    const before = await statements();
    // 200 of the limited account's requests, and 20 of another's, at once.
    const order: string[] = [];
    const flood = Array.from({ length: 200 }, () => gateway.spend(limited, 1).then((d) => (order.push("limited"), d)));
    const others = Array.from({ length: 20 }, () => gateway.spend(other, 1).then((d) => (order.push("other"), d)));
    const [floodAnswers, otherAnswers] = await Promise.all([Promise.all(flood), Promise.all(others)]);
    expect(floodAnswers.map((d) => [d?.allowed, d?.remaining, d?.retryAfter])).toEqual(Array(200).fill([false, 0, 1]));
    expect(otherAnswers.map((d) => d?.allowed)).toEqual(Array(20).fill(true));
    // The flood ran no statement: the other account's 20 (one at a time per account, each exactly its cost) are all there were.
    expect((await statements()) - before).toBe(20);
    // Refused here at once, none waiting behind a statement of its own.
    expect(order.indexOf("other")).toBe(200);
    // Half a second's refill on this gateway's clock is half a token: still refused here; at a whole one the store is asked.
    clock.ms = 500;
    expect((await gateway.spend(limited, 1))?.allowed).toBe(false);
    expect((await statements()) - before).toBe(20);
    clock.ms = LEASE_MS;
    await freeze(limited, 1);
    expect((await gateway.spend(limited, 1))?.allowed).toBe(true);
    expect((await statements()) - before).toBe(21);
  });

  it("lets the account's requests through when its store fails, each counted, on one statement", async () => {
    const id = await account(leasing);
    const registry = new Registry();
    const logged: string[] = [];
    const gateway = limiter(undefined, registry, pino({ level: "warn" }, { write: (line: string) => logged.push(line) }));
    await gw.db.raw("ALTER TABLE rate_limit_buckets RENAME TO rate_limit_buckets_away");
    try {
      const decisions = await Promise.all(Array.from({ length: 5 }, () => gateway.spend(id, 1)));
      expect(decisions).toEqual(Array(5).fill(undefined));
    } finally {
      await gw.db.raw("ALTER TABLE rate_limit_buckets_away RENAME TO rate_limit_buckets");
    }
    expect(await registry.metrics()).toMatch(/^gateway_rate_limiter_failures_total 5$/m);
    // The others waited for the first one's statement rather than each failing their own.
    expect(logged.filter((line) => line.includes("rate limiter unavailable"))).toHaveLength(1);
    expect((await gateway.spend(id, 1))?.allowed).toBe(true);
  });
});
