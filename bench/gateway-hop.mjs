// Issue 8 item 4: what the gateway costs. Requests per second through the gateway (REST, auth,
// validation, Connect call, JSON answer) against the direct Connect call of the same service
// call, both with 10 requests in flight, alternating rounds in one run.
// Targets: gateway >= 0.75 of direct for GET /products?key=K and GET /events?pageSize=10.
// With --separate the gateway and each service run in processes of their own (on the test
// JetStream), as deployed; by default all share one process (and its one core). With --separate
// it also prints the gateway process's CPU per request (user + system, from /proc; target
// <= 0.5 ms for the events page, <= 0.7 ms for the product by key) and the services' (together).
// Each also with If-None-Match: a stale tag (a 200) and the current one (a 304), against the same
// direct calls.
// `--bare` (with --separate): also the same routes through a bare proxy (bench/bare-gateway.ts: a
// Fastify route making the same Connect calls, nothing else), the floor of any gateway's ratio,
// and through a raw proxy (the same process: node:http and node:http2 forwarding bytes built once),
// the floor of Node's networking alone.
// Usage: node bench/gateway-hop.mjs [--seconds S] [--rounds N] [--separate] [--bare] [--only TEXT]
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";
import { arg, median, startPlatform, startSeparately, requestsPerSecond } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 3));
const ROUNDS = Number(arg("--rounds", 3));
const CONCURRENCY = 10;
// What the client accepts: `identity` measures the hop itself, `gzip, br` adds compression.
const ENCODING = arg("--accept-encoding", "identity");
// Only the cases whose label contains this text, e.g. "If-None-Match".
const ONLY = arg("--only", "");

const out = join(process.cwd(), "dist/bench/hop-client.cjs");
await build({ entryPoints: ["bench/hop-client.ts"], outfile: out, bundle: true, platform: "node", format: "cjs", packages: "external", tsconfig: "tsconfig.base.json", logLevel: "warning" });
const { directClients } = createRequire(import.meta.url)(out);

