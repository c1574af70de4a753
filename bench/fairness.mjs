// Issue 35 item 4: one account's bulk load must not delay everyone. Account B writes single
// products, one after the other, each timed from its request until it is in B's event queue
// (GET /v2/api/events, update_sku) and until planning knows it (a sales plan for its key is
// accepted: POST /v2/api/planning/sales-plans/batch answers 404 for a key planning does not know). Idle first (B alone), then while account A loads PRODUCTS products in batches
// of 1000; A's own lag too: from each batch's answer until the queue holds its 1000 entries.
// Target: B's p99 loaded at most 2x its p99 idle, for the queue and for planning. B's write's
// own answer is shown too: on a machine the load saturates, it slows down as much.
// The deployables separate on JetStream by default (as production runs them; `--single`: the
// single process with NATS). A and B are accounts whose messages travel on different partitions
// (libs/bus partitionOf, NATS_PARTITIONS): two accounts of one partition share its consumers.
// `--a-per-second N`: A under a rate limit of N tokens a second (its bucket's burst the default
// 6000), retrying a 429 after its Retry-After, as a client honouring the limit does: the platform
// with the protection every account has (the default is 100); without it, A is unlimited (the
// worst case).
// `--import`: A loads its products as one import job (POST /v2/api/imports, NDJSON streamed), the
// bulk path of issue 47, whose target is B's p99 loaded at most 1.5x idle.
// Usage: node bench/fairness.mjs [--products 100000] [--writers 1] [--idle-probes 30] [--a-per-second N] [--single] [--import]   (`npm run build` first)
// Needs the local Postgres and NATS (TEST_DATABASE_URL / TEST_NATS_URL); makes its own database
// and stream and removes them.
import { randomBytes } from "node:crypto";
import { ndjson } from "./import-lines.mjs";
import { ADMIN, arg, startPlatform, startSeparately } from "./platform.mjs";

const PRODUCTS = Number(arg("--products", 100_000));
const PER_BATCH = 1000;
const IDLE_PROBES = Number(arg("--idle-probes", 30));
/** A's batches in flight at once: more than one makes A write faster than its messages are consumed, so a backlog builds. */
const WRITERS = Number(arg("--writers", 1));
const PARTITIONS = Number(process.env.NATS_PARTITIONS ?? 8);
/** A's rate limit (tokens a second), or none. */
const A_PER_SECOND = arg("--a-per-second", undefined) === undefined ? undefined : Number(arg("--a-per-second", undefined));
const natsUrl = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const IMPORT = process.argv.includes("--import");
const TARGET = IMPORT ? 1.5 : 2;

