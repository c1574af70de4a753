// Issue 45 item 15: does every process's memory level off? The deployables each in a process of
// their own on JetStream (startSeparately, as production runs them), under a steady, moderate mix
// for --minutes (default 60): product batches (each product's update_sku entry is delivered to
// a local webhook receiver), single and paged product reads, stock writes, price rows, purchase
// orders written again and again, sales receipts, event queue reads, planning answers
// (conditional, with If-None-Match) and sales plans, and unknown paths (404).
// Every --sample-seconds (10) it reads each process's resident memory (/proc/<pid>/status VmRSS)
// and V8 heap in use (its /metrics, nodejs_heap_size_used_bytes). After the warm-up (--warmup, the
// first 20 % of the run) it fits a least-squares line through each process's samples: the slope
// in MiB a minute. Any RSS slope at or above --max-slope (0.1) exits 1, after the table.
// Results (with every sample, to draw the curve) go to bench/results/soak.json (--out).
//
//   node bench/soak.mjs [--minutes 60] [--rate 16] [--clients 4] [--batch 50] [--warmup 0.2] [--out file]   (npm run build first)
//   node bench/soak.mjs --from bench/results/soak.json [--warmup 0.3]    (a saved run's analysis again)
//
// --rate is the client's requests a second in all (paced, not as fast as the platform goes). For a
// heap snapshot of one process, start it with BENCH_GATEWAY_NODE_ARGS="--heapsnapshot-signal=SIGUSR2
// --diagnostic-dir=/tmp/snaps" (or BENCH_NODE_ARGS for every process) and `kill -USR2` the pid the
// bench prints; a snapshot's own allocation shows in the RSS, so leave it out of a measuring run.
// Needs the local Postgres and NATS; makes its own database and stream and removes them.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { arg, median, startSeparately } from "./platform.mjs";

const MINUTES = Number(arg("--minutes", 60));
const RATE = Number(arg("--rate", 16));
const CLIENTS = Number(arg("--clients", 4));
const BATCH = Number(arg("--batch", 50));
const WARMUP = Number(arg("--warmup", 0.2));
const SAMPLE_SECONDS = Number(arg("--sample-seconds", 10));
const MAX_SLOPE = Number(arg("--max-slope", 0.1));
const OUT = arg("--out", "bench/results/soak.json");
const KEYS = 500; // products per account: batches and reads go round them
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The webhook receiver: counts deliveries (signatures are bench/webhooks.mjs's concern). */
async function startReceiver() {
  const state = { deliveries: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      state.deliveries++;
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { state, url: `http://127.0.0.1:${server.address().port}/hook`, close: () => new Promise((r) => server.close(r)) };
}

/** Resident memory of a process, MiB. */
const rssOf = (pid) => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

/** V8 heap in use of a process (its /metrics), MiB; undefined if it did not answer. */
async function heapOf(url) {
  const text = await fetch(url).then((r) => r.text(), () => "");
  const m = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)/m.exec(text);
  return m ? Number(m[1]) / 2 ** 20 : undefined;
}

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxy / sxx;
}

/**
 * Prints and answers, from the samples of a run of `minutes`: per process its RSS at the start,
 * after the warm-up, at the end, its peak, and the slopes of RSS and heap after the warm-up; and
 * the curve, each process's median RSS in each tenth of the run (a leak climbs; V8 sizing its heap
 * up levels off).
 */
