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
import { arg, median, startPlatform } from "./platform.mjs";

const ROUNDS = Number(arg("--rounds", 9));

const built = spawnSync(process.execPath, ["deploy/local/build.mjs"], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);

/** bench/planning.ts's seed: SKUs, warehouses, stock in 5 warehouses per SKU, PO lines. */
async function seed(sql, accountId, skus, lines) {
  await sql.query(
    `INSERT INTO planning.skus (account_id, sku_id, version, key, sku, status, active_planning, season, product_group_id, variant_group_id, brand, color, size)
     SELECT $1, gen_random_uuid(), 1, 'K-' || g, 'S-' || g, 1 + g % 5, g % 17 <> 0, 'SS' || (g % 8), 'P-' || (g / 10), 'V-' || (g / 3), 'B' || (g % 30), 'C' || (g % 12), 'Z' || (g % 6)
     FROM generate_series(1, $2) g`,
    [accountId, skus],
  );
  await sql.query(`INSERT INTO planning.warehouses (account_id, warehouse_id, version, external_id, name) SELECT $1, gen_random_uuid(), 1, 'WH' || g, 'Warehouse ' || g FROM generate_series(1, 20) g`, [accountId]);
  await sql.query(
    `INSERT INTO planning.stock (account_id, sku_id, warehouse_id, version, available_quantity)
     SELECT $1, s.sku_id, w.warehouse_id, 1, (hashtext(s.key || w.external_id) & 63)
     FROM planning.skus s
     JOIN LATERAL (SELECT warehouse_id, external_id FROM planning.warehouses w WHERE w.account_id = $1
                   AND (substr(w.external_id, 3)::int - 1) % 4 = (substr(s.key, 3)::int) % 4 LIMIT 5) w ON true
     WHERE s.account_id = $1`,
    [accountId],
  );
  await sql.query(
    `INSERT INTO planning.purchase_order_lines (account_id, purchase_order_id, item_id, sku_id, external_warehouse_id, delivery_date, open_quantity, kind, changed_at)
     SELECT $1, gen_random_uuid(), 'i' || g, s.sku_id, CASE WHEN g % 10 = 0 THEN '' ELSE 'WH' || (1 + g % 20) END,
       date '2026-01-01' + (g % 365), 1 + g % 40, CASE WHEN g % 9 = 0 THEN 'draft' WHEN g % 23 = 0 THEN 'cancelled' ELSE 'po' END,
       timestamptz '2026-01-01' + g * interval '1 minute'
     FROM generate_series(1, $3) g JOIN planning.skus s ON s.account_id = $1 AND s.key = 'K-' || (1 + (g * 7919) % $2)`,
    [accountId, skus, lines],
  );
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
