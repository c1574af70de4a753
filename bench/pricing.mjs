// Issue 9: POST /v2/api/prices/batch with 1000 prices (create, then update), GET /v2/api/prices
// over 100,000 prices (streamed; time, bytes, and the peak resident memory of the platform
// process, which holds the gateway and every service, sampled every 10 ms), and GET
// /v2/api/products?pageSize=1000 without prices and with 3 prices per product (target <= 1.5x).
// Usage: node bench/pricing.mjs [--start path/to/dist/local/start.js] [--prices 100000]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const startScript = arg("--start", "dist/local/start.js");
const TOTAL_PRICES = Number(arg("--prices", 100_000));
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const ADMIN = "bench-admin-token-0123456789";
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

const name = `bench_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const child = spawn(process.execPath, [startScript], {
  env: { ...process.env, DATABASE_URL: url.toString(), PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN: ADMIN, LOG_LEVEL: "info", DATA_DIR: mkdtempSync(join(tmpdir(), "pricing-")) },
  stdio: ["ignore", "pipe", "inherit"],
});
try {
  const base = await new Promise((resolve, reject) => {
    let buf = "";
    child.stdout.on("data", (c) => {
      buf += c;
      for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
        try {
          const e = JSON.parse(buf.slice(0, nl));
          if (e.msg === "platform ready") resolve(`http://127.0.0.1:${e.port}`);
        } catch {}
      }
    });
    child.once("exit", (code) => reject(new Error(`platform exited ${code}`)));
  });
  const call = async (method, path, body, token) => {
    const res = await fetch(base + path, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return { text, json: () => JSON.parse(text) };
  };
  const timed = async (f) => {
    const t = performance.now();
    const r = await f();
    return { ms: performance.now() - t, r };
  };
  const account = (await call("POST", "/admin/v1/accounts", { name: "Pricing bench" }, ADMIN)).json();
  const token = (await call("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).json().accessToken;
  const api = (method, path, body) => call(method, path, body, token);

  await api("POST", "/v2/api/products/batch", Array.from({ length: 1000 }, (_, i) => ({ key: `SKU-${i}`, sku: `S-${i}`, productName: `Product ${i}`, season: "SS27" })));
  const productsMs = async () => {
    const runs = [];
    for (let r = 0; r < 7; r++) runs.push((await timed(() => api("GET", "/v2/api/products?pageSize=1000"))).ms);
    return median(runs);
  };
  const withoutPrices = await productsMs();

  const lists = Math.max(3, Math.ceil(TOTAL_PRICES / 1000));
  for (let l = 0; l < lists; l++) await api("POST", "/v2/api/price-lists", { externalPriceListId: `L${l}`, name: `List ${l}`, currency: "EUR", defaultVat: 25 });
  const batch = (l, round) => Array.from({ length: 1000 }, (_, i) => ({ listExternalID: `L${l}`, key: `SKU-${i}`, price: money(10 + round, i), customPrices: { outlet: money(5, i) } }));
  // Whole and cents written as text first: 10 + i / 100 would be a float the edge refuses (> 10 decimals).
  const money = (whole, i) => Number(`${whole + Math.floor(i / 100)}.${String(i % 100).padStart(2, "0")}`);
  const check = (res) => {
    const failed = res.json().filter((r) => r.statusCode >= 300);
    if (failed.length) throw new Error(`${failed.length} prices failed: ${JSON.stringify(failed[0])}`);
    return res;
  };
  const created = [];
  for (let l = 0; l < 3; l++) created.push((await timed(() => api("POST", "/v2/api/prices/batch", batch(l, 0)).then(check))).ms);
  const updated = [];
  for (let round = 1; round <= 5; round++) updated.push((await timed(() => api("POST", "/v2/api/prices/batch", batch(round % 3, round)).then(check))).ms);
  const withPrices = await productsMs();

  for (let l = 3; l < lists; l++) created.push((await timed(() => api("POST", "/v2/api/prices/batch", batch(l, 0)).then(check))).ms);

  // GET /prices, all of them, streamed; the platform's resident memory sampled meanwhile.
  const rssBefore = rssMiB(child.pid);
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(child.pid))), 10);
  const all = await timed(() => api("GET", "/v2/api/prices"));
  clearInterval(sampler);
  peak = Math.max(peak, rssMiB(child.pid));
  const count = all.r.json().length;
  const paged = await timed(() => api("GET", "/v2/api/prices?page=50&pageSize=1000"));

  const result = {
    "POST /prices/batch 1000 new (median ms)": Math.round(median(created)),
    "POST /prices/batch 1000 updates (median ms)": Math.round(median(updated)),
    [`GET /prices, ${count} prices streamed (ms)`]: Math.round(all.ms),
    "GET /prices body (MB)": +(all.r.text.length / 1e6).toFixed(1),
    "platform RSS before / peak during GET /prices (MiB)": `${Math.round(rssBefore)} / ${Math.round(peak)}`,
    "GET /prices?page=50&pageSize=1000 (ms)": Math.round(paged.ms),
    "GET /products?pageSize=1000 without prices (median ms)": Math.round(withoutPrices),
    "GET /products?pageSize=1000 with 3 prices each (median ms)": Math.round(withPrices),
    "ratio with / without": +(withPrices / withoutPrices).toFixed(2),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
