// Issue 36 item 3: what the per-account rate limiter costs a request, against the gateway hop.
// The hop per request is the gateway's time over the direct Connect call of the same service call
// (GET /events?pageSize=10, 10 in flight, as bench/gateway-hop.mjs); the limiter's is
// RateLimiter.spend as the gateway calls it (gateway/src/accounts/rate-limiter.ts: its own pool of
// 2 connections, plain pg, a named prepared statement), run alone on the platform's database with 10 in flight on one account (the worst case: every
// request waits for the row lock); for comparison its statement (LEASE) through plain pg, unnamed,
// on a pool of 10.
// Target: limiter <= 5 % of the hop.
// Usage: node bench/rate-limiter.mjs [--seconds S] [--rounds N]
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";
import pg from "pg";
import { ADMIN, arg, median, startPlatform, requestsPerSecond } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 3));
const ROUNDS = Number(arg("--rounds", 3));
const CONCURRENCY = 10;

const out = join(process.cwd(), "dist/bench/rate-limiter-client.cjs");
await build({
  stdin: { contents: 'export { directClients } from "./bench/hop-client"; export { LEASE, RateLimiter, rateLimiterPoolMax } from "./gateway/src/accounts/rate-limiter";', resolveDir: process.cwd(), loader: "ts" },
  outfile: out,
  bundle: true,
  platform: "node",
  format: "cjs",
  packages: "external",
  tsconfig: "tsconfig.base.json",
  logLevel: "warning",
});
const { directClients, LEASE, RateLimiter, rateLimiterPoolMax } = createRequire(import.meta.url)(out);
const { Registry } = createRequire(import.meta.url)("prom-client");
const pino = createRequire(import.meta.url)("pino");

const platform = await startPlatform();
const pool = new pg.Pool({ connectionString: platform.databaseUrl, max: CONCURRENCY, options: "-c search_path=gateway" });
try {
  const account = await platform.signUp("Limits");
  // Limits no bench reaches: every request is counted, none refused.
  await platform.call("PUT", `/admin/v1/accounts/${account.accountId}/settings`, { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 }, ADMIN);
  const internalToken = JSON.parse(readFileSync(join(platform.dataDir, "secrets.json"), "utf8")).INTERNAL_TOKEN;
  const direct = directClients(platform.ready.services, internalToken, { accountId: account.accountId, apiKeyId: account.apiKeyId });

  const rate = (request) => requestsPerSecond(request, CONCURRENCY, SECONDS);
  const gateway = async () => {
    const res = await fetch(`${platform.base}/v2/api/events?pageSize=10`, { headers: { authorization: `Bearer ${account.token}`, "accept-encoding": "identity" } });
    if (res.status !== 200) throw new Error(`events: ${res.status}`);
    await res.arrayBuffer();
  };
  const statement = () => pool.query(LEASE, [account.accountId, 1, 0]);
  // As the gateway makes it with the default DB_POOL_MAX (20).
  const rateLimiter = new RateLimiter(
    { url: platform.databaseUrl, schema: "gateway", poolMax: rateLimiterPoolMax(20), acquireTimeoutMs: 5_000, statementTimeoutMs: 9_000 },
    pino({ level: "silent" }),
    new Registry(),
  );
  const limiter = async () => {
    const decision = await rateLimiter.spend(account.accountId, 1);
    if (!decision?.allowed) throw new Error("the limiter refused or failed");
  };
  const g = [];
  const d = [];
  const l = [];
  const s = [];
  await rate(gateway);
  await rate(() => direct.eventsPage());
  await rate(limiter);
  await rate(statement);
  for (let r = 0; r < ROUNDS; r++) {
    g.push(await rate(gateway));
    d.push(await rate(() => direct.eventsPage()));
    l.push(await rate(limiter));
    s.push(await rate(statement));
  }
  await rateLimiter.close();
  const perRequestMs = (rps) => (1000 * CONCURRENCY) / rps;
  const hopMs = perRequestMs(median(g)) - perRequestMs(median(d));
  const limiterMs = perRequestMs(median(l));
  const result = {
    gatewayRps: Math.round(median(g)),
    directRps: Math.round(median(d)),
    limiterSpendsPerSecond: Math.round(median(l)),
    statementAlonePerRequestMs: +perRequestMs(median(s)).toFixed(3),
    hopMsPerRequest: +hopMs.toFixed(3),
    limiterMsPerRequest: +limiterMs.toFixed(3),
    share: +(limiterMs / hopMs).toFixed(3),
    target: 0.05,
  };
  console.log(
    `gateway ${result.gatewayRps} req/s, direct ${result.directRps} req/s: hop ${result.hopMsPerRequest} ms per request; ` +
      `limiter ${result.limiterSpendsPerSecond} spends/s: ${result.limiterMsPerRequest} ms -> ${(result.share * 100).toFixed(1)} % of the hop (target <= 5 %); ` +
      `its statement through plain pg: ${result.statementAlonePerRequestMs} ms -> ${((result.statementAlonePerRequestMs / hopMs) * 100).toFixed(1)} %`,
  );
  console.log(JSON.stringify({ rateLimiter: result }));
} finally {
  await pool.end();
  await platform.stop();
}
