// Issue 47 item 4: imports against raw COPY, in the same run. A products file (--products N,
// default 1,000,000) and a transactions file (--transactions N, default 1,000,000), each POSTed to
// /v2/api/imports as NDJSON streamed from a generator (never whole in memory), timed from the
// POST to the job's `completed`; beside each, raw COPY of the same rows in one transaction (the
// floor). Prints lines a second (and those of the apply alone, from the job's start to its end) and
// the ratio to the floor. Targets (docs/benchmarks.md): products
// >= 20,000 lines/s, transactions >= 50,000 lines/s and >= 0.5 of the floor.
// Usage: node bench/import.mjs [--products N] [--transactions N] [--start path/to/dist/local/start.js]
import pg from "pg";
import { ndjson, product, rawCopy, transaction } from "./import-lines.mjs";
import { arg, startPlatform } from "./platform.mjs";

const PRODUCTS = Number(arg("--products", 1_000_000));
const TRANSACTIONS = Number(arg("--transactions", 1_000_000));

const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
try {
  const { token, accountId } = await platform.signUp("Imports");

  async function importOf(resource, count, line) {
    const postedAt = Date.now();
    const t = performance.now();
    const res = await fetch(`${platform.base}/v2/api/imports?resource=${resource}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" }, body: ndjson(count, line), duplex: "half" });
    const created = await res.json();
    if (res.status !== 202) throw new Error(`import not created: ${res.status} ${JSON.stringify(created)}`);
    const acceptedMs = performance.now() - t;
    for (;;) {
      const job = await (await fetch(`${platform.base}/v2/api/imports/${created.id}`, { headers: { authorization: `Bearer ${token}` } })).json();
      if (!["queued", "running"].includes(job.status)) return { job, acceptedMs, ms: performance.now() - t, postedAt };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * Milliseconds from the import's POST (`postedAt`, epoch ms) until the account's queue held
   * `count` update_sku entries (one per new product): the newest entry's `created_at` once they
   * are all there. The queue's newest seq (an index probe) says when to count them (a count takes
   * about a second at a million entries: polled, it would load Postgres itself).
   */
  async function untilQueued(count, postedAt) {
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      const newest = async () => Number((await db.query("SELECT coalesce(max(seq), 0) AS seq FROM events.events WHERE account_id = $1", [accountId])).rows[0].seq);
      const t = performance.now();
      for (;;) {
        if ((await newest()) >= count) {
          const { rows } = await db.query("SELECT count(*)::int AS n, extract(epoch FROM max(created_at)) * 1000 AS last FROM events.events WHERE account_id = $1 AND event_type = 'update_sku'", [accountId]);
          if (rows[0].n >= count) return rows[0].last - postedAt;
        }
        if (performance.now() - t > 3_600_000) throw new Error("update_sku entries still being queued an hour after the import");
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    } finally {
      await db.end();
    }
  }

  /** The floor (rawCopy), on a connection of its own opened now: one held open through the import would, when the import fails, be cut by the platform's stop (its database dropped) and crash the bench with that error instead of the import's. */
  async function copyFloor(resource, count) {
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      return await rawCopy(db, resource, count);
    } finally {
      await db.end();
    }
  }

  // The apply alone: from the job's start (its first chunk taken, once the whole file is in) to its end.
  const applyMs = (job) => new Date(job.finishedAt) - new Date(job.startedAt);
  const report = (what, count, imported, floorMs) =>
    console.log(
      `${what}: ${count} lines, accepted in ${(imported.acceptedMs / 1000).toFixed(1)} s, ${imported.job.status} in ${(imported.ms / 1000).toFixed(1)} s = ${Math.round(count / (imported.ms / 1000))} lines/s (applied in ${(applyMs(imported.job) / 1000).toFixed(1)} s = ${Math.round(count / (applyMs(imported.job) / 1000))} lines/s); raw COPY ${(floorMs / 1000).toFixed(1)} s; import/floor ${(floorMs / imported.ms).toFixed(2)}`,
    );

  if (PRODUCTS) {
    const imported = await importOf("products", PRODUCTS, product);
    const queuedMs = await untilQueued(PRODUCTS, imported.postedAt);
    const floorMs = await copyFloor("products", PRODUCTS);
    report("products", PRODUCTS, imported, floorMs);
    console.log(`products: the last update_sku entry on the queue ${(queuedMs / 1000).toFixed(1)} s after the POST: ${(queuedMs / imported.ms).toFixed(2)} of the import's time (target <= 1.5)`);
  }
  if (TRANSACTIONS) {
    const imported = await importOf("transactions", TRANSACTIONS, transaction);
    const floorMs = await copyFloor("transactions", TRANSACTIONS);
    report("transactions", TRANSACTIONS, imported, floorMs);
  }
} finally {
  await platform.stop();
}
