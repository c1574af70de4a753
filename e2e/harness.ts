import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { NatsBus } from "@analytics/bus";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { checkResponse, killAll, namedTestDatabase, processesWith, testNatsUrl, uniqueName, whileProgressing, type OpenApiDocument } from "@analytics/testing";

export { checkResponse, type OpenApiDocument };

const root = join(__dirname, "..");
let built = false;

/** e2e drives the bundles `npm start` runs; building them takes well under a second. */
function ensureBuilt(): void {
  if (built && existsSync(join(root, "dist/local/start.js"))) return;
  execFileSync(process.execPath, ["deploy/local/build.mjs", "local"], { cwd: root, stdio: "pipe" });
  built = true;
}

/** The checkout these tests run from. */
export const checkoutRoot = root;

export interface Platform {
  baseUrl: string;
  startupMs: number;
  logs: string[];
  stop(): Promise<void>;
  /** SIGKILL: the process dies mid-work, as in a crash (what it started, an embedded Postgres, stays). */
  kill(): Promise<void>;
  /**
   * A terminal's Ctrl-C: SIGINT to the platform's whole process group (it must have been started
   * with `processGroup`). Resolves with the exit code.
   */
  interrupt(): Promise<number | null>;
}

/** A start fails when the platform has written no line and used no CPU for this long (PLATFORM_STALL_MS). */
export const PLATFORM_STALL_MS = Number(process.env.PLATFORM_STALL_MS || 30_000);
/** The longest a start may take while it still moves. */
export const PLATFORM_START_LIMIT_MS = 5 * 60_000;
/** Timeout of a hook or test that starts one platform: the start's own limit, and room to work. */
export const PLATFORM_HOOK_TIMEOUT_MS = PLATFORM_START_LIMIT_MS + 60_000;

export interface StartOptions {
  /** The checkout whose dist/local/start.js runs (default: this one). */
  checkout?: string;
  /** Aborting kills the starting platform, with all it started, and rejects the start. */
  signal?: AbortSignal;
  stallMs?: number;
  /** Started in a process group of its own (as a terminal starts a command), so interrupt() can signal the group. */
  processGroup?: boolean;
}

/**
 * Starts the whole platform (`node dist/local/start.js`) and waits for its "platform ready" line
 * as long as it moves: a start on a loaded machine gets the time it needs, one that stalls (no
 * line, no CPU for `stallMs`) fails as soon as on an idle machine. A start that fails, stalls or
 * is aborted leaves nothing running: every process it started carries its tag and is killed.
 */
export async function startPlatform(env: Record<string, string | undefined>, options: StartOptions = {}): Promise<Platform> {
  const { checkout = root, signal, stallMs = PLATFORM_STALL_MS, processGroup = false } = options;
  signal?.throwIfAborted();
  if (checkout === root) ensureBuilt();
  const tag = randomBytes(6).toString("hex");
  const childEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env, TEST_PLATFORM_TAG: tag })) {
    if (v !== undefined) childEnv[k] = v;
  }
  const child = spawn(process.execPath, ["dist/local/start.js"], { cwd: checkout, env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached: processGroup });
  const killEverything = () => killAll(processesWith("TEST_PLATFORM_TAG", tag)).then(() => undefined);
  const logs: string[] = [];
  let ready: { port: number; startupMs: number } | undefined;
  let exited: string | undefined;
  let buffer = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      logs.push(line);
      try {
        const entry = JSON.parse(line);
        if (entry.msg === "platform ready") ready = { port: entry.port, startupMs: entry.startupMs };
      } catch {
        /* not a log line */
      }
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
  child.once("exit", (code, sig) => (exited = String(code ?? sig)));
  const began = Date.now();
  let [cpu, cpuReadAt] = [0, 0];
  try {
    await whileProgressing(
      async () => {
        signal?.throwIfAborted();
        if (exited !== undefined && !ready) throw new Error(`platform exited with ${exited}`);
        // Moves: a line written, or CPU used by any of its processes (an initdb writes nothing);
        // the processes are looked up in /proc at most twice a second.
        if (Date.now() - cpuReadAt >= 500) [cpu, cpuReadAt] = [cpuTicks(tag), Date.now()];
        return logs.length + cpu;
      },
      () => ready !== undefined || Date.now() - began > PLATFORM_START_LIMIT_MS,
      stallMs,
      "the platform's start",
      { rethrow: true },
    );
    if (!ready) throw new Error(`platform not ready after ${PLATFORM_START_LIMIT_MS} ms though it still moved`);
  } catch (error) {
    await killEverything();
    throw new Error(`${error instanceof Error ? error.message : String(error)}:\n${logs.slice(-20).join("\n")}`);
  }
  const { port, startupMs } = ready;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    startupMs,
    logs,
    stop: () => stopChild(child).then(killEverything),
    kill: () => killChild(child, processGroup),
    interrupt: () => {
      if (!processGroup) throw new Error("interrupt() needs a platform started with processGroup");
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      process.kill(-child.pid!, "SIGINT");
      return exited;
    },
  };
}

