// Issue 11: POST /v2/api/purchaseorders/batch of 500 orders x 10 items (a first write, and an
// identical re-send that must change nothing), against a raw COPY of the same 500 order rows and
// 5000 item rows into the orders tables (psql \copy, server-side time). Medians of alternating
// rounds. Target: COPY time / first-write time >= 0.4.
// Usage: node bench/po-batch.mjs [--start path/to/dist/local/start.js] [--rounds N]
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const startScript = arg("--start", "dist/local/start.js");
const ROUNDS = Number(arg("--rounds", 5));
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const ADMIN = "bench-admin-token-0123456789";
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ORDERS = 500;
const ITEMS = 10;
const SKUS = 1000;

const order = (round, i) => ({
  externalPONo: `PO-${round}-${i}`,
  orderDate: "2026-03-01T00:00:00Z",
  deliveryDate: "2026-04-15T00:00:00Z",
  deliveryStatus: i % 6,
  externalWarehouseID: `WH-${i % 4}`,
  supplier: `Supplier ${i % 20}`,
  label: "SS27",
  items: Array.from({ length: ITEMS }, (_, j) => ({
    externalRowID: String(j + 1),
    key: `SKU-${(i * ITEMS + j) % SKUS}`,
    quantity: 10 + j,
    totalPriceNet: 100.5 + j,
    totalPriceVat: 25.13,
    totalPriceCurrency: "EUR",
    deliveries: j % 3 === 0 ? [{ deliveryID: `D-${i}-${j}`, quantity: 3, deliveryDate: "2026-04-01T00:00:00Z" }] : [],
  })),
});

const name = `bench_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean), startScript], {
  env: { ...process.env, DATABASE_URL: url.toString(), PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN: ADMIN, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info", DATA_DIR: mkdtempSync(join(tmpdir(), "floor-")) },
  stdio: ["ignore", "pipe", "inherit"],
});
delete child.env;
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
            if (process.env.BENCH_LOG_LEVEL) child.stdout.pipe(process.stderr);
            else child.stdout.resume();
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
    return res.json();
  };
  const account = await call("POST", "/admin/v1/accounts", { name: "PO bench" }, ADMIN);
  const token = (await call("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).accessToken;
  const products = Array.from({ length: SKUS }, (_, i) => ({ key: `SKU-${i}`, sku: `S-${i}` }));
  const made = await call("POST", "/v2/api/products/batch", products, token);
  if (made.length !== SKUS) throw new Error("products not created");

  const csv = (v) => (v === null || v === undefined ? "" : `"${String(v).replace(/"/g, '""')}"`);
  /** The same rows as one first write, COPYed into the orders tables in one transaction; server time in ms. */
  function copy(round) {
    const accountId = randomUUID();
    const orderRows = [];
    const itemRows = [];
    for (let i = 0; i < ORDERS; i++) {
      const o = order(`c${round}`, i);
      const id = randomUUID();
      orderRows.push([id, accountId, "key", o.externalPONo, o.orderDate, o.deliveryDate, o.deliveryStatus, o.externalWarehouseID, o.supplier, o.label, createHash("sha256").update(JSON.stringify(o)).digest("base64")].map(csv).join(","));
      o.items.forEach((it, j) =>
        itemRows.push(
          [randomUUID(), accountId, id, j, it.externalRowID, it.key, it.key, it.quantity, it.totalPriceNet, it.totalPriceVat, it.totalPriceCurrency, JSON.stringify(it.deliveries), it.deliveries.reduce((s, d) => s + d.quantity, 0)]
            .map(csv)
            .join(","),
        ),
      );
    }
    const dir = mkdtempSync(join(tmpdir(), "po-copy-"));
    writeFileSync(join(dir, "o.csv"), orderRows.join("\n"));
    writeFileSync(join(dir, "i.csv"), itemRows.join("\n"));
    const script = [
      "\\timing on",
      "BEGIN;",
      `\\copy orders.purchase_orders (id, account_id, api_key_id, external_po_no, order_date, delivery_date, delivery_status, external_warehouse_id, supplier, label, content_hash) FROM '${join(dir, "o.csv")}' CSV`,
      `\\copy orders.purchase_order_items (id, account_id, purchase_order_id, position, external_row_id, key, sku_id, quantity, total_price_net, total_price_vat, total_price_currency, deliveries, delivered_quantity) FROM '${join(dir, "i.csv")}' CSV`,
      "COMMIT;",
    ].join("\n");
    const out = spawnSync("psql", [url.toString(), "-v", "ON_ERROR_STOP=1", "-q"], { input: script, encoding: "utf8" });
    if (out.status !== 0) throw new Error(out.stderr);
    return [...out.stdout.matchAll(/Time: ([0-9.]+) ms/g)].reduce((s, m) => s + Number(m[1]), 0);
  }
  async function api(round) {
    const body = Array.from({ length: ORDERS }, (_, i) => order(`a${round}`, i));
    const t = performance.now();
    const first = await call("POST", "/v2/api/purchaseorders/batch", body, token);
    const firstMs = performance.now() - t;
    if (first.length !== ORDERS || first.some((r) => r.statusCode !== 201)) throw new Error(`batch failed: ${JSON.stringify(first[0])}`);
    const t2 = performance.now();
    const again = await call("POST", "/v2/api/purchaseorders/batch", body, token);
    const againMs = performance.now() - t2;
    if (again.some((r) => r.statusCode !== 200 || r.message !== "unchanged")) throw new Error(`re-send changed something: ${JSON.stringify(again[0])}`);
    return { firstMs, againMs };
  }
  await api("warm");
  copy("warm");
  const firstMs = [];
  const againMs = [];
  const copyMs = [];
  for (let r = 0; r < ROUNDS; r++) {
    const a = await api(r);
    firstMs.push(a.firstMs);
    againMs.push(a.againMs);
    copyMs.push(copy(r));
  }
  const result = {
    firstMs: Math.round(median(firstMs)),
    resendMs: Math.round(median(againMs)),
    copyMs: Math.round(median(copyMs)),
    ratio: +(median(copyMs) / median(firstMs)).toFixed(2),
    rounds: ROUNDS,
  };
  console.log(`POST /v2/api/purchaseorders/batch (500 orders x 10 items): first write ${result.firstMs} ms, identical re-send ${result.resendMs} ms; raw COPY of the same rows ${result.copyMs} ms; COPY/API = ${result.ratio} (target >= 0.4)`);
  console.log(JSON.stringify({ purchaseOrderBatch: result }));
} finally {
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
