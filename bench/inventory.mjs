// Issue 10: POST /v2/api/warehouses/stock with 10,000 rows (10 batches of 1000) and
// POST /v2/api/storetrafficevents with 10,000 events (10 requests of 1000), through the gateway, on the
// platform started on a fresh database (and NATS_URL when set). Medians of rounds; each round
// writes new snapshot dates (so every row is applied) and new event times.
// Usage: node bench/inventory.mjs [--start path/to/dist/local/start.js] [--rounds N]
import { arg, median, startPlatform } from "./platform.mjs";

const ROUNDS = Number(arg("--rounds", 5));
const SKUS = 1000;
const WAREHOUSES = 10;

const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
try {
  /** The answer's body; anything but a 2xx stops the bench. */
  const call = async (method, path, body, token) => {
    const res = await platform.call(method, path, body, token);
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  const { token } = await platform.signUp("Inventory bench");
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
    // A request takes at most 1000 events (BATCH_MAX, CONTRACT's batch limit).
    for (let from = 0; from < events.length; from += 1000) {
      const res = await call("POST", "/v2/api/storetrafficevents", events.slice(from, from + 1000), token);
      if (res.message !== "recorded: 1000 created, 0 updated") throw new Error(`traffic round ${round}: ${res.message}`);
    }
    trafficTimes.push(performance.now() - t1);
  }
  const ms = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, ${xs.length} rounds)`;
  console.log(`POST /v2/api/warehouses/stock, 10,000 rows in 10 batches of 1000: ${ms(stockTimes)}`);
  console.log(`POST /v2/api/storetrafficevents, 10,000 events in 10 requests of 1000: ${ms(trafficTimes)}`);
} finally {
  await platform.stop();
}