/** CPU time (clock ticks) used so far by the live processes carrying `tag`. */
function cpuTicks(tag: string): number {
  let ticks = 0;
  for (const { pid } of processesWith("TEST_PLATFORM_TAG", tag)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* gone meanwhile */
    }
  }
  return ticks;
}

function killChild(child: ChildProcess, processGroup: boolean): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    if (processGroup) process.kill(-child.pid!, "SIGKILL");
    else child.kill("SIGKILL");
  });
}

/** SIGTERM, and SIGKILL if it has not exited 15 s later; then whatever it started and left is killed too. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

const documents = new Map<string, Promise<OpenApiDocument>>();

function documentOf(baseUrl: string): Promise<OpenApiDocument> {
  let doc = documents.get(baseUrl);
  if (!doc) {
    doc = fetch(`${baseUrl}/v2/api/openapi.json`).then((r) => r.json() as Promise<OpenApiDocument>);
    documents.set(baseUrl, doc);
  }
  return doc;
}

/** A small JSON client of the REST API; every answer is checked against the served document (checkResponse). */
export function client(baseUrl: string, token?: string) {
  return async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: {
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    checkResponse(await documentOf(baseUrl), method, path, res.status, parsed, res.headers.get("content-type"));
    return { status: res.status, headers: res.headers, body: parsed as T };
  };
}

/** Creates an account through the admin API and signs in with its first key. */
export async function signUp(baseUrl: string, adminToken: string, name = "Acme") {
  const admin = client(baseUrl, adminToken);
  const created = await admin("POST", "/admin/v1/accounts", { name });
  if (created.status !== 201) throw new Error(`account not created: ${created.status} ${JSON.stringify(created.body)}`);
  const { accountID, apiKey, apiKeyId } = created.body;
  const auth = await client(baseUrl)("POST", "/v2/api/auth", { accountID, apiKey });
  if (auth.status !== 200) throw new Error(`auth failed: ${auth.status}`);
  return { accountID, apiKey, apiKeyId, token: auth.body.accessToken as string, api: client(baseUrl, auth.body.accessToken) };
}

export const E2E_ADMIN_TOKEN = "e2e-admin-token-0123456789";

export interface PlatformOnTestServices extends Platform {
  /** A JetStream client on the platform's own stream, to publish or watch what it publishes. */
  bus: NatsBus;
  /** The platform's database (every schema), for operator tools under test. */
  databaseUrl: string;
  /** Stops the platform, deletes its stream and drops its database. */
  close(): Promise<void>;
}

/**
 * The platform on test services for the test file (or describe block) that calls this: started in
 * beforeAll, closed in afterAll. The object is filled in beforeAll, so read it inside hooks and tests.
 * A start still under way when afterAll runs (its hook timed out) is aborted: its processes killed,
 * its database and stream removed.
 */
