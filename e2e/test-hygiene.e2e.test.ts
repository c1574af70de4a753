import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseExists, eventually, runResources } from "@analytics/testing";
import { checkoutRoot, startOnTestServices, startPlatform } from "./harness";
import { fakeCheckout } from "./fixtures/fake-platform";

// What a test starts, it stops; what a run makes, it removes; a run stays within its connection
// budget. The platform here is a stand-in (fixtures/fake-platform.ts) that starts a grandchild, as
// the launcher starts an embedded Postgres.

const alive = (pid: number) => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1].startsWith("Z");
  } catch {
    return false;
  }
};

describe("a platform's start", () => {
  let checkout: string;
  let pidFile: string;
  const grandchild = () => Number(readFileSync(pidFile, "utf8"));
  beforeAll(() => {
    checkout = fakeCheckout();
    pidFile = join(checkout, "grandchild.pid");
  });
  afterAll(() => rmSync(checkout, { recursive: true, force: true }));

  it("waits while the platform moves, longer than the stall limit, and its stop stops what it started", async () => {
    const platform = await startPlatform({ FAKE_MODE: "slow-ready", FAKE_PID_FILE: pidFile }, { checkout, stallMs: 1_000 });
    expect(platform.logs.filter((l) => l.includes('"starting"')).length).toBe(25);
    expect(alive(grandchild())).toBe(true);
    await platform.stop();
    expect(alive(grandchild())).toBe(false);
  });

  it("fails when nothing moves for the stall limit, and kills what it started", async () => {
    await expect(startPlatform({ FAKE_MODE: "silent", FAKE_PID_FILE: pidFile }, { checkout, stallMs: 1_000 })).rejects.toThrow(/stalled/);
    expect(alive(grandchild())).toBe(false);
  });

  it("is aborted by its signal, and kills what it started", async () => {
    const abort = new AbortController();
    rmSync(pidFile, { force: true });
    const start = startPlatform({ FAKE_MODE: "chatty", FAKE_PID_FILE: pidFile }, { checkout, signal: abort.signal });
    await eventually(async () => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "");
    abort.abort();
    await expect(start).rejects.toThrow(/abort/i);
    expect(alive(grandchild())).toBe(false);
  });
});

describe("a platform on the test services whose start is aborted (its hook gave up)", () => {
  it("removes its database, stream and data dir", async () => {
    const abort = new AbortController();
    let made!: { database: string; stream: string; dataDir: string };
    const start = startOnTestServices({}, abort.signal, (names) => (made = names));
    // Once its database exists, the start is under way.
    await eventually(() => databaseExists(made.database), 60_000, "the platform's database");
    abort.abort();
    await expect(start).rejects.toThrow(/abort/i);
    expect(await databaseExists(made.database)).toBe(false);
    const { streams, files } = await runResources(process.env.TEST_RUN_ID!, process.env.TEST_RUN_DIR!);
    expect(streams).not.toContain(made.stream);
    expect(files).not.toContain(made.dataDir);
  });
});

const nestedCache = join(tmpdir(), "nested-jest-cache");
afterAll(() => rmSync(nestedCache, { recursive: true, force: true }));

/** A jest run of `fixture` alone, as `npm test` runs jest (same config), with `env`. */
function nestedRun(fixture: string, env: Record<string, string>) {
  const jest = join(checkoutRoot, "node_modules/jest/bin/jest.js");
  const args = ["--config", join(checkoutRoot, "jest.config.js"), "--roots", join(checkoutRoot, "e2e/fixtures"), "--testMatch", `**/${fixture}`, "--cacheDirectory", nestedCache, "--ci"];
  const child = spawn(process.execPath, [jest, ...args], {
    cwd: checkoutRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c) => (output += c));
  child.stderr.on("data", (c) => (output += c));
  const exited = new Promise<number | string>((resolve) => child.once("exit", (code, signal) => resolve(code ?? String(signal))));
  return { child, exited, output: () => output };
}

describe("a jest run", () => {
  const report = join(tmpdir(), "fixture-report.json");
  const reported = () => JSON.parse(readFileSync(report, "utf8"));
  afterEach(() => rmSync(report, { force: true }));

  it("kills what a file left running, and fails listing every process, database and temp file left and connections over budget", async () => {
    const run = nestedRun("leaks.fixture.ts", { FIXTURE_OUT: report, TEST_CONNECTION_BUDGET: "2" });
    const code = await run.exited;
    const output = run.output();
    expect(code).not.toBe(0);
    const { hookGrandchild, escaped, database } = reported();
    // The hook timed out while the platform was still starting: the file's environment killed it.
    expect(output).toMatch(/killed \d+ process\(es\) the test file left running/);
    expect(alive(hookGrandchild)).toBe(false);
    // Killed when its file ended, so the run's teardown did not find it.
    expect(output).not.toContain(`process ${hookGrandchild} still running`);
    // The run's teardown found the rest, failed, and removed it.
    expect(output).toContain("the test run left things behind or overran its budget");
    expect(output).toContain(`process ${escaped} still running`);
    expect(output).toContain(`database ${database} not dropped`);
    expect(output).toMatch(/temp .*left-behind not removed/);
    expect(output).toMatch(/held [4-9] Postgres connections at once .* over its budget of 2/);
    expect(alive(escaped)).toBe(false);
    expect(await databaseExists(database)).toBe(false);
  }, 180_000);

  it("killed half-way (SIGKILL), is cleaned up after by its monitor", async () => {
    const run = nestedRun("early-exit.fixture.ts", { FIXTURE_OUT: report });
    await eventually(async () => existsSync(report) && reported().database, 120_000, () => `the fixture's report:\n${run.output()}`);
    const { grandchild, database, runDir } = reported();
    expect(alive(grandchild)).toBe(true);
    run.child.kill("SIGKILL");
    await run.exited;
    await eventually(async () => !alive(grandchild) && !(await databaseExists(database)) && !existsSync(runDir), 30_000, "the monitor's clean-up");
  }, 180_000);
});
