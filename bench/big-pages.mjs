// Issue 8 item 6: GET /products?pageSize=10000 as the published client reads it, against
// fetching and serializing the same rows directly from Postgres in one process (target: within
// 1.5x), and the platform's peak memory (VmHWM) growth over those reads against the response's
// size (target: less). Medians of ROUNDS, sides alternating. With --separate the gateway and each
// service run in processes of their own (on the test JetStream) and the memory is the gateway's
// alone; by default all run in one process and the memory is that process's.
// The client sends Accept-Encoding as fetch does (`gzip, deflate`: the gateway compresses);
// `--accept-encoding identity` measures the page without compression.
// Usage: node bench/big-pages.mjs [--rounds N] [--separate] [--accept-encoding identity] [--start path/to/dist/local/start.js]
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { arg, median, startPlatform, startSeparately } from "./platform.mjs";

const ROUNDS = Number(arg("--rounds", 5));
const PAGE = 10_000;
const separate = process.argv.includes("--separate");
const ENCODING = arg("--accept-encoding", "gzip, deflate");
const platform = separate ? await startSeparately() : await startPlatform({ start: arg("--start", "dist/local/start.js") });
const peakRssMb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${platform.child.pid}/status`, "utf8"))[1]) / 1024;
try {
  const acme = await platform.signUp("big");
  const db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  const seed = (accountId, n) =>
    db.query(
      `INSERT INTO catalogue.products (id, account_id, key, sku, ean, season, product_name, color, size, cost_calculation_price, external_attributes)
       SELECT gen_random_uuid(), $1, 'K-' || g, 'S-' || g, lpad(g::text, 13, '0'), 'SS' || (g % 4), 'Product ' || g, 'red', 'M', 19.99,
              jsonb_build_object('n', g, 'text', repeat('x', 400))
       FROM generate_series(1, $2) g`,
      [accountId, n],
    );
  await seed(randomUUID(), 20_000);
  await seed(acme.accountId, PAGE);
  await db.query("VACUUM ANALYZE catalogue.products");

  const viaGateway = async () => {
    const t = performance.now();
    const res = await fetch(`${platform.base}/v2/api/products?pageSize=${PAGE}`, { headers: { authorization: `Bearer ${acme.token}`, "accept-encoding": ENCODING } });
    if (res.status !== 200) throw new Error(`GET /products: ${res.status}`);
    const bytes = (await res.arrayBuffer()).byteLength;
    return { ms: performance.now() - t, bytes };
  };
  const direct = async () => {
    const t = performance.now();
    const { rows } = await db.query(
      `SELECT p.*, b.name AS brand_name, c.name AS category_name
       FROM catalogue.products p LEFT JOIN catalogue.brands b ON b.id = p.brand_id LEFT JOIN catalogue.categories c ON c.id = p.category_id
       WHERE p.account_id = $1 ORDER BY p.seq LIMIT $2`,
      [acme.accountId, PAGE],
    );
    const bytes = Buffer.byteLength(JSON.stringify(rows));
    return { ms: performance.now() - t, bytes };
  };
  await fetch(`${platform.base}/v2/api/products?pageSize=10`, { headers: { authorization: `Bearer ${acme.token}` } });
  const peakBefore = peakRssMb();
  let peakAfterFirst = 0;
  const g = [];
  const d = [];
  let size = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const a = await viaGateway();
    if (r === 0) peakAfterFirst = peakRssMb();
    size = a.bytes;
    g.push(a.ms);
    d.push((await direct()).ms);
  }
  const growth = peakRssMb() - peakBefore;
  await db.end();
  const result = {
    gatewayMs: Math.round(median(g)),
    directMs: Math.round(median(d)),
    ratio: +(median(g) / median(d)).toFixed(2),
    target: 1.5,
    responseMb: +(size / 2 ** 20).toFixed(1),
    peakRssGrowthMb: +growth.toFixed(1),
    // The first big page's share of it (heap and buffers growing to their working size), and
    // what the later pages added: a process that held pages would grow with each.
    firstReadGrowthMb: +(peakAfterFirst - peakBefore).toFixed(1),
    laterReadsGrowthMb: +(peakRssMb() - peakAfterFirst).toFixed(1),
    acceptEncoding: ENCODING,
  };
  console.log(`GET /products?pageSize=${PAGE} (Accept-Encoding: ${ENCODING}): gateway ${result.gatewayMs} ms vs direct Postgres + JSON ${result.directMs} ms -> ratio ${result.ratio} (target <= 1.5)`);
  console.log(`response ${result.responseMb} MB; ${separate ? "gateway process" : "platform process (gateway and every service)"} peak RSS grew ${result.peakRssGrowthMb} MB over ${ROUNDS} reads (target: less than the response): ${result.firstReadGrowthMb} MB in the first, ${result.laterReadsGrowthMb} MB in the ${ROUNDS - 1} after it`);
  console.log(JSON.stringify({ bigPages: result }));
} finally {
  await platform.stop();
}