const separate = process.argv.includes("--separate");
const bare = separate && process.argv.includes("--bare");
const bareOut = join(process.cwd(), "dist/bench/bare-gateway.mjs");
if (bare) await build({ entryPoints: ["bench/bare-gateway.ts"], outfile: bareOut, bundle: true, platform: "node", format: "esm", packages: "external", tsconfig: "tsconfig.base.json", logLevel: "warning" });
const platform = separate ? await startSeparately() : await startPlatform();
const { base } = platform;
/** The bare proxy (--bare), a process of its own beside the gateway. */
let bareProxy;
try {
  const account = await platform.signUp("Hop");
  const token = account.token;
  await platform.call("POST", "/v2/api/products/batch", Array.from({ length: 1000 }, (_, i) => ({ key: `K-${i}`, sku: `S-${i}`, season: "SS27", productName: `P ${i}` })), token);
  for (;;) {
    const res = await fetch(`${base}/v2/api/events?pageSize=1`, { headers: { authorization: `Bearer ${token}` } });
    if (Number(res.headers.get("x-total-count")) >= 1000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { services, internalToken } = separate
    ? platform
    : { services: platform.ready.services, internalToken: JSON.parse(readFileSync(join(platform.dataDir, "secrets.json"), "utf8")).INTERNAL_TOKEN };
  const direct = directClients(services, internalToken, { accountId: account.accountId, apiKeyId: account.apiKeyId });
  bareProxy = bare
    ? await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [bareOut], {
          env: { ...process.env, BARE_URLS: JSON.stringify(services), BARE_TOKEN: internalToken, BARE_CALLER: JSON.stringify({ accountId: account.accountId, apiKeyId: account.apiKeyId }) },
          stdio: ["ignore", "pipe", "inherit"],
        });
        child.once("exit", (code) => reject(new Error(`the bare proxy exited ${code}`)));
        child.stdout.once("data", (line) => {
          const [, port, rawPort] = /listening (\d+) (\d+)/.exec(String(line));
          resolve({ child, base: `http://127.0.0.1:${port}`, rawBase: `http://127.0.0.1:${rawPort}` });
        });
      })
    : undefined;

  const rate = (request) => requestsPerSecond(request, CONCURRENCY, SECONDS);
  // The gateway's CPU time so far in ms (utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms).
  const cpuMsOf = (pid) => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  const gatewayCpuMs = (pid = platform.child.pid) => cpuMsOf(pid);
  // The services' CPU (all their processes together; not Postgres's).
  const servicesCpuMs = () => (separate ? Object.entries(platform.processes).reduce((sum, [name, child]) => (name === "gateway" ? sum : sum + cpuMsOf(child.pid)), 0) : 0);
  /** A gateway round: its req/s and, with --separate, the gateway's and the services' CPU ms per request. */
  const gatewayRound = async (request, pid) => {
    const cpuBefore = separate ? gatewayCpuMs(pid) : 0;
    const servicesBefore = servicesCpuMs();
    const rps = await rate(request);
    const perRequest = (ms) => ms / (rps * SECONDS);
    return { rps, cpuMs: separate ? perRequest(gatewayCpuMs(pid) - cpuBefore) : undefined, servicesCpuMs: separate ? perRequest(servicesCpuMs() - servicesBefore) : undefined };
  };
  const rest = (path, ifNoneMatch, status = 200) => async () => {
    const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}`, "accept-encoding": ENCODING, ...(ifNoneMatch ? { "if-none-match": ifNoneMatch } : {}) } });
    if (res.status !== status) throw new Error(`${path}: ${res.status}`);
    await res.arrayBuffer();
  };
  const plain = (url) => async () => {
    const res = await fetch(url, { headers: { "accept-encoding": ENCODING } });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    await res.arrayBuffer();
  };
  // The weak ETag a client holds: current (the answer is a 304) or from before a write (a 200).
  const tagOf = async (path) => (await fetch(base + path, { headers: { authorization: `Bearer ${token}` } })).headers.get("etag");
  const products = "/v2/api/products?key=K-500";
  const events = "/v2/api/events?pageSize=10";
  const stale = { products: await tagOf(products), events: await tagOf(events) };
  // A write of the account's catalogue (and so of its queue): the tags above are stale from now on.
  await platform.call("POST", "/v2/api/products", { key: "K-stale", sku: "S-stale", season: "SS27", productName: "stale" }, token);
  for (;;) {
    const res = await fetch(`${base}${events}`, { headers: { authorization: `Bearer ${token}`, "if-none-match": stale.events } });
    await res.arrayBuffer();
    if (res.status === 200) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const current = { products: await tagOf(products), events: await tagOf(events) };
  if (!current.products || !current.events || current.products === stale.products) throw new Error("no ETag to send, or none moved on");
  const cases = [
    { label: "GET /products?key=K", gateway: rest(products), direct: () => direct.productByKey("K-500") },
    // Not the target (its direct side is the one catalogue call): the hop's own cost when
    // the direct side makes both calls the route makes, the catalogue's and pricing's.
    { label: "GET /products?key=K vs both its calls", gateway: rest(products), direct: () => direct.productByKeyWithPrices("K-500") },
    { label: "GET /events?pageSize=10", gateway: rest(events), direct: () => direct.eventsPage() },
    // With If-None-Match: a stale tag (the whole answer, a 200) and the current one (a 304),
    // against the same direct calls as without.
    { label: "GET /products?key=K, If-None-Match stale (200)", gateway: rest(products, stale.products), direct: () => direct.productByKey("K-500") },
    { label: "GET /products?key=K, If-None-Match stale (200) vs both its calls", gateway: rest(products, stale.products), direct: () => direct.productByKeyWithPrices("K-500") },
    { label: "GET /products?key=K, If-None-Match current (304)", gateway: rest(products, current.products, 304), direct: () => direct.productByKey("K-500") },
    { label: "GET /events?pageSize=10, If-None-Match stale (200)", gateway: rest(events, stale.events), direct: () => direct.eventsPage() },
    { label: "GET /events?pageSize=10, If-None-Match current (304)", gateway: rest(events, current.events, 304), direct: () => direct.eventsPage() },
    ...(bareProxy
      ? [
          { label: "bare proxy: GET /products?key=K vs both its calls", gateway: plain(`${bareProxy.base}/products`), direct: () => direct.productByKeyWithPrices("K-500"), pid: bareProxy.child.pid },
          { label: "bare proxy: GET /events?pageSize=10", gateway: plain(`${bareProxy.base}/events`), direct: () => direct.eventsPage(), pid: bareProxy.child.pid },
          { label: "raw proxy: GET /products?key=K vs both its calls", gateway: plain(`${bareProxy.rawBase}/products`), direct: () => direct.productByKeyWithPrices("K-500"), pid: bareProxy.child.pid },
          { label: "raw proxy: GET /events?pageSize=10", gateway: plain(`${bareProxy.rawBase}/events`), direct: () => direct.eventsPage(), pid: bareProxy.child.pid },
        ]
      : []),
  ].filter((c) => !ONLY || c.label.includes(ONLY));
  if (separate) {
    // The gateway's own work with no request in flight (relays, timers, a collection): part of every round's CPU.
    const before = gatewayCpuMs();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    console.log(`gateway CPU at rest: ${((gatewayCpuMs() - before) / SECONDS).toFixed(0)} ms per second`);
  }
  const results = [];
  for (const c of cases) {
    await rate(c.gateway);
    await rate(c.direct);
    const g = [];
    const cpu = [];
    const servicesCpu = [];
    const d = [];
    for (let r = 0; r < ROUNDS; r++) {
      const round = await gatewayRound(c.gateway, c.pid);
      g.push(round.rps);
      cpu.push(round.cpuMs);
      servicesCpu.push(round.servicesCpuMs);
      d.push(await rate(c.direct));
    }
    const gatewayCpuMsPerRequest = separate ? +median(cpu).toFixed(3) : undefined;
    const servicesCpuMsPerRequest = separate ? +median(servicesCpu).toFixed(3) : undefined;
    const result = { label: c.label, gatewayRps: Math.round(median(g)), directRps: Math.round(median(d)), ratio: +(median(g) / median(d)).toFixed(2), target: 0.75, gatewayCpuMsPerRequest, servicesCpuMsPerRequest };
    results.push(result);
    const cpuText = separate ? `; gateway CPU ${gatewayCpuMsPerRequest} ms per request, the services' ${servicesCpuMsPerRequest} ms` : "";
    console.log(`${c.label}: gateway ${result.gatewayRps} req/s, direct Connect ${result.directRps} req/s -> ratio ${result.ratio} (target >= 0.75)${cpuText}`);
  }
  console.log(JSON.stringify({ gatewayHop: results }));
} finally {
  bareProxy?.child.removeAllListeners("exit").kill();
  await platform.stop();
}
