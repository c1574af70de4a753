// Issue 47 item 4: imports against raw COPY, in the same run. A products file (--products N,
// default 1,000,000) and a transactions file (--transactions N, default 1,000,000), each POSTed to
// /v2/api/imports as NDJSON streamed from a generator (never whole in memory), timed from the
// POST to the job's `completed`; beside each, raw COPY of the same rows in one transaction (the
// floor). Prints lines a second (and those of the apply alone, from the job's start to its end) and
// the ratio to the floor. Targets (docs/benchmarks.md): products
// >= 20,000 lines/s, transactions >= 50,000 lines/s and >= 0.5 of the floor.
// Usage: node bench/import.mjs [--products N] [--transactions N] [--start path/to/dist/local/start.js]
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { arg, startPlatform } from "./platform.mjs";

const PRODUCTS = Number(arg("--products", 1_000_000));
const TRANSACTIONS = Number(arg("--transactions", 1_000_000));

const product = (i) => ({ key: `SKU-${i}`, sku: `SKU-${i}`, productName: `Product ${Math.floor(i / 10)}`, season: "SS27", color: ["black", "white", "red"][i % 3], size: ["S", "M", "L", "XL"][i % 4] });
const transaction = (i) => ({
  externalTransactionID: `T-${i}`,
  type: 1,
  channel: 1,
  currencyCode: "EUR",
  createdDate: "2026-11-01T10:00:00Z",
  items: [{ externalItemID: "1", key: `SKU-${i % 1000}`, quantity: 1, moneyItemTotalNet: 10, moneyItemTotalVat: 2.5 }],
});

/** NDJSON of `count` lines, made as it is read, 1000 lines a piece. */
function ndjson(count, line) {
  return Readable.from(
    (function* () {
      for (let at = 0; at < count; at += 1000) {
        let text = "";
        for (let i = at; i < Math.min(count, at + 1000); i++) text += JSON.stringify(line(i)) + "\n";
        yield Buffer.from(text);
      }
    })(),
  );
}

const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
try {
  const { token } = await platform.signUp("Imports");

  async function importOf(resource, count, line) {
    const t = performance.now();
    const res = await fetch(`${platform.base}/v2/api/imports?resource=${resource}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" }, body: ndjson(count, line), duplex: "half" });
    const created = await res.json();
    if (res.status !== 202) throw new Error(`import not created: ${res.status} ${JSON.stringify(created)}`);
    const acceptedMs = performance.now() - t;
    for (;;) {
      const job = await (await fetch(`${platform.base}/v2/api/imports/${created.id}`, { headers: { authorization: `Bearer ${token}` } })).json();
      if (!["queued", "running"].includes(job.status)) return { job, acceptedMs, ms: performance.now() - t };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** The floor: raw COPY of `count` rows into `table`, one transaction. */
  async function copyFloor(table, columns, count, row) {
    // A connection of its own, opened now: one held open through the import would, when the import
    // fails, be cut by the platform's stop (its database dropped) and crash the bench with that
    // error instead of the import's.
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    const t = performance.now();
    await db.query("BEGIN");
    const copy = db.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`));
    await pipeline(
      Readable.from(
        (function* () {
          for (let at = 0; at < count; at += 1000) {
            let text = "";
            for (let i = at; i < Math.min(count, at + 1000); i++) text += row(i).join("\t") + "\n";
            yield text;
          }
        })(),
      ),
      copy,
    );
    await db.query("ROLLBACK");
    const ms = performance.now() - t;
    await db.end();
    return ms;
  }

  // The apply alone: from the job's start (its first chunk taken, once the whole file is in) to its end.
  const applyMs = (job) => new Date(job.finishedAt) - new Date(job.startedAt);
  const report = (what, count, imported, floorMs) =>
    console.log(
      `${what}: ${count} lines, accepted in ${(imported.acceptedMs / 1000).toFixed(1)} s, ${imported.job.status} in ${(imported.ms / 1000).toFixed(1)} s = ${Math.round(count / (imported.ms / 1000))} lines/s (applied in ${(applyMs(imported.job) / 1000).toFixed(1)} s = ${Math.round(count / (applyMs(imported.job) / 1000))} lines/s); raw COPY ${(floorMs / 1000).toFixed(1)} s; import/floor ${(floorMs / imported.ms).toFixed(2)}`,
    );

  if (PRODUCTS) {
    const imported = await importOf("products", PRODUCTS, product);
    const accountId = randomUUID();
    const floorMs = await copyFloor("catalogue.products", ["id", "account_id", "key", "sku", "product_name", "season", "color", "size"], PRODUCTS, (i) => {
      const p = product(i);
      return [randomUUID(), accountId, p.key, p.sku, p.productName, p.season, p.color, p.size];
    });
    report("products", PRODUCTS, imported, floorMs);
  }
  if (TRANSACTIONS) {
    const imported = await importOf("transactions", TRANSACTIONS, transaction);
    // The floor: the same transactions COPYed into orders.transactions as the service stores them
    // (the line as its body; the service's body is the same fields in proto JSON).
    const accountId = randomUUID();
    const floorMs = await copyFloor("orders.transactions", ["id", "account_id", "external_transaction_id", "body"], TRANSACTIONS, (i) => [randomUUID(), accountId, `T-${i}`, JSON.stringify(transaction(i)).replace(/\\/g, "\\\\")]);
    report("transactions", TRANSACTIONS, imported, floorMs);
  }
} finally {
  await platform.stop();
}
