// Shared by the benches: the whole platform in a child process on a fresh database, and the
// calls a client makes to it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import pg from "pg";

export const ADMIN = "bench-admin-token-0123456789";
export const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Requests per second of `request` with `concurrency` in flight for `seconds`. */
export async function requestsPerSecond(request, concurrency, seconds) {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await request();
        done++;
      }
    }),
  );
  return done / seconds;
}

/** The calls a client makes to the API at `base`: any call, and a new account with its token. */
function clientOf(base) {
  const call = async (method, path, body, token) => {
    const res = await fetch(base + path, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, headers: res.headers, body: await res.json() };
  };
  const signUp = async (n) => {
    const account = (await call("POST", "/admin/v1/accounts", { name: n }, ADMIN)).body;
    // A bench measures the platform, not the account's rate limit (bench/rate-limit-leases.mjs measures that).
    await call("PUT", `/admin/v1/accounts/${account.accountID}/settings`, { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 }, ADMIN);
    const auth = async () => (await call("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).body.accessToken;
    // reauthenticate: a new token, for a bench that outlives one (TOKEN_TTL_SECONDS).
    return { accountId: account.accountID, apiKeyId: account.apiKeyId, token: await auth(), reauthenticate: auth };
  };
  return { call, signUp };
}

/**
 * Milliseconds until `schema`'s outbox has no unpublished row (a pg client on the platform's
 * database). In one process a row is marked published only after every consumer handled it, so
 * a bench that awaits this after a write times its next request without that write's consumers
 * (planning's replica, the events queue) on the platform's one thread; with the services
 * separate, it means JetStream has every message.
 */
export async function untilRelayed(db, schema) {
  const t = performance.now();
  for (;;) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${schema}.outbox WHERE published_at IS NULL AND dead_at IS NULL`);
    if (rows[0].n === 0) return performance.now() - t;
    if (performance.now() - t > 30_000) throw new Error(`${rows[0].n} ${schema} messages still unpublished after 30 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Calls `each` with every complete line a stream sends (the stream keeps flowing); a line `each` throws on is skipped. */
function forEachLine(stream, each) {
  let buf = "";
  stream.on("data", (chunk) => {
    buf += chunk;
    for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
      try {
        each(buf.slice(0, nl));
      } catch {}
    }
  });
}

/** A child that was killed by a signal has no exit code, only a signal code. */
const hasExited = (child) => child.exitCode !== null || child.signalCode !== null;

/**
 * Starts `dist/local/start.js` (or `start`) on a new database; `stop()` ends it and drops the
 * database. `onLog`, if given, receives each of the platform's JSON log lines after it is ready.
 */
export async function startPlatform({ start = "dist/local/start.js", env = {}, onLog } = {}) {
  const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "bench-"));
  // BENCH_NODE_ARGS (e.g. --cpu-prof) and BENCH_LOG_LEVEL (info or debug: the platform's log on
  // stderr; readiness is read from its info line) help find where the time goes.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, start], {
    env: { ...process.env, DATABASE_URL: url.toString(), PORT: "0", HOST: "127.0.0.1", ADMIN_TOKEN: ADMIN, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info", DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = async () => {
    if (!hasExited(child)) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
  try {
    const ready = await new Promise((resolve, reject) => {
      let started = false;
      // Until ready, lines are read for readiness; after it, passed to onLog (if any).
      forEachLine(child.stdout, (line) => {
        if (started) return onLog?.(JSON.parse(line));
        const entry = JSON.parse(line);
        if (entry.msg !== "platform ready") return;
        started = true;
        if (process.env.BENCH_LOG_LEVEL) child.stdout.pipe(process.stderr);
        resolve(entry);
      });
      child.once("exit", (code) => reject(new Error(`platform exited ${code}`)));
      setTimeout(() => reject(new Error("the platform did not log \"platform ready\" within 120 s")), 120_000).unref();
    });
    const base = `http://127.0.0.1:${ready.port}`;
    const { call, signUp } = clientOf(base);
    return { base, ready, child, databaseUrl: url.toString(), dataDir, call, signUp, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * The deployables as production runs them: the gateway and each service in a process of its own
 * (dist/gateway/main.js, dist/services/<name>/main.js), on a fresh database and a stream of their
 * own on the test JetStream. Same shape as startPlatform's answer; `processes` maps each name to
 * its child, so a bench can read the gateway's memory alone.
 */
export async function startSeparately({ env = {} } = {}) {
  const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const id = randomBytes(4).toString("hex");
  const name = `bench_${id}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  // Every service the build made (the registry's, deploy/local/services.ts).
  const services = readdirSync("dist/services");
  // Below the ephemeral range (32768+ here): a port there can be taken by an outgoing connection
  // of a process started just before (a service's to Postgres) before the gateway listens on it.
  const base = 20000 + Math.floor(Math.random() * 12000);
  const portOf = (i) => base + i * 2;
  const secret = () => randomBytes(24).toString("hex");
  const common = {
    ...process.env,
    DATABASE_URL: url.toString(),
    NATS_URL: process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222",
    NATS_STREAM: `BENCH_${id}`,
    NATS_SUBJECT_PREFIX: `bench${id}.`,
    INTERNAL_TOKEN: secret(),
    JWT_SECRET: secret(),
    API_KEY_PEPPER: secret(),
    ADMIN_TOKEN: ADMIN,
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    ...Object.fromEntries(services.map((s, i) => [`${s.toUpperCase()}_URL`, `http://127.0.0.1:${portOf(i)}`])),
    ...env,
  };
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  // BENCH_GATEWAY_NODE_ARGS: node options of the gateway process alone (e.g. --max-semi-space-size=1).
  const gatewayArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const spawnOne = (script, extra, args = nodeArgs) => spawn(process.execPath, [...args, script], { env: { ...common, ...extra }, stdio: ["ignore", "ignore", "inherit"] });
  const processes = Object.fromEntries(services.map((s, i) => [s, spawnOne(`dist/services/${s}/main.js`, { SERVICE_PORT: String(portOf(i)), HEALTH_PORT: String(portOf(i) + 1) })]));
  const gatewayPort = portOf(services.length);
  // Its /metrics on a port of its own (never the public one).
  processes.gateway = spawnOne("dist/gateway/main.js", { PORT: String(gatewayPort), METRICS_PORT: String(gatewayPort + 1) }, [...nodeArgs, ...gatewayArgs]);
  const gatewayBase = `http://127.0.0.1:${gatewayPort}`;
  const stop = async () => {
    await Promise.all(
      Object.values(processes).map(async (child) => {
        if (hasExited(child)) return;
        child.kill("SIGTERM");
        await new Promise((r) => child.once("exit", r));
      }),
    );
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    const nc = await connect({ servers: common.NATS_URL });
    await (await jetstreamManager(nc)).streams.delete(common.NATS_STREAM).catch(() => undefined);
    await nc.close();
  };
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const exited = Object.entries(processes).find(([, c]) => hasExited(c));
      if (exited) throw new Error(`${exited[0]} exited ${exited[1].exitCode ?? exited[1].signalCode}`);
      const ready = await fetch(`${gatewayBase}/readyz`).then((r) => r.ok, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error("the gateway was not ready within 120 s");
      await new Promise((r) => setTimeout(r, 200));
    }
    const { call, signUp } = clientOf(gatewayBase);
    const serviceUrls = Object.fromEntries(services.map((s, i) => [s, `http://127.0.0.1:${portOf(i)}`]));
    // Where each process answers /metrics: the gateway on its own port, a service on its HEALTH_PORT.
    const metricsUrls = { ...Object.fromEntries(services.map((s, i) => [s, `http://127.0.0.1:${portOf(i) + 1}/metrics`])), gateway: `http://127.0.0.1:${gatewayPort + 1}/metrics` };
    return { base: gatewayBase, child: processes.gateway, processes, services: serviceUrls, metricsUrls, internalToken: common.INTERNAL_TOKEN, databaseUrl: url.toString(), call, signUp, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

