// The platform as it runs on Kubernetes, on this machine: a 3-node NATS JetStream cluster, 2
// gateways and 2 replicas of each service, each its own process from dist/ (`npm run build`
// first), on a fresh database of the local Postgres. Two clients write products, prices, stock
// and purchase orders for a bounded time while one process at a time is killed with SIGKILL (a
// service replica, a NATS node, a gateway) and started again; then it checks what must hold:
// every acknowledged write stored exactly once, each product's newest update_sku entry equal to
// the product as GET /products answers it (and every acknowledged product write with its entry), planned volumes and
// the breakdown (period=total over the window, period=month from the current month) equal to a
// computation from the writes, no outbox row left unpublished, the stream on 3 servers.
//
//   node deploy/cluster/run.mjs [--short] [--seconds N] [--keep-logs]
//
// --short writes for about 20 s (the whole run about a minute; the CI's e2e/cluster.e2e.test.ts);
// without it 90 s with more kills. Environment: TEST_DATABASE_URL (an admin connection to create
// the database, default postgres://postgres@127.0.0.1:5432/postgres), NATS_SERVER (default
// nats-server on the PATH, else /usr/sbin/nats-server). Exits 0 when everything holds, 1 with
// the failures listed. Only loopback addresses; every process it started is stopped at the end.
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import pg from "pg";

const args = process.argv.slice(2);
const short = args.includes("--short");
const writeSeconds = Number(args.includes("--seconds") ? args[args.indexOf("--seconds") + 1] : short ? 20 : 90);
const keepLogs = args.includes("--keep-logs");
const id = randomBytes(4).toString("hex");
const dir = mkdtempSync(join(tmpdir(), "cluster-"));
const started = performance.now();
const log = (...parts) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)}s]`, ...parts);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ADMIN = `cluster-admin-${randomBytes(8).toString("hex")}`;
const secret = () => randomBytes(24).toString("hex");

/** Polls `check` until it answers something truthy, at most `ms`; throws `what` on timeout. */
async function until(what, ms, check, every = 250) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === "function" ? what() : what}${last ? `: ${last.message ?? last}` : ""}`);
    await sleep(every);
  }
}

/**
 * The next free port of a block below the kernel's ephemeral range (32768 and up), so that no
 * outgoing connection of the run (to Postgres, between NATS servers) takes a port before the
 * process it was picked for restarts on it.
 */
