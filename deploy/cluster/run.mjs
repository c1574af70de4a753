// The platform as it runs on Kubernetes, on this machine: a 3-node NATS JetStream cluster, 2
// gateways and 2 replicas of each service, each its own process from dist/ (`npm run build`
// first) on its own loopback address, on a fresh database of the local Postgres. The gateways find
// a service's replicas by its name (<service>.cluster.test, resolved from a file the run keeps as
// Kubernetes keeps a headless Service's DNS: deploy/cluster/resolve.mjs). Two clients write
// products, prices, stock, purchase orders and transactions and read them back, while:
//
// 1. kills: one process at a time is killed with SIGKILL (a service replica, a NATS node, a
//    gateway) and started again; a client re-sends a write that was not acknowledged;
// 2. rolling updates, one replica at a time: a new pod first (started, ready, then the old one
//    SIGTERMed) and stop first (SIGTERM, exit, then a new pod started and ready), for services and
//    gateways; no client request may fail;
// 3. a frozen replica: a service replica stopped (SIGSTOP) for 5 s and resumed; no request may fail,
//    and the replica must take calls again;
// 4. NATS leader changes (not in --short): consumer and stream leaders stepping down, the stream
//    leader's and the meta leader's server killed; each must let a write be visible in planning
//    again within 5 s of the new leaders.
//
// Then it checks what must hold: every acknowledged write stored exactly once, each product's
// newest update_sku entry equal to the product as GET /products answers it (and every
// acknowledged product write with its entry), planned volumes and the breakdown (period=total over the window, period=month
// from the current month) equal to a computation from the writes, no outbox row left unpublished,
// the stream on 3 servers. It prints per scenario the requests, failed ones and latencies.
//
//   node deploy/cluster/run.mjs [--short | --leaders] [--seconds N] [--keep-logs]
//
// --short (the CI's e2e/cluster.e2e.test.ts): 3 kills one after another (at least 10 s), a rolling update of the catalogue
// service in each order (one replica each), the frozen replica; without it 90 s of kills (12) and
// both orders for every service and the gateway, each replica, then the leader changes (4.).
// --leaders: the leader changes only: a marker account writes its stock every 0.2 s and reads it
// back from planning while NATS leaders change (planning's stock consumers' leaders and the
// stream's stepping down, the stream leader's and the meta leader's server killed); per change it
// prints when the first marker written after it was visible in planning, and fails when that was
// over 5 s after the new leaders were elected (a killed server's are, after nats-server's Raft
// election timeout of 4-9 s). Environment: TEST_DATABASE_URL (an admin
// connection to create the database, default postgres://postgres@127.0.0.1:5432/postgres),
// NATS_SERVER (default nats-server on the PATH, else /usr/sbin/nats-server). Exits 0 when
// everything holds, 1 with the failures listed.
//
// No fixed time limit: a stage fails when what it waits for has not moved for STALL_MS (a process
// starting: its CPU time, output or first answer; a check: its answer), and the run stops when
// nothing at all moved for WATCHDOG_MS. Whatever ends it (success, failure, SIGINT/SIGTERM/SIGHUP,
// an error) it kills every process it started, drops its database and removes its temporary
// directory (on failure it keeps the processes' logs there, and names it).
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import pg from "pg";

