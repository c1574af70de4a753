// Issue 8 item 5: POST /v2/api/products/batch of 1000 new products against the design's floor:
// the same 1000-row upsert plus 1000 outbox rows (each the size of its message) in one
// transaction, run directly in Postgres. Both sides alternate, in the same run; medians.
// Target: the API at >= 0.7 of the floor (floor time / API time).
// Usage: node bench/batch-floor.mjs [--start path/to/dist/local/start.js] [--rounds N]
import { randomUUID } from "node:crypto";
import pg from "pg";
import { arg, median, startPlatform, untilRelayed } from "./platform.mjs";

const ROUNDS = Number(arg("--rounds", 7));

const product = (round, i) => ({
  key: `SKU-${round}-${i}`,
  sku: `SKU-${round}-${i}`,
  ean: String(7300000000000 + i),
  productName: `Product ${Math.floor(i / 10)}`,
  variantName: `Variant ${i % 10}`,
  season: "SS27",
  color: ["black", "white", "red"][i % 3],
  size: ["S", "M", "L", "XL"][i % 4],
  productGroupId: `PG-${Math.floor(i / 10)}`,
  variantGroupId: `VG-${Math.floor(i / 5)}`,
  externalAttributes: { origin: "bench", n: i },
});

const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
try {
  const { token } = await platform.signUp("Floor");
  const call = async (method, path, body, t) => (await platform.call(method, path, body, t)).body;

  const db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  const columns = ["id", "account_id", "key", "sku", "ean", "product_name", "variant_name", "season", "color", "size", "product_group_id", "variant_group_id", "external_attributes"];
  /** The design's floor: one upsert of 1000 rows and 1000 outbox rows, one transaction. */
  async function floor(round) {
    const accountId = randomUUID();
    const rows = Array.from({ length: 1000 }, (_, i) => {
      const p = product(`f${round}`, i);
      return { id: randomUUID(), account_id: accountId, key: p.key, sku: p.sku, ean: p.ean, product_name: p.productName, variant_name: p.variantName, season: p.season, color: p.color, size: p.size, product_group_id: p.productGroupId, variant_group_id: p.variantGroupId, external_attributes: p.externalAttributes };
    });
    const t = performance.now();
    await db.query("BEGIN");
    await db.query(
      `INSERT INTO catalogue.products (${columns.join(", ")}) SELECT ${columns.join(", ")} FROM jsonb_populate_recordset(NULL::catalogue.products, $1::jsonb)
       ON CONFLICT (account_id, key) DO UPDATE SET sku = EXCLUDED.sku, updated_at = now() RETURNING id`,
      [JSON.stringify(rows)],
    );
    // Each message about the size of a product's encoding.
    const payloads = rows.map((r) => Buffer.from(JSON.stringify(r)));
    await db.query(
      `INSERT INTO catalogue.outbox (id, subject, account_id, aggregate, payload, published_at)
       SELECT gen_random_uuid(), 'bench.floor', $1::uuid, 'sku:' || x, p, now() FROM unnest($2::text[], $3::bytea[]) AS u(x, p)`,
      [accountId, rows.map((r) => r.id), payloads],
    );
    await db.query("COMMIT");
    return performance.now() - t;
  }
  const relayedMs = [];
  async function api(round) {
    const body = Array.from({ length: 1000 }, (_, i) => product(`a${round}`, i));
    const t = performance.now();
    const answer = await call("POST", "/v2/api/products/batch", body, token);
    const ms = performance.now() - t;
    if (answer.length !== 1000 || answer[0][0].statusCode !== 201) throw new Error("batch failed");
    // The batch's messages relayed (and, in one process, consumed) before the next round, so
    // that neither the next batch nor the floor shares the platform with its consumers.
    relayedMs.push(await untilRelayed(db, "catalogue"));
    return ms;
  }
  await api("warm");
  await floor("warm");
  const apiMs = [];
  const floorMs = [];
  for (let r = 0; r < ROUNDS; r++) {
    apiMs.push(await api(r));
    floorMs.push(await floor(r));
  }
  await db.end();
  const result = { apiMs: Math.round(median(apiMs)), floorMs: Math.round(median(floorMs)), ratio: +(median(floorMs) / median(apiMs)).toFixed(2), relayedAfterMs: Math.round(median(relayedMs)), rounds: ROUNDS };
  console.log(`POST /v2/api/products/batch (1000 new): median ${result.apiMs} ms; floor (upsert + 1000 outbox rows, one transaction): ${result.floorMs} ms; floor/API = ${result.ratio} (target >= 0.7)`);
  console.log(`each batch's messages were all published ${result.relayedAfterMs} ms after its answer (median; in one process, consumed too); the next round starts after that`);
  console.log(JSON.stringify({ batchFloor: result }));
} finally {
  await platform.stop();
}
