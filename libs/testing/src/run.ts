import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { madeByRun, testDatabaseUrl, testNatsUrl } from "./names";
import { eventually } from "./wait";

// One jest run and what it made. The global setup gives the run an id (TEST_RUN_ID, inherited by
// every worker and every process a test starts), a directory (TEST_RUN_DIR) and, inside it, the
// TMPDIR of every worker and child. Whatever carries the id belongs to the run: that is how the
// run's teardown, and its monitor when jest dies early, find what is left and remove it.

export interface RunProcess {
  pid: number;
  command: string;
}

/** The run's temp directory: TMPDIR of the run's workers and of every process they start. */
export const runTmpDir = (runDir: string) => join(runDir, "tmp");

/** Connections to the run's databases at their most, as the monitor saw them (runDir/connections.json). */
export const connectionsFile = (runDir: string) => join(runDir, "connections.json");

/** How many Postgres connections the run may hold at once (TEST_CONNECTION_BUDGET, default 70 of Postgres' 100). */
export const connectionBudget = () => Number(process.env.TEST_CONNECTION_BUDGET || 70);

/**
 * Live processes whose environment holds `name=value` (inherited from whatever test started
 * them, however deep: an embedded Postgres under a platform under a test), or whose command line
 * contains `commandIncludes`. Not this process, and not zombies (already dead, waiting for their
 * parent to read their status).
 */
export function processesWith(name: string, value: string, commandIncludes?: string): RunProcess[] {
  const found: RunProcess[] = [];
  const marker = `${name}=${value}`;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, "latin1").split("\0").join(" ").trim();
      const environment = readFileSync(`/proc/${entry}/environ`, "latin1").split("\0");
      if (environment.includes(marker) || (commandIncludes && command.includes(commandIncludes))) found.push({ pid: Number(entry), command });
    } catch {
      /* gone meanwhile */
    }
  }
  return found;
}

/** The parent of `pid`, or undefined when it is gone. */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** SIGKILL to each, then waits (at most 10 s) until none is alive; answers those that were. */
export async function killAll(processes: RunProcess[]): Promise<RunProcess[]> {
  for (const p of processes) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
  const gone = async () => processes.every((p) => !existsSync(`/proc/${p.pid}`) || isZombie(p.pid));
  await eventually(gone, 10_000).catch(() => undefined);
  return processes;
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** The processes of run `runId` other than jest's own (this process, its workers, the monitor). */
export function runProcesses(runId: string, runDir: string, own: number[]): RunProcess[] {
  return processesWith("TEST_RUN_ID", runId, runDir).filter(
    (p) => !own.includes(p.pid) && !(parentOf(p.pid) === process.pid && /jest-worker|processChild/.test(p.command)),
  );
}

/** Databases and JetStream streams of run `runId` on the test services, and the run's temp files. */
export async function runResources(runId: string, runDir: string) {
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  let databases: string[];
  try {
    const { rows } = await admin.query<{ datname: string }>("select datname from pg_database");
    databases = rows.map((r) => r.datname).filter((name) => madeByRun(name, runId));
  } finally {
    await admin.end();
  }
  const streams: string[] = [];
  const nc = await connect({ servers: testNatsUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const name of jsm.streams.names()) if (madeByRun(name, runId)) streams.push(name);
  } finally {
    await nc.close();
  }
  const tmp = runTmpDir(runDir);
  const files = existsSync(tmp) ? readdirSync(tmp).map((f) => join(tmp, f)) : [];
  return { databases, streams, files };
}

/** Drops, deletes and removes what runResources found. */
export async function removeRunResources({ databases, streams, files }: Awaited<ReturnType<typeof runResources>>): Promise<void> {
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  try {
    for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  const nc = await connect({ servers: testNatsUrl() });
  try {
    const jsm = await jetstreamManager(nc);
    for (const name of streams) await jsm.streams.delete(name).catch(() => undefined);
  } finally {
    await nc.close();
  }
  for (const file of files) rmSync(file, { recursive: true, force: true });
}