const args = process.argv.slice(2);
const short = args.includes("--short");
const leadersOnly = args.includes("--leaders");
const writeSeconds = Number(args.includes("--seconds") ? args[args.indexOf("--seconds") + 1] : short ? 10 : 90);
const keepLogs = args.includes("--keep-logs");
const id = randomBytes(4).toString("hex");
const dir = mkdtempSync(join(tmpdir(), "cluster-"));
const started = performance.now();
const log = (...parts) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)}s]`, ...parts);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ADMIN = `cluster-admin-${randomBytes(8).toString("hex")}`;
const secret = () => randomBytes(24).toString("hex");

/** A stage fails when what it waits for has not moved in this long. */
const STALL_MS = 60_000;
/** The run stops when nothing moved (no request answered, no process became ready, no check's answer changed) in this long. */
const WATCHDOG_MS = 180_000;
/** How long a SIGTERMed process keeps serving (its /readyz 503) before it closes; Helm's default is 3 s. */
const DRAIN_MS = 1_000;

let lastProgress = performance.now();
const progressed = () => (lastProgress = performance.now());

/**
 * Polls `check` until it answers something truthy. It fails only when `moved()` (what shows the
 * awaited thing advancing: a process's activity, a check's latest answer) stayed the same for
 * `stallMs`, so a loaded machine slows a stage down without failing it.
 */
async function until(what, check, { moved = () => undefined, stallMs = STALL_MS, every = 250 } = {}) {
  let mark = moved();
  let since = performance.now();
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    const now = moved();
    if (now !== mark) {
      mark = now;
      since = performance.now();
      progressed();
    } else if (performance.now() - since > stallMs) {
      throw new Error(`nothing moved for ${stallMs / 1000} s waiting for ${typeof what === "function" ? what() : what}${last ? `: ${last.message ?? last}` : ""}`);
    }
    if (stopping) throw new Error(`stopped waiting for ${typeof what === "function" ? what() : what}`);
    await sleep(every);
  }
}

/**
 * The next free port of a block below the kernel's ephemeral range (32768 and up), so that no
 * outgoing connection of the run (to Postgres, between NATS servers) takes a port before the
 * process it was picked for restarts on it. Free on every address: each pod listens on its own.
 */
let nextPort = 20000 + Math.floor(Math.random() * 10000);
async function freePort() {
  for (;;) {
    const port = nextPort++;
    const free = await new Promise((resolve) => {
      const server = net.createServer().listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
      server.once("error", () => resolve(false));
    });
    if (free) return port;
  }
}

/** A loopback address of its own for each new pod (127.0.0.10 and up), as each pod has its own IP. */
let nextAddress = 10;
function podAddress() {
  const n = nextAddress++;
  if (n % 256 === 0 || n % 256 === 255) return podAddress();
  return `127.0.${Math.floor(n / 256)}.${n % 256}`;
}

function natsServerBinary() {
  if (process.env.NATS_SERVER) return process.env.NATS_SERVER;
  try {
    execFileSync("nats-server", ["--version"], { stdio: "ignore" });
    return "nats-server";
  } catch {
    return "/usr/sbin/nats-server";
  }
}

// ---- processes -------------------------------------------------------------------------------

/** Every process of the run by name; each can be killed (SIGKILL) and started again alike. */
const processes = new Map();
const ended = (child) => child.exitCode !== null || child.signalCode !== null;
let stopping = false;
const failures = [];

function define(name, command, argv, env, ready, address) {
  const p = { name, command, argv, env, ready, address, child: undefined, expectedExit: false, output: 0, answered: false };
  processes.set(name, p);
  return p;
}

function launch(p) {
  // Never a process after the clean-up began: it would outlive the run.
  if (stopping) throw new Error(`not starting ${p.name}: the run is stopping`);
  const out = createWriteStream(join(dir, `${p.name}.log`), { flags: "a" });
  p.child = spawn(p.command, p.argv, { env: p.env, stdio: ["ignore", "pipe", "pipe"] });
  // The last lines it wrote: a process that exits by itself shows why in the run's FAILED list
  // (its log file may be gone with a test's temporary directory).
  let tail = "";
  for (const stream of [p.child.stdout, p.child.stderr]) {
    stream.on("data", (chunk) => {
      p.output += chunk.length;
      tail = (tail + chunk).slice(-3000);
    });
    stream.pipe(out);
  }
  p.expectedExit = false;
  p.answered = false;
  // "close": its output has been read to the end (by then the run may have started it again).
  const child = p.child;
  child.once("close", (code, signal) => {
    if (p.child === child && !p.expectedExit && !p.starting && !stopping) {
      failures.push(`${p.name} exited by itself (${code ?? signal}); see ${join(dir, `${p.name}.log`)}; its last output:\n${tail.split("\n").slice(-12).join("\n")}`);
    }
  });
}

/** CPU seconds a process has used (Linux /proc): a starting process on a loaded machine advances them, slowly. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** What shows a process getting somewhere: whole CPU seconds used (an idle process takes minutes for one), output, a first answer. */
const activity = (p) => `${Math.floor(cpuSeconds(p.child.pid))}/${p.output}/${p.answered}`;

async function kill(p) {
  if (!p.child?.pid || ended(p.child)) return;
  p.expectedExit = true;
  const exited = new Promise((r) => p.child.once("exit", r));
  p.child.kill("SIGKILL");
  await exited;
}

/** SIGTERM, as Kubernetes stops a pod: it drains, closes and must exit 0. */
async function terminate(p) {
  // Already gone: its exit was counted as a failure.
  if (ended(p.child)) return;
  p.expectedExit = true;
  const exited = new Promise((r) => p.child.once("exit", (code, signal) => r(code ?? signal)));
  p.child.kill("SIGTERM");
  let code;
  void exited.then((c) => (code = c));
  await until(`${p.name} to exit after SIGTERM`, () => code !== undefined, { moved: () => activity(p), every: 50 });
  if (code !== 0) failures.push(`${p.name} exited ${code} after SIGTERM; see ${join(dir, `${p.name}.log`)}`);
}

// ---- topology --------------------------------------------------------------------------------

const services = readdirSync("dist/services");
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
// Inside a jest run, named as the run's databases are (libs/testing/src/names.ts), so the run's
// teardown and monitor find it.
const database = process.env.TEST_RUN_ID ? `cluster_${Date.now().toString(36)}_${id}_${process.env.TEST_RUN_ID}` : `cluster_${id}`;
const databaseUrl = (() => {
  const u = new URL(adminUrl);
  u.pathname = `/${database}`;
  return u.toString();
})();
const stream = `CLUSTER_${id.toUpperCase()}`;
const internalToken = secret();
const gatewaySecrets = { JWT_SECRET: secret(), API_KEY_PEPPER: secret(), ADMIN_TOKEN: ADMIN };
const hostsFile = join(dir, "hosts.json");

/** The current pod of each replica slot: pods.catalogue[0], pods.gateway[1], ... */
const pods = {};
/** Pods ready and not terminating: what a Service's endpoints (and a headless Service's DNS name) list. */
const inRotation = new Set();
/** Makes a new pod of a deployable (a service or "gateway") on a fresh address. */
let newPod;

/** Writes what each service name resolves to (the gateways read it at each lookup). */
function publishEndpoints() {
  const hosts = Object.fromEntries(services.map((s) => [`${s}.cluster.test`, pods[s].filter((p) => inRotation.has(p)).map((p) => p.address)]));
  writeFileSync(`${hostsFile}.partial`, JSON.stringify(hosts));
  renameSync(`${hostsFile}.partial`, hostsFile);
}

/** The gateways' URLs in rotation (a load balancer's backends). */
const gatewayUrls = () => pods.gateway.filter((p) => inRotation.has(p)).map((p) => p.url);

async function topology() {
  const nats = [];
  for (let i = 0; i < 3; i++) nats.push({ client: await freePort(), route: await freePort(), monitor: await freePort() });
  const routes = nats.map((n) => `nats://127.0.0.1:${n.route}`).join(",");
  const natsUrls = nats.map((n) => `nats://127.0.0.1:${n.client}`);
  const binary = natsServerBinary();
  nats.forEach((n, i) =>
    define(`nats-${i}`, binary, ["-a", "127.0.0.1", "-p", String(n.client), "-m", String(n.monitor), "-n", `n${i}`, "-js", "-sd", join(dir, `store-${i}`), "--cluster_name", `c${id}`, "--cluster", `nats://127.0.0.1:${n.route}`, "--routes", routes], process.env, () => jetStreamAnswers(natsUrls[i])),
  );
  const common = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrls.join(","),
    NATS_STREAM: stream,
    NATS_STREAM_REPLICAS: "3",
    INTERNAL_TOKEN: internalToken,
    LOG_LEVEL: "warn",
    SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    // 14 processes on one Postgres: 2 gateways x (2 + 1) + 12 replicas x 2 connections at most.
    DB_POOL_MAX: "2",
  };
  // Every pod of a deployable listens on the same ports, each on its own address.
  const ports = {};
  for (const s of [...services, "gateway"]) ports[s] = { port: await freePort(), health: await freePort() };
  const named = {};
  /** Answers whether `url` says ready; any answer shows the process got somewhere. */
  const readyz = (p, url) => async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    p.answered = true;
    return res.ok;
  };
  newPod = (kind) => {
    named[kind] = (named[kind] ?? -1) + 1;
    const address = podAddress();
    const { port, health } = ports[kind];
    const name = `${kind}-${named[kind]}`;
    if (kind === "gateway") {
      // Each gateway calls every replica of a service by the service's name.
      const urls = Object.fromEntries(services.map((s) => [`${s.toUpperCase()}_URL`, `http://${s}.cluster.test:${ports[s].port}`]));
      const env = { ...common, ...gatewaySecrets, ...urls, CLUSTER_HOSTS: hostsFile, HOST: address, PORT: String(port) };
      const p = define(name, process.execPath, ["--import", pathToFileURL(resolve("deploy/cluster/resolve.mjs")).href, "dist/gateway/main.js"], env, undefined, address);
      p.url = `http://${address}:${port}`;
      p.ready = readyz(p, `${p.url}/readyz`);
      return p;
    }
    // The events service signs image URLs in webhook deliveries as the gateway does (JWT_SECRET).
    const own = kind === "events" ? { JWT_SECRET: gatewaySecrets.JWT_SECRET } : {};
    const env = { ...common, ...own, HOST: address, SERVICE_PORT: String(port), HEALTH_PORT: String(health) };
    const p = define(name, process.execPath, [`dist/services/${kind}/main.js`], env, undefined, address);
    p.healthUrl = `http://${address}:${health}`;
    p.ready = readyz(p, `${p.healthUrl}/readyz`);
    return p;
  };
  for (const kind of [...services, "gateway"]) pods[kind] = [newPod(kind), newPod(kind)];
  return { natsUrls, natsMonitors: nats.map((n) => `http://127.0.0.1:${n.monitor}`) };
}

async function jetStreamAnswers(url) {
  const nc = await connect({ servers: url, timeout: 1000 });
  try {
    await (await jetstreamManager(nc, { timeout: 1000 })).getAccountInfo();
    return true;
  } finally {
    await nc.close();
  }
}

async function startAll(list) {
  for (const p of list) launch(p);
  await Promise.all(list.map(ready));
}

/** Start-ups that failed and were tried again, for the summary. */
const restarts = [];

/**
 * Waits until a process answers ready while it shows activity. One that exits meanwhile is
 * started again, as Kubernetes restarts a container (on a loaded machine Postgres may refuse a
 * connection: "too many clients"); the third exit fails the run, with its log.
 */
async function ready(p) {
  for (let attempt = 1; ; attempt++) {
    let exited;
    const exit = new Promise((resolve) => p.child.once("exit", (code, signal) => resolve((exited = code ?? signal))));
    p.starting = true;
    try {
      await until(`${p.name} ready`, () => exited !== undefined || p.ready(), { moved: () => activity(p) });
    } finally {
      p.starting = false;
    }
    if (exited === undefined) break;
    await exit;
    const tail = readFileSync(join(dir, `${p.name}.log`), "utf8").slice(-1500);
    if (attempt === 3) throw new Error(`${p.name} exited (${exited}) while starting, ${attempt} times: ${tail}`);
    restarts.push(`${p.name} exited (${exited}) while starting: ${tail.trim().split("\n")[0]}`);
    log(`${p.name} exited (${exited}) while starting; starting it again`);
    await sleep(1000 * attempt);
    launch(p);
  }
  progressed();
}

