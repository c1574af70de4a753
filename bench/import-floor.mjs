// Issue 47 item 4: the floor of the import's design, in Postgres alone. For each chunk of 1000
// lines the statements the design cannot do without, run straight from `pg` with none of the
// platform's Node.js work: the upload's append (the chunk's bytes into import_chunks, its own
// transaction), then one transaction that takes the job and the chunk, COPYs the lines into a
// staging table, upserts them from it into the resource's table, inserts one outbox row per line
// (the line's size, already published so no consumer runs), keeps the chunk's results and
// advances the job. Beside it, raw COPY of the same rows into the same table. If this floor is
// below a target's lines a second, no work in our code reaches the target on this machine.
// Usage: node bench/import-floor.mjs [--products N] [--transactions N] (default 1,000,000 each)
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { copyText, product, rawCopy, transaction } from "./import-lines.mjs";
import { arg, startPlatform } from "./platform.mjs";

const PRODUCTS = Number(arg("--products", 1_000_000));
const TRANSACTIONS = Number(arg("--transactions", 1_000_000));
const CHUNK = 1000;

/** COPY of `text` (COPY's text format) into `table`. */
async function copy(db, table, columns, text) {
  await pipeline(Readable.from([text]), db.query(copyFrom(`COPY ${table} (${columns.join(", ")}) FROM STDIN`)));
}

/**
 * The resources: their schema, the staging table and a line's row in it, and the upsert from the
 * staging table (as the services' staged writes do: by the natural key, the unchanged left alone).
 */
const resources = {
  transactions: {
    schema: "orders",
    line: transaction,
    stage: "CREATE TEMP TABLE IF NOT EXISTS floor_staged_transactions (ord integer, ext text, body jsonb) ON COMMIT DELETE ROWS",
    staged: (i, line) => [i, line.externalTransactionID, JSON.stringify(line)],
    stagedColumns: ["ord", "ext", "body"],
    upsert: `INSERT INTO orders.transactions AS t (id, account_id, external_transaction_id, body)
       SELECT gen_random_uuid(), $1, s.ext, s.body FROM floor_staged_transactions s ORDER BY s.ord
       ON CONFLICT (account_id, external_transaction_id) DO UPDATE SET body = EXCLUDED.body, version = t.version + 1, updated_at = now()
       WHERE t.body IS DISTINCT FROM EXCLUDED.body
       RETURNING t.id, t.seq, t.version`,
  },
  products: {
    schema: "catalogue",
    line: product,
    stage: "CREATE TEMP TABLE IF NOT EXISTS floor_staged_products (ord integer, key text, sku text, product_name text, season text, color text, size text) ON COMMIT DELETE ROWS",
    staged: (i, p) => [i, p.key, p.sku, p.productName, p.season, p.color, p.size],
    stagedColumns: ["ord", "key", "sku", "product_name", "season", "color", "size"],
    upsert: `INSERT INTO catalogue.products AS p (id, account_id, key, sku, product_name, season, color, size)
       SELECT gen_random_uuid(), $1, s.key, s.sku, s.product_name, s.season, s.color, s.size FROM floor_staged_products s ORDER BY s.ord
       ON CONFLICT (account_id, key) DO UPDATE SET sku = EXCLUDED.sku, product_name = EXCLUDED.product_name, season = EXCLUDED.season,
         color = EXCLUDED.color, size = EXCLUDED.size, version = p.version + 1, updated_at = now()
       WHERE (p.sku, p.product_name, p.season, p.color, p.size) IS DISTINCT FROM (EXCLUDED.sku, EXCLUDED.product_name, EXCLUDED.season, EXCLUDED.color, EXCLUDED.size)
       RETURNING p.id, p.version`,
  },
};

