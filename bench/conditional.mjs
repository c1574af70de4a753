// Issue 36: a 304 on a planning answer is decided before the answer is computed. GET
// /v2/api/planning/planned-volumes?groupBy=skus for an account of 100,000 SKUs (20 warehouses,
// stock of each SKU in 5 of them, 50,000 PO lines; seeded straight into planning's tables as
// bench/planning.ts does, the account's data version bumped as a write would) through the whole
// platform: the full answer vs the same request with If-None-Match of its weak ETag (a 304: the
// account's data version read, no query run). Medians of ROUNDS sequential requests, alternating.
// Target: the 304 costs under a tenth of the full answer.
// Usage: node bench/conditional.mjs [--rounds N]   (builds dist/ first)
import { spawnSync } from "node:child_process";
import pg from "pg";
import { seedPlanning } from "./planning-seed.mjs";
import { arg, median, startPlatform } from "./platform.mjs";

const ROUNDS = Number(arg("--rounds", 9));

const built = spawnSync(process.execPath, ["deploy/local/build.mjs"], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);

/** The planning benches' seed, and the account's data version moved on as a replica batch would. */
async function seed(sql, accountId, skus, lines) {
  await seedPlanning(sql, accountId, skus, lines);
  // As a replica batch of the account would: its planning answers' version moves on.
  await sql.query(
    `INSERT INTO planning.account_versions (account_id, version, changed_at) VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, now())
     ON CONFLICT (account_id) DO UPDATE SET version = account_versions.version + 1, changed_at = now()`,
    [accountId],
  );
}

const platform = await startPlatform();
const sql = new pg.Client({ connectionString: platform.databaseUrl });
await sql.connect();
try {
  const account = await platform.signUp("Conditional");
  const t0 = performance.now();
  await seed(sql, account.accountId, 100_000, 50_000);
  await sql.query("VACUUM ANALYZE planning.skus, planning.stock, planning.warehouses, planning.purchase_order_lines");
  console.log(`seeded 100,000 SKUs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const url = `${platform.base}/v2/api/planning/planned-volumes?groupBy=skus&fromDate=2026-03-01&toDate=2026-05-31`;
  const get = async (headers = {}) => {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${account.token}`, "accept-encoding": "identity", ...headers } });
    const body = await res.arrayBuffer();
    return { ms: performance.now() - t, status: res.status, etag: res.headers.get("etag"), bytes: body.byteLength };
  };
  const warm = await get();
  if (warm.status !== 200 || !warm.etag?.startsWith('W/"planning-')) throw new Error(`full answer: ${warm.status} ${warm.etag}`);
  const full = [];
  const notModified = [];
  let bytes = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const a = await get();
    if (a.status !== 200 || a.etag !== warm.etag) throw new Error(`full answer: ${a.status} ${a.etag}`);
    full.push(a.ms);
    bytes = a.bytes;
    const b = await get({ "if-none-match": warm.etag });
    if (b.status !== 304 || b.bytes !== 0) throw new Error(`conditional: ${b.status}, ${b.bytes} bytes`);
    notModified.push(b.ms);
  }
  const result = {
    fullAnswerMs: +median(full).toFixed(1),
    fullAnswerBytes: bytes,
    notModifiedMs: +median(notModified).toFixed(2),
    ratio: +(median(notModified) / median(full)).toFixed(4),
    target: 0.1,
  };
  console.log(`planned-volumes by SKU (100,000 SKUs): full answer ${result.fullAnswerMs} ms (${bytes} bytes), 304 ${result.notModifiedMs} ms -> ${(result.ratio * 100).toFixed(2)} % (target < 10 %)`);
  console.log(JSON.stringify({ conditional: result }));
} finally {
  await sql.end();
  await platform.stop();
}
