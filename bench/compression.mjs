// Issue 13 item 8: the req/s cost of compressing GET /v2/api/products?pageSize=100.
// Starts the platform on a fresh database of the test Postgres, writes 100 products, then runs
// autocannon (10 connections, BENCH_SECONDS each, default 10) without Accept-Encoding, with gzip
// and with br, alternating, and prints req/s, latency and bytes per answer.
// Usage: npm run build && node bench/compression.mjs [--start path/to/dist/local/start.js]
import autocannon from "autocannon";
import { arg, startPlatform } from "./platform.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
const { base, call } = platform;
try {
  const { token } = await platform.signUp("bench");
  const products = Array.from({ length: 100 }, (_, i) => ({
    key: `SKU-${i}`, sku: `SKU-${i}`, ean: `73123456${String(i).padStart(5, "0")}`, productName: `Merino crew neck ${i}`, variantName: "Black",
    season: "AW26", brandName: "Acme", categoryName: "Knitwear", color: "Black", size: "M", productGroupId: `G${i % 10}`, variantGroupId: `V${i}`,
    costCalculationPrice: 12.5, externalAttributes: { origin: "PT", fabric: "merino wool 100%" },
  }));
  const written = await call("POST", "/v2/api/products/batch", products, token);
  if (written.status !== 201) throw new Error(`batch: ${written.status}`);
  const path = "/v2/api/products?pageSize=100";
  const run = (encoding) =>
    new Promise((resolve, reject) =>
      autocannon(
        { url: base + path, connections: 10, duration: SECONDS, headers: { authorization: `Bearer ${token}`, ...(encoding ? { "accept-encoding": encoding } : {}) } },
        (err, r) => (err ? reject(err) : resolve({ reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, bytesPerAnswer: Math.round(r.throughput.total / r.requests.total), non2xx: r.non2xx })),
      ),
    );
  const results = { none: [], gzip: [], br: [] };
  for (let round = 0; round < 2; round++) for (const enc of ["none", "gzip", "br"]) results[enc].push(await run(enc === "none" ? undefined : enc));
  for (const [enc, runs] of Object.entries(results)) {
    const reqPerSec = runs.map((r) => Math.round(r.reqPerSec));
    console.log(`${enc.padEnd(5)} req/s ${reqPerSec.join(" / ")}  p50 ${runs.map((r) => r.p50).join("/")} ms  p99 ${runs.map((r) => r.p99).join("/")} ms  ~${runs[0].bytesPerAnswer} bytes per answer  non-2xx ${runs.reduce((n, r) => n + r.non2xx, 0)}`);
  }
} finally {
  await platform.stop();
}
