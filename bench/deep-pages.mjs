// Issue 8 items 2 and 3: deep pages and key lookups at volume, through the gateway.
// - Last page vs page 1 of GET /products?pageSize=100 and GET /events?pageSize=100 with 100,000
//   rows in the account (target: last page within 1.3x of page 1).
// - GET /products?key=K (a current key, and an old key) at 10,000 vs 100,000 products (target:
//   within 1.2x).
// Rows are seeded with set-based SQL into a fresh database; medians of ROUNDS, sides alternating.
// Usage: node bench/deep-pages.mjs [--start path/to/dist/local/start.js] [--rounds N]
import { randomUUID } from "node:crypto";
import pg from "pg";
import { arg, median, startPlatform } from "./platform.mjs";

const ROUNDS = Number(arg("--rounds", 9));
const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
try {
  const { call, signUp } = platform;
  const small = await signUp("small");
  const large = await signUp("large");
  // Other accounts' rows around them, as on a shared database.
  const db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  const seedProducts = (accountId, n) =>
    db.query(
      `INSERT INTO catalogue.products (id, account_id, key, sku, season, product_name, external_attributes)
       SELECT gen_random_uuid(), $1, 'K-' || g, 'S-' || g, 'SS' || (g % 4), 'Product ' || g, jsonb_build_object('n', g, 'text', repeat('x', 200))
       FROM generate_series(1, $2) g`,
      [accountId, n],
    );
  await seedProducts(randomUUID(), 50_000);
  await seedProducts(small.accountId, 10_000);
  await seedProducts(large.accountId, 100_000);
  for (const a of [small, large]) {
    await db.query(
      `INSERT INTO catalogue.sku_synonyms (account_id, synonym, product_id)
       SELECT account_id, 'OLD-' || key, id FROM catalogue.products WHERE account_id = $1 AND seq % 10 = 0`,
      [a.accountId],
    );
  }
  await db.query(
    `INSERT INTO events.events (id, account_id, event_type, payload)
     SELECT gen_random_uuid(), $1, 'update_sku', jsonb_build_object('key', 'K-' || g, 'text', repeat('x', 500)) FROM generate_series(1, 100000) g`,
    [large.accountId],
  );
  for (const table of ["catalogue.products", "catalogue.sku_synonyms", "events.events"]) await db.query(`VACUUM ANALYZE ${table}`);
  await db.end();

  const timeOf = async (path, token) => {
    const t = performance.now();
    const res = await call("GET", path, undefined, token);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    return performance.now() - t;
  };
  async function compare(label, a, b, target) {
    await a();
    await b();
    const as = [];
    const bs = [];
    for (let r = 0; r < ROUNDS; r++) {
      as.push(await a());
      bs.push(await b());
    }
    const ratio = +(median(bs) / median(as)).toFixed(2);
    console.log(`${label}: ${median(as).toFixed(1)} ms vs ${median(bs).toFixed(1)} ms -> ratio ${ratio} (target <= ${target})`);
    return { label, first: +median(as).toFixed(1), second: +median(bs).toFixed(1), ratio, target };
  }
  const results = [
    await compare("GET /products?pageSize=100 at 100,000 products: page 1 vs page 1000", () => timeOf("/v2/api/products?pageSize=100&page=1", large.token), () => timeOf("/v2/api/products?pageSize=100&page=1000", large.token), 1.3),
    await compare("GET /events?pageSize=100 at 100,000 events: page 1 vs page 1000", () => timeOf("/v2/api/events?pageSize=100&page=1", large.token), () => timeOf("/v2/api/events?pageSize=100&page=1000", large.token), 1.3),
    await compare("GET /products?key=K: 10,000 vs 100,000 products", () => timeOf("/v2/api/products?key=K-5000", small.token), () => timeOf("/v2/api/products?key=K-50000", large.token), 1.2),
    await compare("GET /products?key=<old key>: 10,000 vs 100,000 products", () => timeOf("/v2/api/products?key=OLD-K-5000", small.token), () => timeOf("/v2/api/products?key=OLD-K-50000", large.token), 1.2),
  ];
  console.log(JSON.stringify({ deepPages: results }));
} finally {
  await platform.stop();
}
