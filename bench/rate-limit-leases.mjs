// Issue 36 item 3: what the per-account rate limiter costs a request, against the gateway hop.
// The hop per request is the gateway's time over the direct Connect call of the same service call
// (GET /events?pageSize=10, 10 in flight, as bench/gateway-hop.mjs), on an account whose lease is
// 100,000 tokens (limits no bench reaches: the limiter's statement once per 100,000 requests, so the
// hop is nearly without it). The limiter's is RateLimiter.spend as the gateway calls it
// (gateway/src/limits/rate-limiter.ts: its own pool of 2 connections, plain pg, a named prepared
// statement), run alone on the platform's database with 10 in flight on one account, whose
// settings give it the default account's lease of 10 tokens (100 a second; a bucket of 100,000,000
// that the bench never empties): one statement per 10 spends, which the 10 in flight wait for
// together. For comparison, in the same run: an account whose leases are exactly the cost (5 a
// second: one statement per request, as near an empty bucket and as before leases), its statement
// (LEASE) alone through plain pg, unnamed, on a pool of 10, and the gateway's own requests per
// second on the lease-of-10 and one-statement-per-request accounts against the hop's account.
// Target: limiter <= 5 % of the hop.
// Usage: node bench/rate-limit-leases.mjs [--seconds S] [--rounds N]
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
  stdin: { contents: 'export { directClients } from "./bench/hop-client"; export { LEASE, RateLimiter, rateLimiterPoolMax } from "./gateway/src/limits/rate-limiter";', resolveDir: process.cwd(), loader: "ts" },
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
  // signUp's limits no bench reaches: leases of 100,000 tokens.
  const account = await platform.signUp("Limits");
  const leaseOfTen = await platform.signUp("Lease of 10");
  await platform.call("PUT", `/admin/v1/accounts/${leaseOfTen.accountId}/settings`, { rateLimitPerSecond: 100, rateLimitBurst: 100_000_000 }, ADMIN);
  const exact = await platform.signUp("Lease of the cost");
  await platform.call("PUT", `/admin/v1/accounts/${exact.accountId}/settings`, { rateLimitPerSecond: 5, rateLimitBurst: 100_000_000 }, ADMIN);
  const internalToken = JSON.parse(readFileSync(join(platform.dataDir, "secrets.json"), "utf8")).INTERNAL_TOKEN;
  const direct = directClients(platform.ready.services, internalToken, { accountId: account.accountId, apiKeyId: account.apiKeyId });

  const rate = (request) => requestsPerSecond(request, CONCURRENCY, SECONDS);
  const gateway = (caller) => async () => {
    const res = await fetch(`${platform.base}/v2/api/events?pageSize=10`, { headers: { authorization: `Bearer ${caller.token}`, "accept-encoding": "identity" } });
    if (res.status !== 200) throw new Error(`events: ${res.status}`);
    await res.arrayBuffer();
  };
  const statement = () => pool.query(LEASE, [exact.accountId, 1, 0]);
  // As the gateway makes it with the default DB_POOL_MAX (20).
  const rateLimiter = new RateLimiter(
    { url: platform.databaseUrl, schema: "gateway", poolMax: rateLimiterPoolMax(20), acquireTimeoutMs: 5_000, statementTimeoutMs: 9_000 },
    pino({ level: "silent" }),
    new Registry(),
  );
  const limiter = (caller) => async () => {
    const decision = await rateLimiter.spend(caller.accountId, 1);
    if (!decision?.allowed) throw new Error("the limiter refused or failed");
  };
  const runs = {
    gateway: gateway(account),
    direct: () => direct.eventsPage(),
    gatewayLeaseOfTen: gateway(leaseOfTen),
    gatewayExact: gateway(exact),
    limiter: limiter(leaseOfTen),
    limiterExact: limiter(exact),
    statement,
  };
  const rps = Object.fromEntries(Object.keys(runs).map((name) => [name, []]));
  for (const run of Object.values(runs)) await rate(run);
  for (let r = 0; r < ROUNDS; r++) for (const [name, run] of Object.entries(runs)) rps[name].push(await rate(run));
  await rateLimiter.close();
  const perRequestMs = (name) => (1000 * CONCURRENCY) / median(rps[name]);
  const hopMs = perRequestMs("gateway") - perRequestMs("direct");
  const share = (ms) => +(ms / hopMs).toFixed(3);
  const result = {
    gatewayRps: Math.round(median(rps.gateway)),
    directRps: Math.round(median(rps.direct)),
    hopMsPerRequest: +hopMs.toFixed(3),
    limiterSpendsPerSecond: Math.round(median(rps.limiter)),
    limiterMsPerRequest: +perRequestMs("limiter").toFixed(3),
    share: share(perRequestMs("limiter")),
    exactSpendsPerSecond: Math.round(median(rps.limiterExact)),
    exactMsPerRequest: +perRequestMs("limiterExact").toFixed(3),
    exactShare: share(perRequestMs("limiterExact")),
    statementAlonePerRequestMs: +perRequestMs("statement").toFixed(3),
    gatewayLeaseOfTenRps: Math.round(median(rps.gatewayLeaseOfTen)),
    gatewayExactRps: Math.round(median(rps.gatewayExact)),
    // The gateway's own time per request over the hop's account's: the limiter inside the gateway.
    inGatewayShare: share(perRequestMs("gatewayLeaseOfTen") - perRequestMs("gateway")),
    inGatewayExactShare: share(perRequestMs("gatewayExact") - perRequestMs("gateway")),
    target: 0.05,
  };
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  console.log(
    `gateway ${result.gatewayRps} req/s, direct ${result.directRps} req/s: hop ${result.hopMsPerRequest} ms per request; ` +
      `limiter (lease of 10) ${result.limiterSpendsPerSecond} spends/s: ${result.limiterMsPerRequest} ms -> ${pct(result.share)} of the hop (target <= 5 %); ` +
      `one statement per request ${result.exactSpendsPerSecond} spends/s: ${result.exactMsPerRequest} ms -> ${pct(result.exactShare)}; ` +
      `the statement through plain pg: ${result.statementAlonePerRequestMs} ms -> ${pct(result.statementAlonePerRequestMs / hopMs)}; ` +
      `gateway on a lease of 10 ${result.gatewayLeaseOfTenRps} req/s (${pct(result.inGatewayShare)} of the hop), on one statement per request ${result.gatewayExactRps} req/s (${pct(result.inGatewayExactShare)})`,
  );
  console.log(JSON.stringify({ rateLimiter: result, rps }));
} finally {
  await pool.end();
  await platform.stop();
}
