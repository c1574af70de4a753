// Issue 13 item 8: the req/s cost of compressing GET /v2/api/products?pageSize=100.
// Starts the platform on a fresh database of the test Postgres, writes 100 products, then runs
// autocannon (10 connections, BENCH_SECONDS each, default 10) without Accept-Encoding, with gzip
// and with br, alternating, and prints req/s, latency and bytes per answer.
// Usage: npm run build && node bench/compression.mjs [--start path/to/dist/local/start.js]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import pg from "pg";

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const startScript = arg("--start", "dist/local/start.js");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const ADMIN = "bench-admin-token-0123456789";

const name = `bench_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const child = spawn(process.execPath, [startScript], {
  env: { ...process.env, DATABASE_URL: url.toString(), PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN: ADMIN, LOG_LEVEL: "info", DATA_DIR: mkdtempSync(join(tmpdir(), "compress-")) },
  stdio: ["ignore", "pipe", "inherit"],
});
try {
  const base = await new Promise((resolve, reject) => {
    let buf = "";
    const onData = (c) => {
      buf += c;
      for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
        try {
          const e = JSON.parse(buf.slice(0, nl));
          if (e.msg === "platform ready") {
            child.stdout.off("data", onData);
            child.stdout.resume();
            resolve(`http://127.0.0.1:${e.port}`);
          }
        } catch {}
      }
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => reject(new Error(`platform exited ${code}`)));
  });
  const call = async (method, path, body, token) => {
    const res = await fetch(base + path, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: await res.json() };
  };
  const account = (await call("POST", "/admin/v1/accounts", { name: "bench" }, ADMIN)).body;
  const token = (await call("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).body.accessToken;
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
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
