import net from "node:net";
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTmpDir } from "./run";

/**
 * Jest global setup: tests use the Postgres and NATS given by TEST_DATABASE_URL / TEST_NATS_URL or
 * the machine's local services. Only when neither answers and a Docker engine does, testcontainers
 * starts them for the run. Then the run gets its identity (see run.ts) and its monitor.
 */
export default async function globalSetup(): Promise<void> {
  const pgUp = await reachable(process.env.TEST_DATABASE_URL || "postgres://127.0.0.1:5432", 5432);
  const natsUp = await reachable(process.env.TEST_NATS_URL || "nats://127.0.0.1:4222", 4222);
  if (pgUp && natsUp) {
    const { sweepStaleTestResources } = await import("./sweep");
    await sweepStaleTestResources();
  } else {
    await startContainers(pgUp, natsUp);
  }
  startRun();
}

/**
 * The run's id, directory and monitor. Set in process.env here, they reach every worker and every
 * process a test starts: TMPDIR makes every temp dir one of the run's, TEST_RUN_ID marks every
 * process, database and stream, and the pools of every platform a test starts stay small
 * (DB_POOL_MAX), so the run's connections stay within the budget (TEST_CONNECTION_BUDGET).
 */
function startRun(): void {
  const runId = randomBytes(3).toString("hex");
  const runDir = mkdtempSync(join(tmpdir(), `analytics-test-${runId}-`));
  // The embedded Postgres runs as the `postgres` user when tests run as root: it must reach data
  // dirs under the run's TMPDIR.
  chmodSync(runDir, 0o755);
  mkdirSync(runTmpDir(runDir), { mode: 0o1777 });
  chmodSync(runTmpDir(runDir), 0o1777);
  process.env.TEST_RUN_ID = runId;
  process.env.TEST_RUN_DIR = runDir;
  process.env.TMPDIR = runTmpDir(runDir);
  process.env.DB_POOL_MAX ??= "3";

  const root = join(__dirname, "../../..");
  const monitor = join(runDir, "monitor.js");
  // esbuild's CLI, not its API: the API would leave its service process running beside jest.
  execFileSync(join(root, "node_modules/.bin/esbuild"), [join(__dirname, "run-monitor.ts"), "--bundle", "--platform=node", "--format=cjs", "--packages=external", "--log-level=warning", `--outfile=${monitor}`]);
  writeFileSync(join(runDir, "monitor"), String(process.pid));
  // Not marked as the run's own (it must outlive jest to clean up after it), and in a session of its own.
  const { TEST_RUN_ID: _notMarked, ...inherited } = process.env;
  const env = { ...inherited, NODE_PATH: join(root, "node_modules"), TEST_RUN_MONITOR: JSON.stringify({ runId, runDir, jestPid: process.pid }) };
  const child = spawn(process.execPath, [monitor], { env, detached: true, stdio: "ignore", cwd: root });
  child.unref();
  process.env.TEST_RUN_MONITOR_PID = String(child.pid);
}

async function startContainers(pgUp: boolean, natsUp: boolean): Promise<void> {
  if (!dockerAnswers()) {
    throw new Error(
      `tests need Postgres (${pgUp ? "up" : "down"}) and NATS JetStream (${natsUp ? "up" : "down"}): ` +
        "set TEST_DATABASE_URL / TEST_NATS_URL or start the local services (see README)",
    );
  }
  const { GenericContainer, Wait } = await import("testcontainers");
  const containers: { stop(): Promise<unknown> }[] = [];
  if (!pgUp) {
    const c = await new GenericContainer("postgres:16-alpine")
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    process.env.TEST_DATABASE_URL = `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
    containers.push(c);
  }
  if (!natsUp) {
    const c = await new GenericContainer("nats:2").withCommand(["-js"]).withExposedPorts(4222).start();
    process.env.TEST_NATS_URL = `nats://${c.getHost()}:${c.getMappedPort(4222)}`;
    containers.push(c);
  }
  (globalThis as { __containers?: typeof containers }).__containers = containers;
}

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname || "127.0.0.1", port: Number(u.port) || defaultPort });
    socket.setTimeout(1000);
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => (socket.destroy(), resolve(false)));
  });
}

function dockerAnswers(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync("/var/run/docker.sock");
}