async function killAndRestart(p, downMs) {
  log(`kill -9 ${p.name}`);
  await kill(p);
  await sleep(downMs);
  launch(p);
  await ready(p);
  log(`${p.name} back`);
}

/** Rolling update of one replica, new pod first: started, ready, in rotation; then the old one leaves the rotation and is SIGTERMed. */
async function rollNewFirst(kind, slot) {
  const old = pods[kind][slot];
  const pod = newPod(kind);
  launch(pod);
  await ready(pod);
  pods[kind][slot] = pod;
  inRotation.add(pod);
  inRotation.delete(old);
  publishEndpoints();
  await terminate(old);
  log(`${old.name} replaced by ${pod.name} (new pod first)`);
}

/** Rolling update of one replica, stop first: the old pod leaves the rotation, is SIGTERMed and exits; then a new pod starts and joins once ready. */
async function rollStopFirst(kind, slot) {
  const old = pods[kind][slot];
  inRotation.delete(old);
  publishEndpoints();
  await terminate(old);
  const pod = newPod(kind);
  pods[kind][slot] = pod;
  launch(pod);
  await ready(pod);
  inRotation.add(pod);
  publishEndpoints();
  log(`${old.name} replaced by ${pod.name} (stop first)`);
}

// ---- what the clients saw, per scenario ---------------------------------------------------------

/** Requests (reads and write attempts) by the scenario they started in: count, failures, durations. */
const scenarios = [];
let scenario;
function beginScenario(name, { failuresAllowed = false } = {}) {
  scenario = { name, failuresAllowed, requests: 0, failed: 0, inFlight: 0, samples: [], durations: [], started: performance.now() };
  scenarios.push(scenario);
  return scenario;
}
beginScenario("start-up", { failuresAllowed: true });

/** A request starting: counted in the current scenario. */
function begin() {
  scenario.inFlight++;
  return { s: scenario, at: performance.now() };
}

/** Counts one request in the scenario it started in. */
function record({ s, at: startedAt }, ok, what) {
  progressed();
  s.inFlight--;
  s.requests++;
  s.durations.push({ at: startedAt, ms: performance.now() - startedAt, ok });
  if (!ok) {
    s.failed++;
    if (s.samples.length < 5) s.samples.push(what);
  }
}

const percentile = (ms, q) => (ms.length ? ms.sort((a, b) => a - b)[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)] : 0);
function summary(s, durations = s.durations) {
  const ms = durations.map((d) => d.ms);
  return `${s.requests} requests, ${s.failed} failed, p50 ${percentile(ms, 0.5).toFixed(0)} ms, p99 ${percentile(ms, 0.99).toFixed(0)} ms, max ${Math.max(0, ...ms).toFixed(0)} ms`;
}

// ---- clients ---------------------------------------------------------------------------------

const PRODUCTS_PER_CLIENT = short ? 20 : 40;
const ORDERS_PER_CLIENT = 10;
const TRANSACTIONS_PER_CLIENT = 12;
const WAREHOUSES = ["W1", "W2"];
const FROM = "2026-03-01";
const TO = "2026-03-31";
// The breakdown's months (the account's timezone is UTC: no settings are written): the current
// one and the next, and the same months a year earlier (their plans' baseline).
const day = (t) => new Date(t).toISOString().slice(0, 10);
const NOW = new Date();
const CURRENT = Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth(), 1);
const monthsLater = (t, n) => Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + n, 1);
const MONTH_FROM = day(CURRENT);
const MONTH_TO = day(monthsLater(CURRENT, 2) - 86_400_000);
/** When a transaction is made: a day of the window, of the window a year earlier, of the current or next month a year earlier, or earlier today's month. */
function saleDate() {
  const inMonth = (start) => new Date(start + Math.floor(Math.random() * 27) * 86_400_000 + 12 * 3_600_000).toISOString();
  const choices = [
    () => inMonth(Date.parse(`${FROM}T00:00:00Z`)),
    () => inMonth(monthsLater(Date.parse(`${FROM}T00:00:00Z`), -12)),
    () => inMonth(monthsLater(CURRENT, -12)),
    () => inMonth(monthsLater(CURRENT, -11)),
    () => new Date(CURRENT + Math.floor(Math.random() * Math.max(1, NOW.getTime() - CURRENT - 60_000))).toISOString(),
  ];
  return choices[Math.floor(Math.random() * choices.length)]();
}

/** Reads that reach every service, with the answer each must give. */
const READS = [
  "/v2/api/products?page=1&pageSize=20",
  "/v2/api/prices?page=1&pageSize=20",
  "/v2/api/warehouses/stock?page=1&pageSize=20",
  "/v2/api/purchaseorders?page=1&pageSize=20",
  "/v2/api/transactions?page=1&pageSize=20",
  "/v2/api/events?event_type=update_sku&page=1&pageSize=20",
  `/v2/api/planning/planned-volumes?fromDate=${FROM}&toDate=${TO}&groupBy=skus`,
];

/**
 * One client: it owns its products and orders, writes one request at a time through a gateway in
 * rotation (the next one after one that did not answer), and re-sends a write that was not
 * acknowledged until it is, as a real integration does; so the last attempt of each thing is what
 * must be stored. Beside it, its reader reads one request at a time. Every write attempt and read
 * is counted in its scenario.
 */
