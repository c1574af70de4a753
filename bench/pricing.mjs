// Issue 9: POST /v2/api/prices/batch with 1000 prices (create, then update), GET /v2/api/prices
// over 100,000 prices (streamed; time, bytes, and the peak resident memory of the platform
// process, which holds the gateway and every service, sampled every 10 ms), and GET
// /v2/api/products?pageSize=1000 without prices and with 3 prices per product (target <= 1.5x).
// Usage: node bench/pricing.mjs [--start path/to/dist/local/start.js] [--prices 100000] [--no-analyze]
import { readFileSync } from "node:fs";
import pg from "pg";
import { arg, median, startPlatform } from "./platform.mjs";

const TOTAL_PRICES = Number(arg("--prices", 100_000));
const rssMiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
const child = platform.child;
const db = new pg.Client({ connectionString: platform.databaseUrl });
await db.connect();
try {
  /** The answer as text; anything but a 2xx stops the bench. */
  const call = async (method, path, body, token) => {
    const res = await fetch(platform.base + path, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return { text, json: () => JSON.parse(text) };
  };
  /** Until every service's outbox is drained: in the in-process bus a row is published only once every consumer handled it. */
  const settled = async () => {
    for (;;) {
      const schemas = (await db.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox'")).rows.map((r) => r.table_schema);
      const pending = await db.query(schemas.map((s) => `SELECT count(*)::int AS n FROM ${s}.outbox WHERE published_at IS NULL AND dead_at IS NULL`).join(" UNION ALL "));
      if (pending.rows.every((r) => r.n === 0)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const timed = async (f) => {
    const t = performance.now();
    const r = await f();
    return { ms: performance.now() - t, r };
  };
  const { token } = await platform.signUp("Pricing bench");
  const api = (method, path, body) => call(method, path, body, token);
  // The same 1000 products in a second account that never gets prices: the "without" side.
  const { token: plainToken } = await platform.signUp("Products without prices");
  const products = Array.from({ length: 1000 }, (_, i) => ({ key: `SKU-${i}`, sku: `S-${i}`, productName: `Product ${i}`, season: "SS27" }));
  await api("POST", "/v2/api/products/batch", products);
  await call("POST", "/v2/api/products/batch", products, plainToken);

  const lists = Math.max(3, Math.ceil(TOTAL_PRICES / 1000));
  for (let l = 0; l < lists; l++) await api("POST", "/v2/api/price-lists", { externalPriceListId: `L${l}`, name: `List ${l}`, currency: "EUR", defaultVat: 25 });
  // As bench/po-batch: autovacuum, off on this machine, would have analyzed the seeded tables.
  if (!process.argv.includes("--no-analyze")) await db.query("ANALYZE");
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
  // Products with and without prices, alternating, once the queue work of the writes is done.
  await settled();
  const withRuns = [];
  const withoutRuns = [];
  for (let r = 0; r < 7; r++) {
    withRuns.push((await timed(() => api("GET", "/v2/api/products?pageSize=1000"))).ms);
    withoutRuns.push((await timed(() => call("GET", "/v2/api/products?pageSize=1000", undefined, plainToken))).ms);
  }
  const withPrices = median(withRuns);
  const withoutPrices = median(withoutRuns);

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
  await db.end();
  await platform.stop();
}