let nextPort = 20000 + Math.floor(Math.random() * 10000);
async function freePort() {
  for (;;) {
    const port = nextPort++;
    const free = await new Promise((resolve) => {
      const server = net.createServer().listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
      server.once("error", () => resolve(false));
    });
    if (free) return port;
  }
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

function define(name, command, argv, env, ready) {
  const p = { name, command, argv, env, ready, child: undefined, expectedExit: false };
  processes.set(name, p);
  return p;
}

function launch(p) {
  const out = createWriteStream(join(dir, `${p.name}.log`), { flags: "a" });
  p.child = spawn(p.command, p.argv, { env: p.env, stdio: ["ignore", "pipe", "pipe"] });
  p.child.stdout.pipe(out);
  p.child.stderr.pipe(out);
  p.expectedExit = false;
  p.child.once("exit", (code, signal) => {
    if (!p.expectedExit && !stopping) failures.push(`${p.name} exited by itself (${code ?? signal}); see ${join(dir, `${p.name}.log`)}`);
  });
}

async function kill(p) {
  if (!p.child || ended(p.child)) return;
  p.expectedExit = true;
  const exited = new Promise((r) => p.child.once("exit", r));
  p.child.kill("SIGKILL");
  await exited;
}

let stopping = false;
const failures = [];

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

async function topology() {
  const nats = [];
  for (let i = 0; i < 3; i++) nats.push({ client: await freePort(), route: await freePort() });
  const routes = nats.map((n) => `nats://127.0.0.1:${n.route}`).join(",");
  const natsUrls = nats.map((n) => `nats://127.0.0.1:${n.client}`);
  const binary = natsServerBinary();
  nats.forEach((n, i) =>
    define(`nats-${i}`, binary, ["-a", "127.0.0.1", "-p", String(n.client), "-n", `n${i}`, "-js", "-sd", join(dir, `store-${i}`), "--cluster_name", `c${id}`, "--cluster", `nats://127.0.0.1:${n.route}`, "--routes", routes], process.env, () => jetStreamAnswers(natsUrls[i])),
  );
  const common = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrls.join(","),
    NATS_STREAM: stream,
    NATS_STREAM_REPLICAS: "3",
    INTERNAL_TOKEN: internalToken,
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    // 14 processes on one Postgres: 2 gateways x (2 + 1) + 12 replicas x 2 connections at most.
    DB_POOL_MAX: "2",
  };
  const serviceUrl = {};
  for (const s of services) {
    for (const r of [0, 1]) {
      const port = await freePort();
      const health = await freePort();
      serviceUrl[`${s}-${r}`] = `http://127.0.0.1:${port}`;
      // The events service signs image URLs in webhook deliveries as the gateway does (JWT_SECRET).
      const own = s === "events" ? { JWT_SECRET: gatewaySecrets.JWT_SECRET } : {};
      define(`${s}-${r}`, process.execPath, [`dist/services/${s}/main.js`], { ...common, ...own, SERVICE_PORT: String(port), HEALTH_PORT: String(health) }, () =>
        fetch(`http://127.0.0.1:${health}/readyz`, { signal: AbortSignal.timeout(3000) }).then((res) => res.ok),
      );
    }
  }
  const gateways = [];
  for (const g of [0, 1]) {
    const port = await freePort();
    gateways.push(`http://127.0.0.1:${port}`);
    // Until the gateway spreads calls over replicas, each gateway calls one replica of each service.
    const urls = Object.fromEntries(services.map((s) => [`${s.toUpperCase()}_URL`, serviceUrl[`${s}-${g}`]]));
    define(`gateway-${g}`, process.execPath, ["dist/gateway/main.js"], { ...common, ...gatewaySecrets, ...urls, PORT: String(port) }, () =>
      fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) }).then((res) => res.ok),
    );
  }
  return { natsUrls, gateways };
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

async function startAll(names, ms = 60_000) {
  for (const n of names) launch(processes.get(n));
  await Promise.all(names.map((n) => ready(processes.get(n), ms)));
}

/** Waits until a process answers ready; one that exits meanwhile fails at once, with its log. */
async function ready(p, ms) {
  const exited = new Promise((_, reject) => p.child.once("exit", (code, signal) => reject(new Error(`${p.name} exited (${code ?? signal}) while starting: ${readFileSync(join(dir, `${p.name}.log`), "utf8").slice(-1500)}`))));
  exited.catch(() => undefined);
  await Promise.race([until(`${p.name} ready`, ms, () => p.ready()), exited]);
}

