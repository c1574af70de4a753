// Issue 8 item 1: how long after the writes the event queue is complete. 10,000 products in 10
// batches of 1000; the ratio is (time until the last update_sku entry exists) / (time the writes
// took), in both bus modes. Target: at most 1.5.
// Usage: node bench/queue-lag.mjs [--start path/to/dist/local/start.js]
// Needs the local Postgres and NATS (TEST_DATABASE_URL / TEST_NATS_URL); makes its own database
// and stream and removes them.
import { randomBytes } from "node:crypto";
import { arg, startPlatform } from "./platform.mjs";

const natsUrl = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const BATCHES = 10;
const PER_BATCH = 1000;

async function measure(mode) {
  const stream = `LAG${randomBytes(3).toString("hex").toUpperCase()}`;
  const env = mode === "jetstream" ? { NATS_URL: natsUrl, NATS_STREAM: stream, NATS_SUBJECT_PREFIX: `${stream.toLowerCase()}.` } : {};
  const platform = await startPlatform({ start: arg("--start", "dist/local/start.js"), env });
  try {
    const { token } = await platform.signUp("Lag");
    const t0 = performance.now();
    for (let b = 0; b < BATCHES; b++) {
      const items = Array.from({ length: PER_BATCH }, (_, i) => ({ key: `K-${b}-${i}`, sku: `S-${b}-${i}`, season: "SS27", productName: `P ${i}` }));
      const res = await platform.call("POST", "/v2/api/products/batch", items, token);
      if (res.status !== 201) throw new Error(`batch ${b}: ${res.status}`);
    }
    const writesMs = performance.now() - t0;
    const want = BATCHES * PER_BATCH;
    for (;;) {
      const res = await platform.call("GET", "/v2/api/events?pageSize=1&event_type=update_sku", undefined, token);
      if (Number(res.headers.get("x-total-count")) >= want) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const lastEntryMs = performance.now() - t0;
    return { mode, writesMs: Math.round(writesMs), lastEntryMs: Math.round(lastEntryMs), ratio: +(lastEntryMs / writesMs).toFixed(2), entriesPerSecond: Math.round(want / (lastEntryMs / 1000)) };
  } finally {
    await platform.stop();
    if (mode === "jetstream") {
      const { connect } = await import("@nats-io/transport-node");
      const { jetstreamManager } = await import("@nats-io/jetstream");
      const nc = await connect({ servers: natsUrl });
      await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  }
}

const results = [];
for (const mode of ["in-process", "jetstream"]) {
  const r = await measure(mode);
  results.push(r);
  console.log(`${mode}: writes ${r.writesMs} ms, last update_sku entry at ${r.lastEntryMs} ms -> ratio ${r.ratio} (target <= 1.5), ${r.entriesPerSecond} entries/s`);
}
console.log(JSON.stringify({ queueLag: results }));