function client(n, token) {
  let turn = n;
  // `productNames`: the name of every acknowledged product write (each carries a growing number).
  const last = { products: new Map(), productNames: new Set(), prices: new Map(), stock: new Map(), orders: new Map(), transactions: new Map() };
  let counter = 0;
  let acknowledged = 0;
  let retries = 0;
  const call = async (method, path, body) => {
    const urls = gatewayUrls();
    const res = await fetch(urls[turn % urls.length] + path, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${token()}` },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const ok = (res) => res.status >= 200 && res.status < 300 && statusCodes(res.body).every((c) => c >= 200 && c < 300);
  /** Sends until acknowledged (at most 120 tries); an answer that is not 2xx, or none, is a retry through the other gateway. */
  const write = async (method, path, body) => {
    for (let attempt = 1; ; attempt++) {
      const started = begin();
      const res = await call(method, path, body).catch((error) => ({ status: 0, body: String(error.cause ?? error) }));
      record(started, ok(res), `${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      if (ok(res)) return void acknowledged++;
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
      if (attempt >= 120) throw new Error(`${method} ${path} never acknowledged: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      retries++;
      turn++;
      await sleep(250);
    }
  };
  const key = (i) => `C${n}-P${i}`;
  const pick = (count, of) => {
    const chosen = new Set();
    while (chosen.size < Math.min(count, of)) chosen.add(Math.floor(Math.random() * of));
    return [...chosen];
  };
  const product = (i) => ({ key: key(i), sku: `S-${key(i)}`, productName: `${key(i)} #${++counter}`, season: i % 2 ? "SS26" : "AW26", productGroupId: `G${i % 3}` });
  const ops = {
    products: async () => {
      const items = pick(5, PRODUCTS_PER_CLIENT).map(product);
      await write("POST", "/v2/api/products/batch", items);
      for (const p of items) {
        last.products.set(p.key, p);
        last.productNames.add(p.productName);
      }
    },
    prices: async () => {
      const items = pick(5, PRODUCTS_PER_CLIENT).map((i) => ({ listExternalID: "L1", key: key(i), price: Number(`${++counter % 1000}.${counter % 100}`) }));
      await write("POST", "/v2/api/prices/batch", items);
      for (const p of items) last.prices.set(p.key, p.price);
    },
    stock: async () => {
      const date = new Date(Date.UTC(2026, 1, 1) + ++counter * 1000).toISOString();
      const rows = pick(5, PRODUCTS_PER_CLIENT).map((i) => ({ key: key(i), externalWarehouseID: WAREHOUSES[i % 2], availableQuantity: Math.floor(Math.random() * 100), physicalQuantity: 100, date }));
      await write("POST", "/v2/api/warehouses/stock", rows);
      for (const r of rows) last.stock.set(`${r.externalWarehouseID}/${r.key}`, r);
    },
    orders: async () => {
      const orders = pick(2, ORDERS_PER_CLIENT).map((j) => ({
        externalPONo: `C${n}-PO${j}`,
        orderDate: "2026-02-01T00:00:00Z",
        deliveryStatus: Math.random() < 0.3 ? 4 : 5,
        externalWarehouseID: WAREHOUSES[j % 2],
        items: pick(1 + Math.floor(Math.random() * 3), PRODUCTS_PER_CLIENT).map((i, r) => ({
          externalRowID: String(r + 1),
          key: key(i),
          quantity: 1 + Math.floor(Math.random() * 50),
          deliveryDate: `2026-03-${String(1 + Math.floor(Math.random() * 28)).padStart(2, "0")}T12:00:00Z`,
        })),
      }));
      await write("POST", "/v2/api/purchaseorders/batch", orders);
      for (const o of orders) last.orders.set(o.externalPONo, o);
    },
    // Sales and returns, replaced by externalTransactionID (a replaced one moves in time, changes
    // channel or items, or is cancelled).
    transactions: async () => {
      const transactions = pick(2, TRANSACTIONS_PER_CLIENT).map((j) => {
        const type = Math.random() < 0.15 ? 2 : 1;
        return {
          externalTransactionID: `C${n}-T${j}`,
          channel: 1 + Math.floor(Math.random() * 2),
          type,
          createdDate: saleDate(),
          ...(Math.random() < 0.1 ? { cancelledDate: new Date().toISOString() } : {}),
          items: pick(1 + Math.floor(Math.random() * 3), PRODUCTS_PER_CLIENT).map((i, r) => ({
            externalItemID: String(r + 1),
            key: key(i),
            quantity: 1 + Math.floor(Math.random() * 5),
            ...(Math.random() < 0.2 ? { type: 3 - type } : {}),
          })),
        };
      });
      await write("POST", "/v2/api/transactions/batch", transactions);
      for (const t of transactions) last.transactions.set(t.externalTransactionID, t);
    },
  };
  return {
    last,
    stats: () => ({ acknowledged, retries }),
    /** Every product once, so that prices, stock and orders can name them. */
    seed: async () => {
      const items = Array.from({ length: PRODUCTS_PER_CLIENT }, (_, i) => product(i));
      await write("POST", "/v2/api/products/batch", items);
      for (const p of items) {
        last.products.set(p.key, p);
        last.productNames.add(p.productName);
      }
    },
    /** Random writes until `done()`. */
    run: async (done) => {
      const kinds = Object.keys(ops);
      while (!done()) await ops[kinds[Math.floor(Math.random() * kinds.length)]]();
    },
    /** One read of the products (the catalogue service), counted; it must answer 200. */
    readProducts: async () => {
      const started = begin();
      const res = await call("GET", READS[0]).catch((error) => ({ status: 0, body: String(error.cause ?? error) }));
      record(started, res.status === 200, `GET ${READS[0]}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    },
    /** Reads, one at a time, until `done()`; each must answer 200. */
    read: async (done) => {
      for (let i = n; !done(); i++) {
        const started = begin();
        const path = READS[i % READS.length];
        const res = await call("GET", path).catch((error) => ({ status: 0, body: String(error.cause ?? error) }));
        record(started, res.status === 200, `GET ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        if (res.status !== 200) turn++;
      }
    },
    call,
  };
}

/** JSON with every object's keys sorted (a jsonb payload keeps its own key order). */
const canonical = (value) =>
  JSON.stringify(value, (_, v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));

/** Every statusCode in a batch answer (nested arrays of BatchResponse). */
function statusCodes(body) {
  if (Array.isArray(body)) return body.flatMap(statusCodes);
  if (body && typeof body === "object" && typeof body.statusCode === "number") return [body.statusCode];
  return [];
}

// ---- checks ----------------------------------------------------------------------------------

async function allPages(call, path) {
  const rows = [];
  for (let page = 1; ; page++) {
    const res = await call("GET", `${path}${path.includes("?") ? "&" : "?"}page=${page}&pageSize=1000`);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    rows.push(...res.body);
    if (res.body.length < 1000) return rows;
  }
}

/** Planned volumes per SKU key from the writes alone (CONTRACT: stock available, open and draft PO quantities in the window). */
function expectedVolumes(clients) {
  const rows = new Map();
  const row = (key) => rows.get(key) ?? rows.set(key, { groupKey: key, stockVolume: 0, poVolume: 0, draftPOVolume: 0 }).get(key);
  for (const c of clients) {
    for (const s of c.last.stock.values()) row(s.key).stockVolume += s.availableQuantity;
    for (const o of c.last.orders.values()) {
      for (const item of o.items) {
        if (o.deliveryStatus === 4) row(item.key).draftPOVolume += item.quantity;
        else row(item.key).poVolume += item.quantity;
      }
    }
  }
  return [...rows.values()].sort((a, b) => a.groupKey.localeCompare(b.groupKey));
}

/**
 * The breakdown per SKU key from the writes alone (CONTRACT "Planning: the later revision"), for
 * whole-month periods [start, end] (days): actuals are the net units (an item's own type wins,
 * returns negative) of transactions not cancelled made in the period; the plan the same a year
 * earlier (salesPlanGrowth 0, no stored plans); PO and draft-PO volume as planned volumes; from
 * the current period on, opening = the stock written, remaining plan max(0, plan - actual) in the
 * current period and the plan later, closing = opening + PO + draft - remaining, open-to-buy =
 * max(0, remaining - opening - PO) (no stock triggers written: target 0). Periods before the
 * current one have no stock figures (null).
 */
function expectedBreakdown(clients, periods) {
  const yearEarlier = (d) => `${Number(d.slice(0, 4)) - 1}${d.slice(4)}`;
  const today = day(Date.now());
  const rows = new Map();
  const row = (key) =>
    rows.get(key) ??
    rows.set(key, { stock: 0, periods: periods.map(() => ({ salesPlanVolume: 0, salesActualVolume: 0, poVolume: 0, draftPOVolume: 0, baseline: [0, 0] })) }).get(key);
  for (const c of clients) {
    for (const s of c.last.stock.values()) row(s.key).stock += s.availableQuantity;
    for (const o of c.last.orders.values()) {
      for (const item of o.items) {
        const i = periods.findIndex((p) => item.deliveryDate.slice(0, 10) >= p.start && item.deliveryDate.slice(0, 10) <= p.end);
        if (i >= 0) row(item.key).periods[i][o.deliveryStatus === 4 ? "draftPOVolume" : "poVolume"] += item.quantity;
      }
    }
    for (const t of c.last.transactions.values()) {
      if (t.cancelledDate) continue;
      const d = t.createdDate.slice(0, 10);
      for (const item of t.items) {
        const units = (item.type ?? t.type) === 2 ? -item.quantity : item.quantity;
        periods.forEach((p, i) => {
          if (d >= p.start && d <= p.end) row(item.key).periods[i].salesActualVolume += units;
          if (d >= yearEarlier(p.start) && d <= yearEarlier(p.end)) row(item.key).periods[i].baseline[t.channel - 1] += units;
        });
      }
    }
  }
  for (const r of rows.values()) {
    let opening = r.stock;
    periods.forEach((p, i) => {
      const f = r.periods[i];
      // A baseline is never negative (a month of more returns than sales plans 0), per SKU and
      // channel: one channel's returns do not cancel the other's sales.
      f.salesPlanVolume = f.baseline.reduce((sum, units) => sum + Math.max(0, units), 0);
      delete f.baseline;
      if (p.end < today.slice(0, 7) + "-01") return Object.assign(f, { openingStockVolume: null, closingStockVolume: null, targetStockVolume: null, openToBuyVolume: null });
      const remaining = p.start <= today ? Math.max(0, f.salesPlanVolume - f.salesActualVolume) : f.salesPlanVolume;
      const closing = opening + f.poVolume + f.draftPOVolume - remaining;
      Object.assign(f, { openingStockVolume: opening, closingStockVolume: closing, targetStockVolume: 0, openToBuyVolume: Math.max(0, remaining - opening - f.poVolume) });
      opening = closing;
    });
  }
  return rows;
}

/** Where a breakdown answer differs from the computation: a missing row counts as one of zeros. */
function breakdownDifferences(expected, answer, periods) {
  const got = new Map(answer.map((r) => [r.groupKey, r]));
  const past = (p) => p.end < day(Date.now()).slice(0, 7) + "-01";
  const stockFields = ["openingStockVolume", "closingStockVolume", "targetStockVolume", "openToBuyVolume"];
  /** A figure of a row with nothing: 0, or null for stock figures of a past period. */
  const nothing = (p, f) => (past(p) && stockFields.includes(f) ? null : 0);
  const fields = ["openingStockVolume", "salesPlanVolume", "salesActualVolume", "poVolume", "draftPOVolume", "closingStockVolume", "targetStockVolume", "openToBuyVolume"];
  const out = [];
  for (const key of new Set([...expected.keys(), ...got.keys()])) {
    const e = expected.get(key);
    const g = got.get(key);
    periods.forEach((p, i) => {
      if (g && (g.periods[i]?.periodStart !== p.start || g.periods[i]?.periodEnd !== p.end)) out.push(`${key}: period ${i} is ${g.periods[i]?.periodStart}..${g.periods[i]?.periodEnd}, not ${p.start}..${p.end}`);
      for (const f of fields) {
        const want = e ? e.periods[i][f] : nothing(p, f);
        const have = g ? g.periods[i]?.[f] : nothing(p, f);
        if (have !== want) out.push(`${key} ${p.start} ${f}: ${have} answered, ${want} computed`);
      }
    });
  }
  return out;
}

async function check(db, clients, call, natsUrls) {
  const problems = [];
  // No outbox row left behind: each schema's outbox empties (the relays of the replicas that lived).
  const { rows: outboxes } = await db.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox'");
  for (const { table_schema: schema } of outboxes) {
    let unpublished;
    await until(
      () => `${schema}'s outbox relayed (${unpublished} rows unpublished)`,
      async () => {
        const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${schema}".outbox WHERE published_at IS NULL AND dead_at IS NULL`);
        unpublished = rows[0].n;
        return unpublished === 0;
      },
      { moved: () => unpublished },
    ).catch((error) => problems.push(error.message));
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${schema}".outbox WHERE dead_at IS NOT NULL`);
    if (rows[0].n) problems.push(`${schema}: ${rows[0].n} outbox rows dead-lettered`);
  }

  // Every acknowledged write stored, exactly once: products (with their last price), orders with their items.
  const products = new Map((await allPages(call, "/v2/api/products")).map((p) => [p.key, p]));
  const stored = (await db.query("SELECT key, count(*)::int AS n FROM catalogue.products GROUP BY key")).rows;
  if (stored.some((r) => r.n !== 1)) problems.push(`products stored more than once: ${stored.filter((r) => r.n !== 1).map((r) => r.key).join(", ")}`);
  let productCount = 0;
  for (const c of clients) {
    for (const [key, p] of c.last.products) {
      productCount++;
      const got = products.get(key);
      if (!got) problems.push(`product ${key} missing`);
      else if (got.productName !== p.productName) problems.push(`product ${key}: ${got.productName} stored, ${p.productName} written last`);
      const price = c.last.prices.get(key);
      const prices = got?.prices ?? [];
      if (price !== undefined && (prices.length !== 1 || prices[0].price !== price)) problems.push(`product ${key}: prices ${JSON.stringify(prices)}, ${price} written last`);
    }
  }
  if (products.size !== productCount) problems.push(`${products.size} products stored, ${productCount} written`);
  const orders = (await db.query("SELECT o.external_po_no, o.delivery_status, count(i.*)::int AS items, sum(i.quantity)::int AS quantity FROM orders.purchase_orders o LEFT JOIN orders.purchase_order_items i ON i.purchase_order_id = o.id GROUP BY o.id")).rows;
  const written = new Map(clients.flatMap((c) => [...c.last.orders]));
  const counted = new Map();
  for (const o of orders) counted.set(o.external_po_no, (counted.get(o.external_po_no) ?? 0) + 1);
  for (const [no, o] of written) {
    const row = orders.find((r) => r.external_po_no === no);
    if (counted.get(no) !== 1) problems.push(`purchase order ${no} stored ${counted.get(no) ?? 0} times`);
    else if (row.items !== o.items.length || row.quantity !== o.items.reduce((s, i) => s + i.quantity, 0) || row.delivery_status !== o.deliveryStatus) {
      problems.push(`purchase order ${no}: ${JSON.stringify(row)} stored, ${o.items.length} items of ${o.items.reduce((s, i) => s + i.quantity, 0)} (status ${o.deliveryStatus}) written last`);
    }
  }
  if (orders.length !== written.size) problems.push(`${orders.length} purchase orders stored, ${written.size} written`);

  // Per-product queue: the newest update_sku entry is the product as stored, every acknowledged
  // product write has its entry, and a product's entries never go back in time (each write's
  // name carries a growing number: a later entry never shows an older write; a price change's
  // entry repeats the name).
  let sample = "";
  let seen = "";
  const names = clients.flatMap((c) => [...c.last.productNames]);
  const order = await until(() => `each product's newest update_sku entry equal to the product, every product write with its entry, none out of order (${sample})`, async () => {
    const entries = await allPages(call, "/v2/api/events?event_type=update_sku");
    seen = entries.length;
    const byKey = new Map();
    for (const e of entries) (byKey.get(e.payload.key) ?? byKey.set(e.payload.key, []).get(e.payload.key)).push(e.payload);
    const stale = [...products.values()].filter((p) => canonical(byKey.get(p.key)?.at(-1)) !== canonical(p)).map((p) => p.key);
    const entered = new Set(entries.map((e) => e.payload.productName));
    const missing = names.filter((name) => !entered.has(name));
    const writeNo = (p) => Number(p.productName.slice(p.productName.lastIndexOf("#") + 1));
    const backwards = [...byKey].flatMap(([key, list]) => list.flatMap((p, i) => (i > 0 && writeNo(p) < writeNo(list[i - 1]) ? [`${key}: ${list[i - 1].productName} then ${p.productName}`] : [])));
    const productsBackwards = new Set(backwards.map((b) => b.slice(0, b.indexOf(":")))).size;
    sample = [
      stale.length ? `${stale.length} stale, e.g. ${JSON.stringify(byKey.get(stale[0])?.at(-1))} for ${JSON.stringify(products.get(stale[0]))}` : "",
      missing.length ? `${missing.length} of ${names.length} product writes without an entry, e.g. ${missing.slice(0, 5).join(", ")}` : "",
      backwards.length ? `${productsBackwards} products with entries out of order (${backwards.length} pairs), e.g. ${backwards.slice(0, 3).join(", ")}` : "",
    ].filter(Boolean).join("; ");
    return stale.length || missing.length || backwards.length ? undefined : { entries: entries.length };
  }, { moved: () => `${seen} ${sample}` }).catch((error) => (problems.push(error.message), undefined));

  // Planning: volumes per SKU equal to a computation from the writes.
  const expected = expectedVolumes(clients);
  let planned;
  await until("planned volumes equal to the writes'", async () => {
    const res = await call("GET", `/v2/api/planning/planned-volumes?fromDate=${FROM}&toDate=${TO}&groupBy=skus`);
    planned = JSON.stringify([...res.body].sort((a, b) => a.groupKey.localeCompare(b.groupKey)));
    return planned === JSON.stringify(expected);
  }, { moved: () => planned }).catch((error) => problems.push(`${error.message} (expected ${JSON.stringify(expected).slice(0, 300)})`));

  // Planning: the breakdown per SKU equal to a computation from the writes, over the window as
  // one period (past: sales and PO figures) and by month from the current month (the projection).
  for (const [query, periods] of [
    [`fromDate=${FROM}&toDate=${TO}&period=total`, [{ start: FROM, end: TO }]],
    [`fromDate=${MONTH_FROM}&toDate=${MONTH_TO}&period=month`, [{ start: MONTH_FROM, end: day(monthsLater(CURRENT, 1) - 86_400_000) }, { start: day(monthsLater(CURRENT, 1)), end: MONTH_TO }]],
  ]) {
    const computed = expectedBreakdown(clients, periods);
    let differences = [];
    await until(
      () => `the breakdown (${query}) equal to the writes': ${differences.length} differences, e.g. ${differences.slice(0, 5).join("; ")}`,
      async () => {
        const res = await call("GET", `/v2/api/planning/breakdown?${query}&groupBy=skus`);
        if (res.status !== 200) throw new Error(`GET /planning/breakdown?${query}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        differences = breakdownDifferences(computed, res.body, periods);
        return differences.length === 0;
      },
      { moved: () => differences.join() },
    )
      .then(() => {
        const figures = [...computed.values()].flatMap((r) => r.periods);
        const nonzero = (f) => figures.filter((p) => p[f]).length;
        log(`breakdown ${query}: ${computed.size} SKUs equal to the writes' (non-zero plans ${nonzero("salesPlanVolume")}, actuals ${nonzero("salesActualVolume")}, POs ${nonzero("poVolume")}, openings ${nonzero("openingStockVolume")}, open-to-buy ${nonzero("openToBuyVolume")})`);
      })
      .catch((error) => problems.push(error.message));
  }

  // The stream survives a node: three copies.
  const nc = await connect({ servers: natsUrls });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(stream);
    if (info.config.num_replicas !== 3) problems.push(`the stream has ${info.config.num_replicas} replicas`);
  } finally {
    await nc.close();
  }
  const transactions = clients.reduce((n, c) => n + c.last.transactions.size, 0);
  return { problems, entries: order?.entries, products: productCount, orders: written.size, transactions };
}

// ---- the run ---------------------------------------------------------------------------------

/** The database's creation (the clean-up waits for it, so that a run interrupted meanwhile still drops it). */
let creating;
let db;

/** The load of every scenario: each client's writes and reads until `done()`; rejects when a client meets an error it must not. */
function load(clients, done) {
  return Promise.all([...clients.map((c) => c.run(done)), ...clients.map((c) => c.read(done))]);
}

/** Calls a service replica has answered (its rpc_server_duration_seconds counts). */
async function callsAnswered(p) {
  const text = await (await fetch(`${p.healthUrl}/metrics`, { signal: AbortSignal.timeout(3000) })).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("rpc_server_duration_seconds_count"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

/**
 * A service replica stopped (SIGSTOP) for `ms` under load, then resumed: the gateways' first-byte
 * check takes it out of the rotation, so calls started after that do not wait for it; resumed, it
 * must take calls again. Returns when it did.
 */
async function freeze(p, ms, readProducts) {
  const s = beginScenario(`frozen ${p.name} for ${ms / 1000} s`);
  // No request of an earlier scenario left to be caught by the freeze.
  await until("the requests of earlier scenarios answered", () => scenarios.every((other) => other === s || other.inFlight === 0));
  log(`SIGSTOP ${p.name}`);
  p.child.kill("SIGSTOP");
  const stoppedAt = performance.now();
  // Besides the clients (each waits for its answer, so a few calls stuck on the frozen replica
  // stop them all), a read of the products every 50 ms whatever the answers.
  const reads = [];
  while (performance.now() - stoppedAt < ms) {
    reads.push(readProducts());
    await sleep(50);
  }
  p.child.kill("SIGCONT");
  const resumedAt = performance.now();
  Object.assign(s, { stoppedAt, resumedAt });
  await Promise.all(reads);
  // Calls in flight when it froze end now; calls it takes from here on are new ones.
  const { before } = await until(`${p.name} answering after SIGCONT`, async () => ({ before: await callsAnswered(p) }));
  let now = before;
  await until(() => `${p.name} taking calls again after SIGCONT (${now - before} since)`, async () => (now = await callsAnswered(p)) >= before + 3);
  log(`SIGCONT ${p.name}: taking calls again ${((performance.now() - resumedAt) / 1000).toFixed(1)} s after`);
}

// ---- NATS leader changes: how soon a write is visible in planning again -------------------------

/** A resume later than this after the new leaders were elected fails the run. */
const RESUME_BUDGET_MS = 5_000;
const leaderProblems = [];
const MARKER = "MARKER";

/**
 * An account of its own (the clients' checks never see it) with one product in one warehouse,
 * whose stock a writer sets to 1, 2, 3, ... while a reader reads it back from planning.
 */
async function markerAccount() {
  const admin = (path, method, body) => fetch(`${gatewayUrls()[0]}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const signup = await (await admin("/admin/v1/accounts", "POST", { name: "markers" })).json();
  const limits = await admin(`/admin/v1/accounts/${signup.accountID}/settings`, "PUT", { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 });
  if (limits.status !== 200) throw new Error(`marker account settings: ${limits.status} ${await limits.text()}`);
  const auth = await fetch(`${gatewayUrls()[0]}/v2/api/auth`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ accountID: signup.accountID, apiKey: signup.apiKey }) });
  const { accessToken } = await auth.json();
  let turn = 0;
  /** A call through the gateways in turn; the next one after one that did not answer 2xx. */
  const call = async (method, path, body) => {
    const urls = gatewayUrls();
    try {
      const res = await fetch(urls[turn % urls.length] + path, { method, headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      const answer = { status: res.status, body: text ? JSON.parse(text) : undefined };
      if (res.status >= 300 || statusCodes(answer.body).some((c) => c >= 300)) turn++;
      return answer;
    } catch (error) {
      turn++;
      return { status: 0, body: String(error.cause ?? error) };
    }
  };
  const setup = async (path, body) => {
    const res = await call("POST", path, body);
    if (res.status >= 300) throw new Error(`marker account: POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  await setup("/v2/api/warehouses", [{ externalId: "W1", name: "Warehouse W1" }]);
  await setup("/v2/api/products/batch", [{ key: MARKER, sku: `S-${MARKER}`, productName: MARKER, season: "SS26", productGroupId: "G0" }]);
  const state = { accountId: signup.accountID, written: 0, visible: 0, ackedAt: new Map(), visibleAt: new Map(), running: true };
  const writer = (async () => {
    while (state.running) {
      const k = state.written + 1;
      const res = await call("POST", "/v2/api/warehouses/stock", [{ key: MARKER, externalWarehouseID: "W1", availableQuantity: k, physicalQuantity: 1_000_000, date: new Date(Date.UTC(2026, 1, 1) + k * 1000).toISOString() }]);
      if (res.status >= 200 && res.status < 300 && statusCodes(res.body).every((c) => c < 300)) {
        state.written = k;
        state.ackedAt.set(k, performance.now());
      }
      await sleep(200);
    }
  })();
  const reader = (async () => {
    while (state.running) {
      const res = await call("GET", `/v2/api/planning/planned-volumes?fromDate=${FROM}&toDate=${TO}&groupBy=skus`);
      const seen = res.status === 200 ? (res.body.find((r) => r.groupKey === MARKER)?.stockVolume ?? 0) : 0;
      for (let k = state.visible + 1; k <= seen; k++) state.visibleAt.set(k, performance.now());
      state.visible = Math.max(state.visible, seen);
      await sleep(100);
    }
  })();
  state.stop = async () => {
    state.running = false;
    await Promise.all([writer, reader]);
  };
  return state;
}

/** A server's name (n0, n1, n2) -> its process. */
const natsProcess = (name) => processes.get(`nats-${name.slice(1)}`);

/**
 * Planning's durable consumers of the markers' stock messages: those of the stock subject's
 * partition whose last message is the marker account's (both planning replicas read them).
 */
async function markerConsumers(natsUrls, markers) {
  const nc = await connect({ servers: natsUrls });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2000 });
    const names = [];
    for await (const c of await jsm.consumers.list(stream)) if (c.name.startsWith("planning-") && /__analytics_inventory_stock_updated__p\d+$/.test(c.name)) names.push(c.name);
    const ours = [];
    for (const name of names) {
      const partition = name.slice(name.lastIndexOf("__p") + 3);
      const last = await jsm.streams.getMessage(stream, { last_by_subj: `analytics.inventory.stock.updated.p${partition}` }).catch(() => null);
      if (last?.header.get("Account-Id") === markers.accountId) ours.push(name);
    }
    return ours.length ? ours : undefined;
  } finally {
    await nc.close();
  }
}

/**
 * The stream's leader and those of `consumers`, asked of the servers other than `lost`;
 * undefined while one has none (or it is `lost`), or does not answer.
 */
async function leadersOf(natsUrls, consumers, lost) {
  const nc = await connect({ servers: natsUrls.filter((_, i) => `n${i}` !== lost), timeout: 1000, maxReconnectAttempts: 0 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 1000 });
    const leaders = await Promise.all(consumers.map(async (name) => [name, (await jsm.consumers.info(stream, name)).cluster?.leader]));
    const streamLeader = (await jsm.streams.info(stream)).cluster?.leader;
    if (!streamLeader || streamLeader === lost || leaders.some(([, l]) => !l || l === lost)) return undefined;
    return { stream: streamLeader, consumers: leaders };
  } finally {
    await nc.close();
  }
}

/** The meta leader's name, from a server's monitoring endpoint. */
async function metaLeader(natsMonitors) {
  for (const url of natsMonitors) {
    const jsz = await fetch(`${url}/jsz`, { signal: AbortSignal.timeout(1000) }).then((r) => r.json(), () => undefined);
    if (jsz?.meta_cluster?.leader) return jsz.meta_cluster.leader;
  }
  throw new Error("no NATS server names a meta leader");
}

/**
 * One leader change: `act` makes it and names the server it took leaders from (and a server it
 * killed, started again once the markers are through). Measures from the change (act's end;
 * what it looked up before the change does not count): when the stream and planning's consumers
 * of the markers have leaders again (asked of the other servers), and when the
 * first marker written after the change is visible in planning.
 */
async function leaderChange(markers, natsUrls, consumers, name, act) {
  await until(`markers visible before "${name}"`, () => markers.visible >= markers.written && markers.written > 0, { moved: () => markers.visible });
  const { lost, killed } = await act();
  // The change is made once act() is done: a step-down answered, a killed server gone.
  const at = performance.now();
  await until(`new leaders after "${name}"`, () => leadersOf(natsUrls, consumers, lost).catch(() => undefined), { every: 100 });
  const electedAt = performance.now();
  const first = () => [...markers.ackedAt].find(([, t]) => t >= at)?.[0];
  await until(`a marker written after "${name}" visible in planning`, () => first() !== undefined && markers.visible >= first(), { moved: () => `${markers.written}/${markers.visible}`, every: 50 });
  const visibleAt = markers.visibleAt.get(first());
  const resume = (visibleAt - at) / 1000;
  const afterElection = Math.max(0, visibleAt - electedAt) / 1000;
  log(`  ${name}: new leaders ${((electedAt - at) / 1000).toFixed(1)} s after; a write visible in planning again ${resume.toFixed(1)} s after (${afterElection.toFixed(1)} s after the new leaders)`);
  if (afterElection * 1000 > RESUME_BUDGET_MS) leaderProblems.push(`${name}: a write visible in planning ${afterElection.toFixed(1)} s after the new leaders were elected (${resume.toFixed(1)} s after the change; budget ${RESUME_BUDGET_MS / 1000} s)`);
  if (killed) {
    launch(killed);
    await ready(killed);
  }
}

/** 4. NATS leader changes under load, each measured by the markers. */
async function leaderChanges(markers, natsUrls, natsMonitors) {
  beginScenario("NATS leader changes (failed requests expected: re-sent)", { failuresAllowed: true });
  await until("a first marker visible in planning", () => markers.visible > 0, { moved: () => markers.written });
  const consumers = await until("planning's consumers of the markers", () => markerConsumers(natsUrls, markers).catch(() => undefined));
  log(`NATS leader changes, each measured by marker writes read back from planning (its consumers ${consumers.join(", ")}):`);
  const request = async (subject) => {
    const nc = await connect({ servers: natsUrls });
    try {
      const answer = (await nc.request(subject, "", { timeout: 5000 })).json();
      if (!answer.success) throw new Error(`${subject}: ${JSON.stringify(answer)}`);
    } finally {
      await nc.close();
    }
  };
  await leaderChange(markers, natsUrls, consumers, "the leaders of planning's consumers of the markers step down", async () => {
    await Promise.all(consumers.map((c) => request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${c}`)));
    return {};
  });
  await leaderChange(markers, natsUrls, consumers, "the stream's leader steps down", async () => {
    await request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`);
    return {};
  });
  await leaderChange(markers, natsUrls, consumers, "the stream leader's server killed", async () => {
    const { stream: leader } = await until("the stream's leader", () => leadersOf(natsUrls, consumers).catch(() => undefined));
    log(`  kill -9 ${natsProcess(leader).name} (the stream's leader, ${leader})`);
    await kill(natsProcess(leader));
    return { lost: leader, killed: natsProcess(leader) };
  });
  await leaderChange(markers, natsUrls, consumers, "the meta leader's server killed", async () => {
    const leader = await metaLeader(natsMonitors);
    log(`  kill -9 ${natsProcess(leader).name} (the meta leader, ${leader})`);
    await kill(natsProcess(leader));
    return { lost: leader, killed: natsProcess(leader) };
  });
  await markers.stop();
}

async function main() {
  if (!existsSync("dist/gateway/main.js")) throw new Error("dist/ is missing: run `npm run build` first");
  creating = (async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${database}`);
    } finally {
      await admin.end();
    }
  })();
  await creating;
  db = new pg.Client({ connectionString: databaseUrl });
  // Dropped WITH (FORCE) by the clean-up: that ends this connection.
  db.on("error", () => undefined);
  await db.connect();
  const { natsUrls, natsMonitors } = await topology();
  await startAll([0, 1, 2].map((i) => processes.get(`nats-${i}`)));
  // The stream as an older release left it, on one server: the services bring it to three.
  const nc = await connect({ servers: natsUrls });
  await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: ["analytics.>"], num_replicas: 1 });
  await nc.close();
  log("NATS cluster up; starting 2 replicas of each service together on the fresh database");
  const replicas = services.flatMap((s) => pods[s]);
  await startAll(replicas);
  for (const p of replicas) inRotation.add(p);
  publishEndpoints();
  await startAll(pods.gateway);
  for (const p of pods.gateway) inRotation.add(p);
  log(`${replicas.length} service replicas and 2 gateways ready`);

  const signup = await (await fetch(`${gatewayUrls()[0]}/admin/v1/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ name: "cluster" }) })).json();
  // The run counts requests failed by kills and rollouts; its load can empty the default bucket
  // (6,000, refilled 100 a second) within a full run (a 429 in its last scenarios on 2026-11-27),
  // which would be the rate limiter working, not a failure.
  const limits = await fetch(`${gatewayUrls()[0]}/admin/v1/accounts/${signup.accountID}/settings`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 }),
  });
  if (limits.status !== 200) throw new Error(`account settings: ${limits.status} ${await limits.text()}`);
  let accessToken;
  const token = () => accessToken;
  const auth = async () => {
    const res = await fetch(`${gatewayUrls()[0]}/v2/api/auth`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ accountID: signup.accountID, apiKey: signup.apiKey }) });
    accessToken = (await res.json()).accessToken;
  };
  await auth();
  const clients = [client(0, token), client(1, token)];
  const { call } = clients[0];
  const setup = async (path, body) => {
    const res = await call("POST", path, body);
    if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  await setup("/v2/api/warehouses", WAREHOUSES.map((w) => ({ externalId: w, name: `Warehouse ${w}` })));
  await setup("/v2/api/price-lists", { externalId: "L1", name: "List 1", currency: "EUR" });
  await Promise.all(clients.map((c) => c.seed()));

  let loading = true;
  const running = load(clients, () => !loading);
  // A client that meets an error it must not ends the run at once.
  const clientFailed = running.then(() => new Promise(() => undefined));
  const markers = leadersOnly || !short ? await markerAccount() : undefined;
  const scenarioRun = (async () => {
    if (leadersOnly) return leaderChanges(markers, natsUrls, natsMonitors);
    // 1. Kills: one process at a time killed with SIGKILL and started again, for writeSeconds.
    beginScenario("kills (failed requests expected: re-sent)", { failuresAllowed: true });
    const writeStart = performance.now();
    const victims = short
      ? [["events-0", 500], ["nats-1", 1000], ["gateway-1", 500]]
      : [["events-0", 500], ["nats-1", 2000], ["gateway-1", 500], ["planning-1", 500], ["catalogue-0", 500], ["nats-2", 2000], ["pricing-1", 500], ["orders-0", 500], ["inventory-1", 500], ["gateway-0", 500], ["events-1", 500], ["nats-0", 2000]];
    log(`writing and reading from 2 clients; for ${writeSeconds} s killing ${victims.map(([n]) => n).join(", ")}`);
    for (const [i, [name, downMs]] of victims.entries()) {
      // Spread over the write time; --short, one after another (the CI's time).
      const at = short ? 0 : writeStart + ((i + 0.5) / victims.length) * writeSeconds * 1000 * 0.9;
      if (performance.now() < at) await sleep(at - performance.now());
      await killAndRestart(processes.get(name), downMs);
    }
    if (performance.now() < writeStart + writeSeconds * 1000) await sleep(writeStart + writeSeconds * 1000 - performance.now());

    // 2. Rolling updates, one replica at a time, each order; --short: one replica each.
    for (const kind of short ? ["catalogue"] : [...services, "gateway"]) {
      for (const [order, roll, slots] of [
        ["new pod first", rollNewFirst, short ? [0] : [0, 1]],
        ["stop first", rollStopFirst, short ? [1] : [0, 1]],
      ]) {
        beginScenario(`rolling update of ${kind}, ${order}`);
        for (const slot of slots) await roll(kind, slot);
      }
    }

    // 3. A frozen replica (of the service most calls go to).
    await freeze(pods.catalogue[0], 5_000, clients[0].readProducts);
    // 4. NATS leader changes.
    if (markers) await leaderChanges(markers, natsUrls, natsMonitors);
    beginScenario("after", { failuresAllowed: true });
  })();
  await Promise.race([scenarioRun, clientFailed]);
  loading = false;
  await running;
  const stats = clients.map((c) => c.stats());
  log(`load done: ${stats.map((s) => s.acknowledged).join(" + ")} acknowledged writes, ${stats.map((s) => s.retries).join(" + ")} re-sent; per scenario (requests: reads and write attempts, by when they started):`);
  if (restarts.length) log(`start-ups tried again: ${restarts.join("; ")}`);
  const problems = [...failures, ...leaderProblems];
  for (const s of scenarios.filter((s) => s.requests)) {
    log(`  ${s.name}: ${summary(s)}`);
    if (s.stoppedAt) {
      // How soon calls stopped going to the frozen replica: the last one started before SIGCONT that waited over a second.
      const waited = s.durations.filter((d) => d.at < s.resumedAt && d.ms > 1000);
      const lastWaiting = waited.length ? (Math.max(...waited.map((d) => d.at)) - s.stoppedAt) / 1000 : 0;
      const later = s.durations.filter((d) => d.at >= s.stoppedAt + 2500 && d.at < s.resumedAt);
      log(`    requests started from 2.5 s into the freeze until SIGCONT: ${summary({ requests: later.length, failed: later.filter((d) => !d.ok).length }, later)}; ${waited.length} waited over 1 s, the last of them started ${lastWaiting.toFixed(1)} s after SIGSTOP`);
    }
    if (s.failed) log(`    failed: ${s.samples.join("\n      ")}`);
    if (s.failed && !s.failuresAllowed) problems.push(`${s.name}: ${s.failed} of ${s.requests} requests failed, e.g. ${s.samples[0]}`);
  }

  await auth();
  const result = await check(db, clients, call, natsUrls);
  problems.push(...result.problems);
  log(`${result.products} products, ${result.orders} purchase orders, ${result.transactions} transactions, ${result.entries ?? "?"} update_sku entries`);
  if (problems.length) {
    console.error(`FAILED (logs in ${dir}):\n  ${problems.join("\n  ")}`);
    return 1;
  }
  log("everything held");
  return 0;
}

