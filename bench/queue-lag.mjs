// Issue 8 item 1: how long after the writes the event queue is complete. 10,000 products in 10
// batches of 1000; the ratio is (time until the last update_sku entry exists) / (time the writes
// took), in both bus modes. Target: at most 1.5.
// Usage: node bench/queue-lag.mjs [--start path/to/dist/local/start.js]
// Needs the local Postgres and NATS (TEST_DATABASE_URL / TEST_NATS_URL); makes its own database
// and stream and removes them.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

const startScript = process.argv.includes("--start") ? process.argv[process.argv.indexOf("--start") + 1] : "dist/local/start.js";
const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const natsUrl = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
const ADMIN = "bench-admin-token-0123456789";
const BATCHES = 10;
const PER_BATCH = 1000;

async function withDatabase(fn) {
  const name = `bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

function start(env) {
  const child = spawn(process.execPath, [startScript], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN: ADMIN, LOG_LEVEL: "info", DATA_DIR: mkdtempSync(join(tmpdir(), "lag-")), ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    const onData = (c) => {
      buf += c;
      for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
        try {
          const e = JSON.parse(buf.slice(0, nl));
          if (e.msg === "platform ready") {
            child.stdout.off("data", onData);
            child.stdout.resume();
            resolve({ child, base: `http://127.0.0.1:${e.port}` });
          }
        } catch {}
      }
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => reject(new Error(`platform exited ${code}`)));
  });
}

async function call(method, url, body, token) {
  const res = await fetch(url, {
    method,
    headers: { ...(body ? { "content-type": "application/json" } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function measure(mode) {
  return withDatabase(async (databaseUrl) => {
    const stream = `LAG${randomBytes(3).toString("hex").toUpperCase()}`;
    const env = mode === "jetstream" ? { DATABASE_URL: databaseUrl, NATS_URL: natsUrl, NATS_STREAM: stream, NATS_SUBJECT_PREFIX: `${stream.toLowerCase()}.` } : { DATABASE_URL: databaseUrl };
    const { child, base } = await start(env);
    try {
      const account = (await call("POST", `${base}/admin/v1/accounts`, { name: "Lag" }, ADMIN)).body;
      const token = (await call("POST", `${base}/v2/api/auth`, { accountID: account.accountID, apiKey: account.apiKey })).body.accessToken;
      const t0 = performance.now();
      for (let b = 0; b < BATCHES; b++) {
        const items = Array.from({ length: PER_BATCH }, (_, i) => ({ key: `K-${b}-${i}`, sku: `S-${b}-${i}`, season: "SS27", productName: `P ${i}` }));
        const res = await call("POST", `${base}/v2/api/products/batch`, items, token);
        if (res.status !== 201) throw new Error(`batch ${b}: ${res.status}`);
      }
      const writesMs = performance.now() - t0;
      const want = BATCHES * PER_BATCH;
      for (;;) {
        const res = await call("GET", `${base}/v2/api/events?pageSize=1&event_type=update_sku`, undefined, token);
        if (Number(res.headers.get("x-total-count")) >= want) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const lastEntryMs = performance.now() - t0;
      return { mode, writesMs: Math.round(writesMs), lastEntryMs: Math.round(lastEntryMs), ratio: +(lastEntryMs / writesMs).toFixed(2), entriesPerSecond: Math.round(want / (lastEntryMs / 1000)) };
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      if (mode === "jetstream") {
        const { connect } = await import("@nats-io/transport-node");
        const { jetstreamManager } = await import("@nats-io/jetstream");
        const nc = await connect({ servers: natsUrl });
        await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
        await nc.close();
      }
    }
  });
}

const results = [];
for (const mode of ["in-process", "jetstream"]) {
  const r = await measure(mode);
  results.push(r);
  console.log(`${mode}: writes ${r.writesMs} ms, last update_sku entry at ${r.lastEntryMs} ms -> ratio ${r.ratio} (target <= 1.5), ${r.entriesPerSecond} entries/s`);
}
console.log(JSON.stringify({ queueLag: results }));
