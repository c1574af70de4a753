import { existsSync, rmSync, writeFileSync } from "node:fs";
import pg from "pg";
import { connectionsFile, killAll, removeRunResources, runProcesses, runResources } from "./run";

/**
 * One per jest run, started detached by the global setup (bundled to TEST_RUN_DIR/monitor.js):
 * - samples the connections to the run's databases every 250 ms and keeps the peak in
 *   connections.json, which the teardown holds against the budget;
 * - when jest is gone without its teardown (Ctrl-C, kill, a crash), removes what the run left:
 *   its processes, databases, streams and directory.
 * It ends when the teardown removes the run directory's `monitor` file, or after reaping.
 */
const { runId, runDir, jestPid } = JSON.parse(process.env.TEST_RUN_MONITOR ?? "{}") as { runId: string; runDir: string; jestPid: number };
const running = `${runDir}/monitor`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function main() {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres" });
  await admin.connect();
  let peak = 0;
  // The run's databases end in `_<run id>`; `_` is a LIKE wildcard, hence the escape.
  const pattern = `%\\_${runId}`;
  while (existsSync(running)) {
    if (!alive(jestPid)) {
      await admin.end().catch(() => undefined);
      await reap();
      return;
    }
    const { rows } = await admin.query<{ n: number; by: Record<string, number> | null }>(
      "select coalesce(sum(c), 0)::int as n, json_object_agg(datname, c) as by from (select datname, count(*)::int as c from pg_stat_activity where datname like $1 group by datname) d",
      [pattern],
    );
    if (rows[0].n > peak) {
      peak = rows[0].n;
      writeFileSync(connectionsFile(runDir), JSON.stringify({ peak, at: new Date().toISOString(), byDatabase: rows[0].by }));
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await admin.end();
}

/** jest died without its teardown: remove what its tests started and made. */
async function reap() {
  const left = await killAll(runProcesses(runId, runDir, [process.pid]));
  const resources = await runResources(runId, runDir).catch(() => undefined);
  if (resources) await removeRunResources(resources).catch(() => undefined);
  rmSync(runDir, { recursive: true, force: true });
  console.error(`test run ${runId} ended without its teardown: killed ${left.length} processes, removed ${resources?.databases.length ?? "?"} databases and ${resources?.streams.length ?? "?"} streams`);
}

main().catch((error) => {
  console.error("test run monitor failed:", error);
  process.exit(1);
});
