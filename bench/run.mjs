// Benchmarks of the issues' figures, on the embedded default (`npm start` with nothing set):
// start-up time, POST /v2/api/products/batch with 1000 products, GET /v2/api/products?pageSize=1000,
// and requests per second of GET /v2/api/events through the gateway (autocannon).
// Usage: npm run bench  (results printed and written to bench/results/latest.json)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import autocannon from "autocannon";

const ADMIN = "bench-admin-token-0123456789";
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const dataDir = mkdtempSync(join(tmpdir(), "analytics-bench-"));
const results = { date: new Date().toISOString(), node: process.version, cpus: (await import("node:os")).cpus().length };

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function start() {
  const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: "warn", EMBEDDED_PG_PORT: String(await freePort()) };
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  env.LOG_LEVEL = "info";
  const t0 = performance.now();
  const child = spawn(process.execPath, ["dist/local/start.js"], { env, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (c) => {
      buf += c;
      for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
        try {
          const e = JSON.parse(buf.slice(0, nl));
          if (e.msg === "platform ready") resolve(e.port);
        } catch {}
      }
    });
    child.once("exit", (code) => reject(new Error(`platform exited ${code}`)));
  });
  // Request logs would dominate the throughput run: the child keeps logging, we stop reading.
  child.stdout.resume();
  return { child, base: `http://127.0.0.1:${port}`, startupMs: Math.round(performance.now() - t0) };
}

async function json(method, url, body, token) {
  const res = await fetch(url, {
    method,
    headers: { ...(body ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const timed = async (fn) => {
  const t = performance.now();
  const r = await fn();
  return [Math.round(performance.now() - t), r];
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { child, base, startupMs } = await start();
results.startupMs = startupMs;
console.log(`start-up (cold, initdb included): ${startupMs} ms`);
try {
  const account = (await json("POST", `${base}/admin/v1/accounts`, { name: "Bench" }, ADMIN)).body;
  const token = (await json("POST", `${base}/v2/api/auth`, { accountID: account.accountID, apiKey: account.apiKey })).body.accessToken;
  const doc = (await json("GET", `${base}/v2/api/openapi.json`)).body;

  if (doc.paths["/v2/api/products/batch"]) {
    const products = (n, round) =>
      Array.from({ length: n }, (_, i) => ({
        key: `SKU-${i}`,
        sku: `SKU-${i}`,
        ean: String(7300000000000 + i),
        productName: `Product ${Math.floor(i / 10)}`,
        variantName: `Variant ${i % 10} r${round}`,
        season: "SS27",
        brandName: `Brand ${i % 20}`,
        categoryName: `Category ${i % 15}`,
        color: ["black", "white", "red"][i % 3],
        size: ["S", "M", "L", "XL"][i % 4],
        productGroupId: `PG-${Math.floor(i / 10)}`,
        variantGroupId: `VG-${Math.floor(i / 5)}`,
        externalAttributes: { origin: "bench", n: i },
      }));
    const batches = [];
    for (let round = 0; round < 3; round++) {
      const [ms, res] = await timed(() => json("POST", `${base}/v2/api/products/batch`, products(1000, round), token));
      if (res.status >= 300) throw new Error(`batch failed: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      batches.push(ms);
    }
    results.productsBatch1000Ms = { create: batches[0], update: median(batches.slice(1)), runs: batches };
    console.log(`POST /v2/api/products/batch x1000: create ${batches[0]} ms, update ${median(batches.slice(1))} ms`);
    const reads = [];
    for (let i = 0; i < 5; i++) {
      const [ms, res] = await timed(() => json("GET", `${base}/v2/api/products?pageSize=1000`, undefined, token));
      if (res.body.length !== 1000) throw new Error(`expected 1000 products, got ${res.body.length}`);
      reads.push(ms);
    }
    results.productsPage1000Ms = { median: median(reads), runs: reads };
    console.log(`GET /v2/api/products?pageSize=1000: median ${median(reads)} ms (${reads.join(", ")})`);
    // Wait for the update_sku queue entries the batches made, so the events list has content.
    for (let i = 0; i < 100; i++) {
      const res = await json("GET", `${base}/v2/api/events?pageSize=1`, undefined, token);
      results.eventsQueued = Number(res.headers.get("x-total-count"));
      if (results.eventsQueued >= 3000) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    console.log(`update_sku entries queued: ${results.eventsQueued}`);
  }

  const run = await autocannon({
    url: `${base}/v2/api/events?page=1&pageSize=10`,
    headers: { authorization: `Bearer ${token}` },
    connections: 10,
    duration: DURATION,
  });
  results.eventsList = {
    requestsPerSecond: Math.round(run.requests.average),
    latencyMs: { p50: run.latency.p50, p99: run.latency.p99 },
    non2xx: run.non2xx,
    connections: 10,
    seconds: DURATION,
  };
  console.log(
    `GET /v2/api/events (pageSize=10, 10 connections, ${DURATION}s): ${results.eventsList.requestsPerSecond} req/s, p50 ${run.latency.p50} ms, p99 ${run.latency.p99} ms, non-2xx ${run.non2xx}`,
  );
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
}
writeFileSync("bench/results/latest.json", JSON.stringify(results, null, 2) + "\n");