function analyse(samples, minutes, warmup) {
  const names = Object.keys(samples[0]).filter((k) => typeof samples[0][k] === "object");
  const warmupEnd = minutes * 60 * warmup;
  const after = samples.filter((s) => s.at >= warmupEnd);
  const table = names.map((n) => {
    const fit = (what) => +slope(after.filter((s) => s[n][what] !== null).map((s) => [s.at / 60, s[n][what]])).toFixed(3);
    return {
      process: n,
      rssStart: samples[0][n].rss,
      rssAfterWarmup: after[0][n].rss,
      rssEnd: samples.at(-1)[n].rss,
      rssMax: Math.max(...samples.map((s) => s[n].rss)),
      rssSlope: fit("rss"),
      heapAfterWarmup: after[0][n].heap,
      heapEnd: samples.at(-1)[n].heap,
      heapSlope: fit("heap"),
    };
  });
  console.log(`slopes after the first ${(warmupEnd / 60).toFixed(1)} min (${after.length} samples), MiB a minute (target: RSS under ${MAX_SLOPE}):`);
  console.log("process     RSS start  after warm-up    end    max   slope | heap after warm-up    end   slope");
  const mib = (v, w) => (v === null ? "-" : v.toFixed(0)).padStart(w);
  for (const r of table) {
    console.log(`${r.process.padEnd(10)} ${mib(r.rssStart, 9)} ${mib(r.rssAfterWarmup, 14)} ${mib(r.rssEnd, 6)} ${mib(r.rssMax, 6)} ${r.rssSlope.toFixed(3).padStart(7)} | ${mib(r.heapAfterWarmup, 18)} ${mib(r.heapEnd, 6)} ${r.heapSlope.toFixed(3).padStart(7)}`);
  }
  const tenths = Array.from({ length: 10 }, (_, i) => samples.filter((s) => Math.min(9, Math.floor((s.at / (minutes * 60)) * 10)) === i));
  const curve = Object.fromEntries(names.map((n) => [n, tenths.map((t) => (t.length ? Math.round(median(t.map((s) => s[n].rss))) : null))]));
  console.log(`median RSS (MiB) in each tenth of the run (${(minutes / 10).toFixed(1)} min each):`);
  for (const n of names) console.log(`${n.padEnd(10)} ${curve[n].map((v) => String(v ?? "-").padStart(4)).join(" ")}`);
  return { table, curve };
}

/** Whether a process's RSS still grew after the warm-up (said on stderr). */
function growing(table) {
  const grew = table.filter((r) => !(r.rssSlope < MAX_SLOPE));
  if (grew.length) console.error(`FAILED: RSS still growing after the warm-up: ${grew.map((r) => `${r.process} ${r.rssSlope} MiB/min`).join(", ")}`);
  return grew.length > 0;
}

// --from results.json: the analysis of a saved run again (e.g. with another --warmup), without running.
if (arg("--from", undefined)) {
  const saved = JSON.parse(readFileSync(arg("--from", undefined), "utf8"));
  const { table } = analyse(saved.samples, saved.minutes, Number(arg("--warmup", saved.warmup)));
  process.exit(growing(table) ? 1 : 0);
}

