// Issue 10: POST /v2/api/warehouses/stock with 10,000 rows (10 batches of 1000) and
// POST /v2/api/storetrafficevents with 10,000 events (one request), through the gateway, on the
// platform started with DATABASE_URL (a fresh database) and NATS_URL when set. Medians of rounds;
// each round writes new snapshot dates (so every row is applied) and new event times.
// Usage: node bench/inventory.mjs [--start path/to/dist/local/start.js] [--rounds N]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const startScript = arg("--start", "dist/local/start.js");
const ROUNDS = Number(arg("--rounds", 5));
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const ADMIN = "bench-admin-token-0123456789";
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const SKUS = 1000;
const WAREHOUSES = 10;

const name = `bench_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const child = spawn(process.execPath, [startScript], {
  env: { ...process.env, DATABASE_URL: url.toString(), PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN: ADMIN, LOG_LEVEL: "info", DATA_DIR: mkdtempSync(join(tmpdir(), "inv-")) },
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
    const res = await fetch(base + path, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const account = await call("POST", "/admin/v1/accounts", { name: "Inventory bench" }, ADMIN);
  const token = (await call("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).accessToken;
  const products = Array.from({ length: SKUS }, (_, i) => ({ key: `SKU-${i}`, sku: `S${i}`, ean: String(7300000000000 + i) }));
  await call("POST", "/v2/api/products/batch", products, token);
  await call("POST", "/v2/api/warehouses", Array.from({ length: WAREHOUSES }, (_, w) => ({ externalId: `W${w}`, name: `Warehouse ${w}` })), token);

  const stockTimes = [];
  const trafficTimes = [];
  for (let round = 0; round < ROUNDS; round++) {
    const date = new Date(Date.UTC(2026, 0, 1 + round)).toISOString();
    const t0 = performance.now();
    for (let w = 0; w < WAREHOUSES; w++) {
      const rows = products.map((p, i) => ({ key: p.key, availableQuantity: i + round, physicalQuantity: i + round + 1, date, externalWarehouseID: `W${w}` }));
      const res = await call("POST", "/v2/api/warehouses/stock", rows, token);
      if (res.some((r) => r.statusCode !== 200 || r.message !== "stock updated")) throw new Error(`stock round ${round}: ${JSON.stringify(res.find((r) => r.message !== "stock updated"))}`);
    }
    stockTimes.push(performance.now() - t0);

    const start = Date.UTC(2026, 0, 1) + round * 10_000 * 60_000;
    const events = Array.from({ length: 10_000 }, (_, i) => ({ storeTrafficCounterID: `C${i % 20}`, eventTime: new Date(start + i * 60_000).toISOString(), incomingTraffic: i % 50, outgoingTraffic: i % 40 }));
    const t1 = performance.now();
    const res = await call("POST", "/v2/api/storetrafficevents", events, token);
    trafficTimes.push(performance.now() - t1);
    if (res.message !== "recorded: 10000 created, 0 updated") throw new Error(`traffic round ${round}: ${res.message}`);
  }
  const ms = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, ${xs.length} rounds)`;
  console.log(`POST /v2/api/warehouses/stock, 10,000 rows in 10 batches of 1000: ${ms(stockTimes)}`);
  console.log(`POST /v2/api/storetrafficevents, 10,000 events in one request: ${ms(trafficTimes)}`);
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