const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] : NaN);
const summary = (xs) => ({ n: xs.length, p50Ms: Math.round(pct(xs, 50)), p99Ms: Math.round(pct(xs, 99)), maxMs: Math.round(Math.max(...xs)) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** libs/bus partitionOf: FNV-1a of the account id, modulo the partitions. */
function partitionOf(accountId, partitions) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) hash = Math.imul(hash ^ accountId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % partitions;
}

const platform = process.argv.includes("--single")
  ? await (async () => {
      const stream = `FAIR${randomBytes(3).toString("hex").toUpperCase()}`;
      const p = await startPlatform({ env: { NATS_URL: natsUrl, NATS_STREAM: stream, NATS_SUBJECT_PREFIX: `${stream.toLowerCase()}.`, LOG_LEVEL: "warn" } });
      return {
        ...p,
        stop: async () => {
          await p.stop();
          const { connect } = await import("@nats-io/transport-node");
          const { jetstreamManager } = await import("@nats-io/jetstream");
          const nc = await connect({ servers: natsUrl });
          await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
          await nc.close();
        },
      };
    })()
  : await startSeparately();

try {
  const a = await platform.signUp("Loading");
  let b = await platform.signUp("Single");
  while (partitionOf(b.accountId, PARTITIONS) === partitionOf(a.accountId, PARTITIONS)) b = await platform.signUp("Single");
  // B never meets its rate limit (it polls); A only with --a-per-second.
  await platform.call("PUT", `/admin/v1/accounts/${b.accountId}/settings`, { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 }, ADMIN);
  const aLimits = A_PER_SECOND === undefined ? { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 } : { rateLimitPerSecond: A_PER_SECOND, rateLimitBurst: 6000 };
  await platform.call("PUT", `/admin/v1/accounts/${a.accountId}/settings`, aLimits, ADMIN);
  const month = new Date().toISOString().slice(0, 7);

  const queueCount = async (token) => Number((await platform.call("GET", "/v2/api/events?pageSize=1&event_type=update_sku", undefined, token)).headers.get("x-total-count"));
  const inPlanning = async (key) => {
    const res = await platform.call("POST", "/v2/api/planning/sales-plans/batch", [{ key, channel: 1, month, volume: 1 }], b.token);
    const status = res.body[0]?.statusCode;
    if (res.status >= 300 || status === undefined || (status !== 404 && status >= 300)) throw new Error(`sales plan: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return status !== 404;
  };

  // One product of B: milliseconds until it is in B's queue, and until planning knows it.
  let bWritten = 0;
  const probe = async () => {
    const n = ++bWritten;
    const sku = `B-${n}`;
    const t0 = performance.now();
    const res = await platform.call("POST", "/v2/api/products/batch", [{ key: sku, sku, season: "SS27", productName: `B ${n}` }], b.token);
    if (res.status !== 201) throw new Error(`B's product ${n}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    const writeMs = performance.now() - t0;
    // The queue and planning are watched each on its own: a slow answer of one does not delay seeing the other.
    const until = async (arrived) => {
      for (;;) {
        if (await arrived()) return performance.now() - t0;
        if (performance.now() - t0 > 300_000) throw new Error(`B's product ${n} not through within 300 s`);
        await sleep(10);
      }
    };
    const [queueMs, planningMs] = await Promise.all([until(async () => (await queueCount(b.token)) >= n), until(() => inPlanning(sku))]);
    return { writeMs, queueMs, planningMs };
  };

  const idle = [];
  for (let i = 0; i < IDLE_PROBES; i++) idle.push(await probe());

  // A's load, with its own lag: each batch's answer until the queue holds its entries.
  const answered = [];
  let aRefused = 0;
  const aLags = [];
  let loading = true;
  let nextBatch = 0;
  const writer = async () => {
    for (let batch = nextBatch++; batch < PRODUCTS / PER_BATCH; batch = nextBatch++) {
      const items = Array.from({ length: PER_BATCH }, (_, i) => ({ key: `A-${batch}-${i}`, sku: `A-${batch}-${i}`, season: "SS27", productName: `A ${i}` }));
      let res = await platform.call("POST", "/v2/api/products/batch", items, a.token);
      for (; res.status === 429; res = await platform.call("POST", "/v2/api/products/batch", items, a.token)) {
        aRefused++;
        await sleep(1000 * Number(res.headers.get("retry-after")));
      }
      if (res.status !== 201) throw new Error(`A's batch ${batch}: ${res.status}`);
      answered.push(performance.now());
    }
  };
  // A's products as one import job: the file streamed as it is made, then the job awaited.
  const importer = async () => {
    const lines = ndjson(PRODUCTS, (i) => ({ key: `A-${i}`, sku: `A-${i}`, season: "SS27", productName: `A ${i}` }));
    const res = await fetch(`${platform.base}/v2/api/imports?resource=products`, { method: "POST", headers: { authorization: `Bearer ${a.token}`, "content-type": "application/x-ndjson" }, body: lines, duplex: "half" });
    const job = await res.json();
    if (res.status !== 202) throw new Error(`A's import: ${res.status} ${JSON.stringify(job)}`);
    for (;;) {
      const { body } = await platform.call("GET", `/v2/api/imports/${job.id}`, undefined, a.token);
      if (body.status === "completed") return;
      if (body.status !== "queued" && body.status !== "running") throw new Error(`A's import ended ${body.status}: ${body.message}`);
      await sleep(200);
    }
  };
  const load = (async () => {
    const t0 = performance.now();
    await (IMPORT ? importer() : Promise.all(Array.from({ length: WRITERS }, writer)));
    return performance.now() - t0;
  })().finally(() => (loading = false));
  const watchA = (async () => {
    let seen = 0;
    // An import has no batch answers to time its entries from: only when the queue holds them all.
    while (IMPORT && (await queueCount(a.token)) < PRODUCTS) await sleep(100);
    while (!IMPORT && seen < PRODUCTS) {
      const count = await queueCount(a.token);
      while (seen < Math.floor(count / PER_BATCH) * PER_BATCH && answered.length > seen / PER_BATCH) {
        aLags.push(performance.now() - answered[seen / PER_BATCH]);
        seen += PER_BATCH;
      }
      await sleep(100);
    }
    return performance.now();
  })();
  const loaded = [];
  const loadStart = performance.now();
  while (loading) loaded.push(await probe());
  const writesMs = await load;
  const aDoneMs = (await watchA) - loadStart;

  // After the write's answer: the time spent in line (relay, bus, consumers), without the write's own.
  const phase = (rs) => ({
    write: summary(rs.map((r) => r.writeMs)),
    queue: summary(rs.map((r) => r.queueMs)),
    planning: summary(rs.map((r) => r.planningMs)),
    queueAfterWrite: summary(rs.map((r) => r.queueMs - r.writeMs)),
    planningAfterWrite: summary(rs.map((r) => r.planningMs - r.writeMs)),
  });
  const result = {
    partitions: PARTITIONS,
    products: PRODUCTS,
    writers: IMPORT ? "import" : WRITERS,
    aPerSecond: A_PER_SECOND ?? null,
    idle: phase(idle),
    loaded: phase(loaded),
    a: { writesMs: Math.round(writesMs), queueCompleteMs: Math.round(aDoneMs), batchToQueue: summary(aLags), refused: aRefused },
  };
  const ratio = (what) => +(result.loaded[what].p99Ms / result.idle[what].p99Ms).toFixed(2);
  result.p99Ratio = Object.fromEntries(Object.keys(result.idle).map((what) => [what, ratio(what)]));
  // The write's own answer: how much of the lag is the platform being busy, not waiting in line.
  for (const what of Object.keys(result.idle)) {
    console.log(
      `B's single product -> ${what}: idle p50 ${result.idle[what].p50Ms} ms p99 ${result.idle[what].p99Ms} ms (${result.idle[what].n}); ` +
        `while A loads: p50 ${result.loaded[what].p50Ms} ms p99 ${result.loaded[what].p99Ms} ms (${result.loaded[what].n}) -> p99 ratio ${result.p99Ratio[what]} (target <= ${TARGET})`,
    );
  }
  console.log(
    IMPORT
      ? `A: ${PRODUCTS} products imported in ${result.a.writesMs} ms (POST to completed), all in its queue at ${result.a.queueCompleteMs} ms`
      : `A: ${PRODUCTS} products in ${PRODUCTS / PER_BATCH} batches written in ${result.a.writesMs} ms, all in its queue at ${result.a.queueCompleteMs} ms; ` +
          `batch answer -> its entries in the queue p50 ${result.a.batchToQueue.p50Ms} ms p99 ${result.a.batchToQueue.p99Ms} ms`,
  );
  console.log(JSON.stringify({ fairness: result }));
} finally {
  await platform.stop();
}