// ---- the end, whatever it is -------------------------------------------------------------------

let cleaning;
/**
 * Kills every process the run started, drops its database and removes its directory (keeping the
 * processes' logs when `keep`). Once, whatever ends the run: its end, a failure, a signal.
 */
function cleanUp(keep) {
  return (cleaning ??= (async () => {
    stopping = true;
    clearInterval(watchdog);
    // SIGKILL ends a stopped (SIGSTOP) process too.
    await Promise.all([...processes.values()].map(kill));
    await db?.end().catch(() => undefined);
    await creating?.catch(() => undefined);
    const admin = new pg.Client({ connectionString: adminUrl });
    admin.on("error", () => undefined);
    try {
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    } catch (error) {
      console.error(`could not drop the database ${database}: ${error.message}`);
    } finally {
      await admin.end().catch(() => undefined);
    }
    if (!keep) rmSync(dir, { recursive: true, force: true });
    else for (const name of readdirSync(dir)) if (!name.endsWith(".log")) rmSync(join(dir, name), { recursive: true, force: true });
  })());
}

async function exit(code, keep) {
  await cleanUp(keep);
  log(`took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  process.exit(code);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    console.error(`${signal}: stopping, cleaning up`);
    void exit(130, keepLogs);
  });
}
const watchdog = setInterval(() => {
  if (performance.now() - lastProgress < WATCHDOG_MS) return;
  console.error(`nothing moved for ${WATCHDOG_MS / 1000} s: stopping (logs in ${dir})`);
  void exit(1, true);
}, 5_000);

main().then(
  (code) => exit(code, keepLogs || code !== 0),
  (error) => {
    // Interrupted: the clean-up under way ends the run.
    if (cleaning) return;
    console.error(`cluster run failed (logs in ${dir}):`, error);
    return exit(1, true);
  },
);