const receiver = await startReceiver();
const platform = await startSeparately({ env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
let failed = false;
try {
  console.log(`pids: ${Object.entries(platform.processes).map(([n, c]) => `${n} ${c.pid}`).join(", ")}`);
  const statuses = {}; // "op status" -> count
  /** One request; its status is counted under `op`. Anything but the expected statuses counts as unexpected. */
  const request = async (op, method, path, { body, client, headers = {}, retried = false } = {}) => {
    const res = await fetch(platform.base + path, {
      method,
      headers: { ...(body ? { "content-type": "application/json" } : {}), ...(client ? { authorization: `Bearer ${client.token}` } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    const key = `${op} ${res.status}`;
    statuses[key] = (statuses[key] ?? 0) + 1;
    // An expired token (TOKEN_TTL_SECONDS, an hour): a new one, as a client does, and the request again.
    if (res.status === 401 && client && !retried) {
      client.token = await client.reauthenticate();
      return request(op, method, path, { body, client, headers, retried: true });
    }
    return { status: res.status, headers: res.headers, text };
  };
  const must = async (...args) => {
    const res = await request(...args);
    if (res.status >= 300) throw new Error(`${args[1]} ${args[2]}: ${res.status} ${res.text.slice(0, 300)}`);
    return res;
  };

  const month = new Date().toISOString().slice(0, 7);
  const product = (c, k, round) => ({ key: `K-${k}`, sku: `S-${c}-${k}`, ean: String(7300000000000 + k), season: "SS27", productName: `P ${k} r${round}` });
  const clients = [];
  for (let c = 0; c < CLIENTS; c++) {
    const client = await platform.signUp(`Soak ${c}`);
    await must("setup", "POST", "/v2/api/webhooks", { body: { url: receiver.url }, client });
    for (let k = 0; k < KEYS; k += 250) await must("setup", "POST", "/v2/api/products/batch", { body: Array.from({ length: 250 }, (_, i) => product(c, k + i, 0)), client });
    await must("setup", "POST", "/v2/api/warehouses", { body: Array.from({ length: 4 }, (_, w) => ({ externalId: `W${w}`, name: `Warehouse ${w}` })), client });
    await must("setup", "POST", "/v2/api/price-lists", { body: { externalPriceListId: "L0", name: "List 0", currency: "EUR", defaultVat: 25 }, client });
    clients.push(client);
  }

  // The mix: each client goes round it, one operation per turn.
  const ops = [
    async (cl, c, round) => {
      // A batch of updates (each a webhook delivery), with an Idempotency-Key as a careful client sends.
      const from = (round * BATCH) % KEYS;
      const body = Array.from({ length: BATCH }, (_, i) => product(c, (from + i) % KEYS, round));
      await request("products/batch", "POST", "/v2/api/products/batch", { body, client: cl, headers: { "idempotency-key": randomUUID() } });
    },
    (cl, c, round) => request("products?page", "GET", `/v2/api/products?page=${1 + (round % 10)}&pageSize=50`, { client: cl }),
    (cl, c, round) => request("products?key", "GET", `/v2/api/products?key=K-${(round * 7) % KEYS}`, { client: cl }),
    (cl, c, round) => {
      const date = new Date(Date.UTC(2026, 0, 1) + round * 60_000).toISOString();
      const body = Array.from({ length: BATCH }, (_, i) => ({ key: `K-${(round + i) % KEYS}`, availableQuantity: i + round, physicalQuantity: i + round + 1, date, externalWarehouseID: `W${round % 4}` }));
      return request("warehouses/stock", "POST", "/v2/api/warehouses/stock", { body, client: cl });
    },
    (cl) => request("events", "GET", "/v2/api/events?pageSize=20", { client: cl }),
    async (cl) => {
      const res = await request("planned-volumes", "GET", `/v2/api/planning/planned-volumes?groupBy=seasons&fromDate=${month}-01&toDate=${month}-28`, { client: cl, headers: cl.etag ? { "if-none-match": cl.etag } : {} });
      cl.etag = res.headers.get("etag") ?? cl.etag;
    },
    (cl, c, round) => request("sales-plans/batch", "POST", "/v2/api/planning/sales-plans/batch", { body: Array.from({ length: 10 }, (_, i) => ({ key: `K-${(round + i) % KEYS}`, channel: 1, month, volume: round % 100 })), client: cl }),
    (cl, c, round) => {
      // Prices: one list, 50 rows, each round a new price (cents as text first: a float is refused past 10 decimals).
      const body = Array.from({ length: BATCH }, (_, i) => ({ listExternalID: "L0", key: `K-${(round + i) % KEYS}`, price: Number(`${10 + (round % 90)}.${String(i % 100).padStart(2, "0")}`) }));
      return request("prices/batch", "POST", "/v2/api/prices/batch", { body, client: cl });
    },
    (cl, c, round) => {
      // Purchase orders: 20 order numbers written over and over, 5 lines each (a new version each time).
      const items = Array.from({ length: 5 }, (_, i) => ({ externalRowID: String(i + 1), key: `K-${(round + i) % KEYS}`, quantity: 1 + (round % 50), deliveryDate: `${month}-20` }));
      return request("purchaseorders/batch", "POST", "/v2/api/purchaseorders/batch", { body: [{ externalPONo: `PO-${round % 20}`, orderDate: `${month}-01`, externalWarehouseID: `W${round % 4}`, items }], client: cl });
    },
    (cl, c, round) => {
      // Sales: a receipt of 3 lines (each a sale line planning folds in).
      const items = Array.from({ length: 3 }, (_, i) => ({ externalItemID: String(i + 1), key: `K-${(round + i) % KEYS}`, quantity: 1 }));
      return request("transactions", "POST", "/v2/api/transactions", { body: [{ externalTransactionID: `T-${c}-${round}`, createdDate: new Date().toISOString(), currencyCode: "EUR", items }], client: cl });
    },
    (cl, c, round) => request("unknown path", "GET", `/v2/api/no-such-thing-${c}-${round}`, { client: cl }),
  ];

  // The samples: seconds since the start, and per process RSS and heap (MiB).
  const samples = [];
  const names = Object.keys(platform.processes);
  const t0 = performance.now();
  const end = t0 + MINUTES * 60_000;
  const sample = async () => {
    const heaps = await Promise.all(names.map((n) => heapOf(platform.metricsUrls[n])));
    const at = (performance.now() - t0) / 1000;
    const row = { at, deliveries: receiver.state.deliveries };
    names.forEach((n, i) => {
      const child = platform.processes[n];
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${n} exited ${child.exitCode ?? child.signalCode}`);
      row[n] = { rss: +rssOf(child.pid).toFixed(1), heap: heaps[i] === undefined ? null : +heaps[i].toFixed(1) };
    });
    samples.push(row);
  };
  const sampler = (async () => {
    for (let next = t0; performance.now() < end; next += SAMPLE_SECONDS * 1000) {
      await sleep(Math.max(0, next - performance.now()));
      await sample();
      const last = samples.at(-1);
      if (samples.length % 30 === 1) console.log(`${(last.at / 60).toFixed(1)} min: ${names.map((n) => `${n} ${last[n].rss.toFixed(0)}`).join(", ")} MiB RSS; ${last.deliveries} deliveries`);
    }
  })();
  // Each client paced at RATE / CLIENTS requests a second; a slow answer makes its turn late, not more of them.
  const interval = (1000 * CLIENTS) / RATE;
  await Promise.all([
    sampler,
    ...clients.map(async (cl, c) => {
      await sleep((interval * c) / CLIENTS);
      for (let round = 0, next = performance.now(); performance.now() < end; round++) {
        await ops[(round + c) % ops.length](cl, c, round);
        next += interval;
        await sleep(Math.max(0, next - performance.now()));
      }
    }),
  ]);

  const { table, curve } = analyse(samples, MINUTES, WARMUP);
  const requests = Object.entries(statuses).reduce((n, [k, v]) => (k.startsWith("setup ") ? n : n + v), 0);
  const serverErrors = Object.entries(statuses).filter(([k]) => Number(k.split(" ").at(-1)) >= 500);
  console.log(`${MINUTES} min, ${requests} requests (${(requests / (MINUTES * 60)).toFixed(1)}/s), ${receiver.state.deliveries} webhook deliveries; statuses ${JSON.stringify(statuses)}`);
  mkdirSync(dirname(OUT), { recursive: true });
  const result = { date: new Date().toISOString(), minutes: MINUTES, rate: RATE, clients: CLIENTS, batch: BATCH, warmup: WARMUP, requests, deliveries: receiver.state.deliveries, statuses, table, curve, samples };
  writeFileSync(OUT, JSON.stringify(result, null, 1));
  console.log(`written to ${OUT}`);
  failed = growing(table);
  if (serverErrors.length) {
    console.error(`FAILED: server errors: ${JSON.stringify(Object.fromEntries(serverErrors))}`);
    failed = true;
  }
} finally {
  await platform.stop();
  await receiver.close();
}
if (failed) process.exitCode = 1;
