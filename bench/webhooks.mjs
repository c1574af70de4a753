// Issue 37 item 4: how long after the writes the last webhook delivery arrives. 10,000 products in
// 10 batches of 1000 to an account with one endpoint (a local receiver that counts each distinct
// webhook-id answered 2xx, and checks each signature with the standardwebhooks package); the
// ratio is (time until the last delivery) / (time until the last queue entry), both from the
// first write, on JetStream. Target: at most 1.5; above it the bench exits 1 (after cleaning up).
// Usage: node bench/webhooks.mjs [--start path/to/dist/local/start.js] [--verify false]
// Needs a build (npm run build) and the local Postgres and NATS; makes its own database and stream and removes them.
import http from "node:http";
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { ADMIN, arg, startPlatform } from "./platform.mjs";

const natsUrl = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const BATCHES = 10;
const PER_BATCH = 1000;
const verify = arg("--verify", "true") !== "false";

/** The receiver: distinct webhook-ids delivered, and signatures that failed. */
async function startReceiver() {
  // open: connections open now, mostOpen: the most at once (does the worker use its slots?),
  // connections: all it was sent on (does the worker keep them alive?).
  const state = { ids: new Set(), rejected: 0, lastAt: 0, secret: undefined, open: 0, mostOpen: 0, connections: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (verify) {
        try {
          new Webhook(state.secret).verify(Buffer.concat(chunks).toString("utf8"), req.headers);
        } catch {
          state.rejected++;
          return res.writeHead(400).end();
        }
      }
      state.ids.add(req.headers["webhook-id"]);
      state.lastAt = performance.now();
      res.writeHead(204).end();
    });
  });
  server.on("connection", (socket) => {
    state.connections++;
    state.mostOpen = Math.max(state.mostOpen, ++state.open);
    socket.once("close", () => state.open--);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { state, url: `http://127.0.0.1:${server.address().port}/hook`, close: () => new Promise((r) => server.close(r)) };
}

const TARGET_RATIO = 1.5;
const stream = `HOOK${randomBytes(3).toString("hex").toUpperCase()}`;
let ratio;
const receiver = await startReceiver();
const platform = await startPlatform({
  start: arg("--start", "dist/local/start.js"),
  env: { NATS_URL: natsUrl, NATS_STREAM: stream, NATS_SUBJECT_PREFIX: `${stream.toLowerCase()}.`, WEBHOOK_ALLOW_PRIVATE: "true" },
});
try {
  const { token, accountId } = await platform.signUp("Hooked");
  // The writes as fast as the platform takes them: the account's rate limit out of the way.
  await platform.call("PUT", `/admin/v1/accounts/${accountId}/settings`, { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 }, ADMIN);
  const endpoint = await platform.call("POST", "/v2/api/webhooks", { url: receiver.url }, token);
  if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  receiver.state.secret = endpoint.body.secret;
  const want = BATCHES * PER_BATCH;
  const t0 = performance.now();
  for (let b = 0; b < BATCHES; b++) {
    const items = Array.from({ length: PER_BATCH }, (_, i) => ({ key: `K-${b}-${i}`, sku: `S-${b}-${i}`, season: "SS27", productName: `P ${i}` }));
    const res = await platform.call("POST", "/v2/api/products/batch", items, token);
    if (res.status !== 201) throw new Error(`batch ${b}: ${res.status}`);
  }
  const writesMs = performance.now() - t0;
  for (;;) {
    const res = await platform.call("GET", "/v2/api/events?pageSize=1&event_type=update_sku", undefined, token);
    if (Number(res.headers.get("x-total-count")) >= want) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const lastEntryMs = performance.now() - t0;
  while (receiver.state.ids.size < want) await new Promise((r) => setTimeout(r, 20));
  const lastDeliveryMs = receiver.state.lastAt - t0;
  const r = {
    writesMs: Math.round(writesMs),
    lastEntryMs: Math.round(lastEntryMs),
    lastDeliveryMs: Math.round(lastDeliveryMs),
    ratio: +(lastDeliveryMs / lastEntryMs).toFixed(2),
    deliveriesPerSecond: Math.round(want / (lastDeliveryMs / 1000)),
    rejected: receiver.state.rejected,
    mostConnectionsAtOnce: receiver.state.mostOpen,
    connections: receiver.state.connections,
    concurrencyPerEndpoint: Number(process.env.WEBHOOK_CONCURRENCY_PER_ENDPOINT ?? 16),
    verified: verify,
  };
  console.log(`writes ${r.writesMs} ms, last queue entry at ${r.lastEntryMs} ms, last delivery at ${r.lastDeliveryMs} ms -> ratio ${r.ratio} (target <= 1.5), ${r.deliveriesPerSecond} deliveries/s, ${r.rejected} rejected, at most ${r.mostConnectionsAtOnce} connections at once (${r.concurrencyPerEndpoint} attempts allowed), ${r.connections} connections in all`);
  console.log(JSON.stringify({ webhooks: r }));
  ratio = r.ratio;
} finally {
  await platform.stop();
  await receiver.close();
  const { connect } = await import("@nats-io/transport-node");
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const nc = await connect({ servers: natsUrl });
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
  await nc.close();
}
if (ratio > TARGET_RATIO) {
  console.error(`FAILED: the last delivery came ${ratio}x the queue's own write time after the first write, above the target of ${TARGET_RATIO}x`);
  process.exitCode = 1;
}
