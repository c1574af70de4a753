// Shared by the benches: the whole platform in a child process on a fresh database, and the
// calls a client makes to it.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const ADMIN = "bench-admin-token-0123456789";
export const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Starts `dist/local/start.js` (or `start`) on a new database; `stop()` ends it and drops the database. */
export async function startPlatform({ start = "dist/local/start.js", env = {} } = {}) {
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
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
  try {
    const ready = await new Promise((resolve, reject) => {
      let buf = "";
      const onData = (c) => {
        buf += c;
        for (let nl; (nl = buf.indexOf("\n")) >= 0; buf = buf.slice(nl + 1)) {
          try {
            const e = JSON.parse(buf.slice(0, nl));
            if (e.msg === "platform ready") {
              child.stdout.off("data", onData);
              if (process.env.BENCH_LOG_LEVEL) child.stdout.pipe(process.stderr);
              else child.stdout.resume();
              resolve(e);
            }
          } catch {}
        }
      };
      child.stdout.on("data", onData);
      child.once("exit", (code) => reject(new Error(`platform exited ${code}`)));
      setTimeout(() => reject(new Error("the platform did not log \"platform ready\" within 120 s")), 120_000).unref();
    });
    const base = `http://127.0.0.1:${ready.port}`;
    const call = async (method, path, body, token) => {
      const res = await fetch(base + path, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, headers: res.headers, body: await res.json() };
    };
    const signUp = async (n) => {
      const account = (await call("POST", "/admin/v1/accounts", { name: n }, ADMIN)).body;
      return { accountId: account.accountID, apiKeyId: account.apiKeyId, token: (await call("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).body.accessToken };
    };
    return { base, ready, child, databaseUrl: url.toString(), dataDir, call, signUp, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
