// Issue 48: the statements Postgres runs per request, load-independent where req/s is not: the
// transactions (each autocommit statement is one) counted in pg_stat_database for the platform's
// own database over 1000 sequential requests, less the rate at rest (relays polling), for
// GET /events?pageSize=10, GET /products?key=K and the events page with a current If-None-Match.
// Statistics reach pg_stat_database when a backend has been idle (up to about 10 s): each count
// waits 12 s first. Services in their own processes (startSeparately).
// Usage: node bench/statements-per-request.mjs
import pg from "pg";
import { startSeparately } from "./platform.mjs";

const N = 1000;
const platform = await startSeparately();
const db = new pg.Client({ connectionString: platform.databaseUrl });
await db.connect();
const database = new URL(platform.databaseUrl).pathname.slice(1);
/** The database's transactions so far, once the backends have flushed their statistics. */
const transactions = async () => {
  await new Promise((r) => setTimeout(r, 12_000));
  const { rows } = await db.query("SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1", [database]);
  return Number(rows[0].n);
};
try {
  const { token } = await platform.signUp("Count");
  const get = (path, headers = {}) => fetch(platform.base + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const products = Array.from({ length: 20 }, (_, i) => ({ key: `K-${i}`, sku: `S-${i}`, season: "SS27", productName: `P ${i}` }));
  await platform.call("POST", "/v2/api/products/batch", products, token);
  while (Number((await get("/v2/api/events?pageSize=1")).headers.get("x-total-count")) < products.length) await new Promise((r) => setTimeout(r, 100));
  const tag = (await get("/v2/api/events?pageSize=10")).headers.get("etag");
  const atRest = await transactions();
  const restStart = performance.now();
  const perMs = ((await transactions()) - atRest) / (performance.now() - restStart);
  const cases = [
    ["GET /events?pageSize=10", "/v2/api/events?pageSize=10"],
    ["GET /products?key=K", "/v2/api/products?key=K-5"],
    ["GET /events?pageSize=10, If-None-Match current (304)", "/v2/api/events?pageSize=10", { "if-none-match": tag }],
  ];
  for (const [label, path, headers] of cases) {
    const before = await transactions();
    const start = performance.now();
    for (let i = 0; i < N; i++) await (await get(path, headers)).arrayBuffer();
    const counted = (await transactions()) - before - perMs * (performance.now() - start);
    console.log(`${label}: ${(counted / N).toFixed(2)} statements per request (at rest ${(perMs * 1000).toFixed(1)} a second, subtracted)`);
  }
} finally {
  await db.end();
  await platform.stop();
}