export function platformForFile(env: Record<string, string> = {}): PlatformOnTestServices {
  const platform = {} as PlatformOnTestServices;
  const abort = new AbortController();
  let starting: Promise<unknown> | undefined;
  beforeAll(async () => {
    starting = startOnTestServices(env, abort.signal).then((started) => Object.assign(platform, started));
    await starting;
  }, PLATFORM_HOOK_TIMEOUT_MS);
  afterAll(async () => {
    abort.abort();
    await starting?.catch(() => undefined);
    await platform.close?.();
  }, PLATFORM_HOOK_TIMEOUT_MS);
  return platform;
}

/**
 * The platform on the test Postgres (a fresh database) and test NATS (a stream of its own); `env`
 * adds settings. Whatever it made is removed when the start fails or is aborted, and by close().
 */
export async function startOnTestServices(
  env: Record<string, string> = {},
  signal?: AbortSignal,
  /** Told the names of what the start makes, before it makes them. */
  naming?: (names: { database: string; stream: string; dataDir: string }) => void,
): Promise<PlatformOnTestServices> {
  const stream = uniqueName("E2E").toUpperCase();
  const subjectPrefix = `${stream.toLowerCase()}.`;
  const dataDir = join(tmpdir(), stream);
  const database = namedTestDatabase();
  naming?.({ database: database.name, stream, dataDir });
  const undo: (() => Promise<unknown>)[] = [async () => rmSync(dataDir, { recursive: true, force: true })];
  const removeAll = async () => {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  };
  try {
    await database.create();
    undo.push(() => database.drop());
    const bus = await NatsBus.connect({ url: testNatsUrl(), stream, subjectPrefix });
    undo.push(() => bus.deleteStream().then(() => bus.close()));
    const platform = await startPlatform(
      {
        DATABASE_URL: database.url,
        NATS_URL: testNatsUrl(),
        NATS_STREAM: stream,
        NATS_SUBJECT_PREFIX: subjectPrefix,
        ADMIN_TOKEN: E2E_ADMIN_TOKEN,
        DATA_DIR: dataDir,
        ...env,
      },
      { signal },
    );
    undo.push(() => platform.stop());
    return { ...platform, bus, databaseUrl: database.url, close: removeAll };
  } catch (error) {
    await removeAll();
    throw error;
  }
}

type Api = ReturnType<typeof client>;

/**
 * A list's weak ETag (CONTRACT "Conditional requests"): `path` answers one, another query of the
 * same list another; a current If-None-Match is a 304 without a body; `othersWrite` (another
 * account's) leaves the tag as it was, `write` (the account's own) gives a new one. Returns the
 * last tag.
 */
export async function checkListTag(api: Api, path: string, otherQuery: string, othersWrite: () => Promise<unknown>, write: () => Promise<unknown>): Promise<string> {
  const first = await api("GET", path);
  const tag = first.headers.get("etag")!;
  expect([first.status, tag]).toEqual([200, expect.stringMatching(/^W\/"[^"]+"$/)]);
  expect((await api("GET", otherQuery)).headers.get("etag")).not.toBe(tag);
  const notModified = await api("GET", path, undefined, { "if-none-match": tag });
  expect([notModified.status, notModified.body, notModified.headers.get("etag")]).toEqual([304, undefined, tag]);
  await othersWrite();
  expect((await api("GET", path, undefined, { "if-none-match": tag })).status).toBe(304);
  await write();
  const changed = await api("GET", path, undefined, { "if-none-match": tag });
  expect(changed.status).toBe(200);
  expect(changed.headers.get("etag")).not.toBe(tag);
  return changed.headers.get("etag")!;
}

/** Messages of the stream not yet handled by every consumer (pending, or delivered and not acked). */
export async function busBacklog(stream: string, url = testNatsUrl()): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    let backlog = 0;
    for await (const info of await (await jetstreamManager(nc)).consumers.list(stream)) backlog += info.num_pending + info.num_ack_pending;
    return backlog;
  } finally {
    await nc.close();
  }
}