async function killAndRestart(name, downMs) {
  const p = processes.get(name);
  log(`kill -9 ${name}`);
  await kill(p);
  await sleep(downMs);
  launch(p);
  await ready(p, 60_000);
  log(`${name} back`);
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

/**
 * One client: it owns its products and orders, writes one request at a time through its gateway
 * (the other one while its own does not answer), and re-sends a write that was not acknowledged
 * until it is, as a real integration does; so the last attempt of each thing is what must be stored.
 */
function client(n, gateways, token) {
  let gateway = n;
  // `productNames`: the name of every acknowledged product write (each carries a growing number).
  const last = { products: new Map(), productNames: new Set(), prices: new Map(), stock: new Map(), orders: new Map(), transactions: new Map() };
  let counter = 0;
  let acknowledged = 0;
  let retries = 0;
  const call = async (method, path, body) => {
    const res = await fetch(gateways[gateway] + path, {
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
      const res = await call(method, path, body).catch((error) => ({ status: 0, body: String(error) }));
      if (ok(res)) return void acknowledged++;
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
      if (attempt >= 120) throw new Error(`${method} ${path} never acknowledged: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      retries++;
      gateway = 1 - gateway;
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
    /** Random writes until `deadline` (performance.now()). */
    run: async (deadline) => {
      const kinds = Object.keys(ops);
      while (performance.now() < deadline) await ops[kinds[Math.floor(Math.random() * kinds.length)]]();
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
    await until(`${schema}'s outbox relayed`, 60_000, async () => {
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM "${schema}".outbox WHERE published_at IS NULL AND dead_at IS NULL`);
      return rows[0].n === 0;
    }).catch((error) => problems.push(error.message));
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

  // Per-product queue: the newest update_sku entry is the product as stored, and every
  // acknowledged product write has its entry (a message arriving after a newer one too: its entry
  // is then followed by the newest again, so entries need not be in write order).
  let sample = "";
  const names = clients.flatMap((c) => [...c.last.productNames]);
  const order = await until(() => `each product's newest update_sku entry equal to the product, every product write with its entry (${sample})`, 60_000, async () => {
    const entries = await allPages(call, "/v2/api/events?event_type=update_sku");
    const byKey = new Map();
    for (const e of entries) (byKey.get(e.payload.key) ?? byKey.set(e.payload.key, []).get(e.payload.key)).push(e.payload);
    const stale = [...products.values()].filter((p) => canonical(byKey.get(p.key)?.at(-1)) !== canonical(p)).map((p) => p.key);
    const entered = new Set(entries.map((e) => e.payload.productName));
    const missing = names.filter((name) => !entered.has(name));
    sample = [
      stale.length ? `${stale.length} stale, e.g. ${JSON.stringify(byKey.get(stale[0])?.at(-1))} for ${JSON.stringify(products.get(stale[0]))}` : "",
      missing.length ? `${missing.length} of ${names.length} product writes without an entry, e.g. ${missing.slice(0, 5).join(", ")}` : "",
    ].filter(Boolean).join("; ");
    return stale.length || missing.length ? undefined : { entries: entries.length };
  }).catch((error) => (problems.push(error.message), undefined));

  // Planning: volumes per SKU equal to a computation from the writes.
  const expected = expectedVolumes(clients);
  await until("planned volumes equal to the writes'", 60_000, async () => {
    const res = await call("GET", `/v2/api/planning/planned-volumes?fromDate=${FROM}&toDate=${TO}&groupBy=skus`);
    const got = [...res.body].sort((a, b) => a.groupKey.localeCompare(b.groupKey));
    return JSON.stringify(got) === JSON.stringify(expected);
  }).catch((error) => problems.push(`${error.message} (expected ${JSON.stringify(expected).slice(0, 300)})`));

  // Planning: the breakdown per SKU equal to a computation from the writes, over the window as
  // one period (past: sales and PO figures) and by month from the current month (the projection).
  for (const [query, periods] of [
    [`fromDate=${FROM}&toDate=${TO}&period=total`, [{ start: FROM, end: TO }]],
    [`fromDate=${MONTH_FROM}&toDate=${MONTH_TO}&period=month`, [{ start: MONTH_FROM, end: day(monthsLater(CURRENT, 1) - 86_400_000) }, { start: day(monthsLater(CURRENT, 1)), end: MONTH_TO }]],
  ]) {
    const computed = expectedBreakdown(clients, periods);
    let differences = [];
    await until(() => `the breakdown (${query}) equal to the writes': ${differences.length} differences, e.g. ${differences.slice(0, 5).join("; ")}`, 60_000, async () => {
      const res = await call("GET", `/v2/api/planning/breakdown?${query}&groupBy=skus`);
      if (res.status !== 200) throw new Error(`GET /planning/breakdown?${query}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      differences = breakdownDifferences(computed, res.body, periods);
      return differences.length === 0;
    })
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

async function main() {
  if (!existsSync("dist/gateway/main.js")) throw new Error("dist/ is missing: run `npm run build` first");
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { natsUrls, gateways } = await topology();
    const natsNames = [0, 1, 2].map((i) => `nats-${i}`);
    await startAll(natsNames);
    // The stream as an older release left it, on one server: the services bring it to three.
    const nc = await connect({ servers: natsUrls });
    await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: ["analytics.>"], num_replicas: 1 });
    await nc.close();
    log("NATS cluster up; starting 2 replicas of each service together on the fresh database");
    const serviceNames = services.flatMap((s) => [`${s}-0`, `${s}-1`]);
    await startAll(serviceNames, 90_000);
    await startAll(["gateway-0", "gateway-1"]);
    log(`${serviceNames.length} service replicas and 2 gateways ready`);

    const signup = await (await fetch(`${gateways[0]}/admin/v1/accounts`, { method: "POST", headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" }, body: JSON.stringify({ name: "cluster" }) })).json();
    let accessToken;
    const token = () => accessToken;
    const auth = async () => {
      const res = await fetch(`${gateways[0]}/v2/api/auth`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ accountID: signup.accountID, apiKey: signup.apiKey }) });
      accessToken = (await res.json()).accessToken;
    };
    await auth();
    const clients = [client(0, gateways, token), client(1, gateways, token)];
    const { call } = clients[0];
    const setup = async (path, body) => {
      const res = await call("POST", path, body);
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    await setup("/v2/api/warehouses", WAREHOUSES.map((w) => ({ externalId: w, name: `Warehouse ${w}` })));
    await setup("/v2/api/price-lists", { externalId: "L1", name: "List 1", currency: "EUR" });
    await Promise.all(clients.map((c) => c.seed()));

    // Writes for writeSeconds; meanwhile one process at a time is killed and started again.
    const writeStart = performance.now();
    const deadline = writeStart + writeSeconds * 1000;
    const victims = short
      ? [["events-0", 500], ["nats-1", 1000], ["gateway-1", 500]]
      : [["events-0", 500], ["nats-1", 2000], ["gateway-1", 500], ["planning-1", 500], ["catalogue-0", 500], ["nats-2", 2000], ["pricing-1", 500], ["orders-0", 500], ["inventory-1", 500], ["gateway-0", 500], ["events-1", 500], ["nats-0", 2000]];
    const chaos = (async () => {
      for (const [i, [name, downMs]] of victims.entries()) {
        const at = writeStart + ((i + 0.5) / victims.length) * writeSeconds * 1000 * 0.9;
        if (performance.now() < at) await sleep(at - performance.now());
        await killAndRestart(name, downMs);
      }
    })();
    log(`writing for ${writeSeconds} s from 2 clients, killing ${victims.map(([n]) => n).join(", ")}`);
    await Promise.all([...clients.map((c) => c.run(deadline)), chaos]);
    const stats = clients.map((c) => c.stats());
    log(`writes done: ${stats.map((s) => s.acknowledged).join(" + ")} acknowledged requests, ${stats.map((s) => s.retries).join(" + ")} retries; checking`);

    await auth();
    const result = await check(db, clients, call, natsUrls);
    const problems = [...failures, ...result.problems];
    log(`${result.products} products, ${result.orders} purchase orders, ${result.transactions} transactions, ${result.entries ?? "?"} update_sku entries`);
    if (problems.length) {
      console.error(`FAILED (logs in ${dir}):\n  ${problems.join("\n  ")}`);
      return 1;
    }
    log("everything held");
    return 0;
  } finally {
    stopping = true;
    await Promise.all([...processes.values()].map(kill));
    await db.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

const timeLimit = setTimeout(() => {
  console.error(`the run took over ${writeSeconds + 150} s: stopping`);
  stopping = true;
  for (const p of processes.values()) if (p.child && !ended(p.child)) p.child.kill("SIGKILL");
  process.exit(1);
}, (writeSeconds + 150) * 1000);
timeLimit.unref();

main()
  .then((code) => {
    if (code === 0 && !keepLogs) rmSync(dir, { recursive: true, force: true });
    log(`took ${((performance.now() - started) / 1000).toFixed(0)} s`);
    process.exit(code);
  })
  .catch((error) => {
    console.error(`cluster run failed (logs in ${dir}):`, error);
    process.exit(1);
  });