/** The design's statements for `count` lines of `name`, chunk by chunk; milliseconds. */
async function designFloor(db, name, count) {
  const r = resources[name];
  const accountId = randomUUID();
  const jobId = randomUUID();
  // A job no worker takes (cancelled) and no sweep drops (never expiring): the floor's own.
  await db.query(`INSERT INTO ${r.schema}.import_jobs (id, account_id, resource, format, status, sealed) VALUES ($1, $2, $3, 'ndjson', 'cancelled', true)`, [jobId, accountId, name]);
  await db.query(r.stage);
  const steps = { upload: 0, take: 0, copy: 0, upsert: 0, outbox: 0, results: 0, commit: 0 };
  let mark = 0;
  const step = (name) => {
    const now = performance.now();
    steps[name] += now - mark;
    mark = now;
  };
  for (let at = 0, seq = 0; at < count; at += CHUNK, seq++) {
    // The client's part made before the clock runs: the steps time the statements alone.
    const lines = [];
    for (let i = at; i < Math.min(count, at + CHUNK); i++) lines.push(r.line(i));
    const encoded = lines.map((l) => Buffer.from(JSON.stringify(l)));
    const text = Buffer.from(encoded.join("\n"));
    const staged = lines.map((l, i) => r.staged(i, l).map(copyText).join("\t")).join("\n") + "\n";
    let offset = 1;
    const starts = encoded.map((p) => (offset += p.length) - p.length);
    mark = performance.now();
    // The upload: the chunk appended, its own transaction.
    await db.query(`INSERT INTO ${r.schema}.import_chunks (import_id, seq, chunk) VALUES ($1, $2, $3)`, [jobId, seq, text]);
    step("upload");
    // The apply: one transaction.
    await db.query("BEGIN");
    await db.query(`SELECT j.id, c.chunk FROM ${r.schema}.import_jobs j JOIN ${r.schema}.import_chunks c ON c.import_id = j.id AND c.seq = $2 WHERE j.id = $1 FOR UPDATE OF j`, [jobId, seq]);
    step("take");
    await copy(db, `floor_staged_${name}`, r.stagedColumns, staged);
    step("copy");
    const { rows: written } = await db.query(r.upsert, [accountId]);
    step("upsert");
    if (written.length !== lines.length) throw new Error(`${lines.length - written.length} lines of chunk ${seq} were not new`);
    // One outbox row per written line, its message about the line's size, already published.
    await db.query(
      `INSERT INTO ${r.schema}.outbox (id, subject, account_id, aggregate, payload, published_at)
       SELECT gen_random_uuid(), 'bench.floor', $1::uuid, x, substring($2::bytea FROM s FOR n), now()
       FROM unnest($3::text[], $4::int[], $5::int[]) AS u(x, s, n)`,
      [accountId, Buffer.concat(encoded), written.map((w) => w.id), starts, encoded.map((p) => p.length)],
    );
    step("outbox");
    // The chunk's results (about 40 bytes a line) kept, its input dropped; the job advanced.
    await db.query(
      `WITH kept AS (UPDATE ${r.schema}.import_chunks SET chunk = NULL, results = $3 WHERE import_id = $1 AND seq = $2)
       UPDATE ${r.schema}.import_jobs SET chunks_done = chunks_done + 1, lines_processed = lines_processed + $4, touched_at = now() WHERE id = $1`,
      [jobId, seq, Buffer.alloc(40 * lines.length, 1), lines.length],
    );
    step("results");
    await db.query("COMMIT");
    step("commit");
  }
  // The statements' time: the steps' sum, the client's preparation of each chunk left out.
  return { ms: Object.values(steps).reduce((a, b) => a + b, 0), steps };
}

const platform = await startPlatform({});
try {
  const db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  // An error of the bench's own statements, not the stop's termination of its connection.
  db.on("error", () => {});
  for (const [name, count] of [["products", PRODUCTS], ["transactions", TRANSACTIONS]]) {
    if (!count) continue;
    const rawMs = await rawCopy(db, name, count);
    const { ms: floorMs, steps } = await designFloor(db, name, count);
    const rate = (ms) => Math.round(count / (ms / 1000));
    console.log(`${name}: ${count} lines; the design's statements ${(floorMs / 1000).toFixed(1)} s = ${rate(floorMs)} lines/s; raw COPY ${(rawMs / 1000).toFixed(1)} s = ${rate(rawMs)} rows/s; design/COPY ${(rawMs / floorMs).toFixed(2)}`);
    console.log(`  the design's steps (s): ${Object.entries(steps).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)}`).join(", ")}`);
    console.log(JSON.stringify({ importFloor: { resource: name, lines: count, designMs: Math.round(floorMs), steps: Object.fromEntries(Object.entries(steps).map(([k, ms]) => [k, Math.round(ms)])), designLinesPerSecond: rate(floorMs), copyMs: Math.round(rawMs), copyRowsPerSecond: rate(rawMs) } }));
  }
  await db.end();
} finally {
  await platform.stop();
}
