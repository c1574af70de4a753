import { existsSync, readFileSync, rmSync } from "node:fs";
import { eventually } from "./wait";
import { connectionBudget, connectionsFile, killAll, removeRunResources, runProcesses, runResources } from "./run";

/**
 * Jest global teardown: fails the run when anything the tests
 * started or made is still there (a process, a database, a stream, a temp file) or when the run's
 * connections went over the budget; what is left is removed either way. Then the run's monitor ends.
 */
export default async function globalTeardown(): Promise<void> {
  const containers = (globalThis as { __containers?: { stop(): Promise<unknown> }[] }).__containers ?? [];
  const runId = process.env.TEST_RUN_ID;
  const runDir = process.env.TEST_RUN_DIR;
  const problems: string[] = [];
  if (runId && runDir) {
    const monitorPid = Number(process.env.TEST_RUN_MONITOR_PID);
    // A process stopped by the last afterAll may still be on its way out.
    const left = () => runProcesses(runId, runDir, [monitorPid]);
    await eventually(async () => left().length === 0, 5_000).catch(() => undefined);
    for (const p of await killAll(left())) problems.push(`process ${p.pid} still running: ${p.command.slice(0, 200)}`);
    const resources = await runResources(runId, runDir);
    problems.push(...resources.databases.map((d) => `database ${d} not dropped`));
    problems.push(...resources.streams.map((s) => `stream ${s} not deleted`));
    problems.push(...resources.files.map((f) => `temp ${f} not removed`));
    await removeRunResources(resources);
    const file = connectionsFile(runDir);
    if (existsSync(file)) {
      const { peak, at, byDatabase } = JSON.parse(readFileSync(file, "utf8"));
      const budget = connectionBudget();
      if (peak > budget) problems.push(`the run held ${peak} Postgres connections at once (${at}), over its budget of ${budget}: ${JSON.stringify(byDatabase)}`);
      else console.log(`\nPostgres connections of the run at most ${peak} (budget ${budget})`);
    }
    // Only now is the monitor told to end: if jest dies during this teardown, it cleans up.
    rmSync(`${runDir}/monitor`, { force: true });
    rmSync(runDir, { recursive: true, force: true });
  }
  await Promise.all(containers.map((c) => c.stop()));
  if (problems.length) throw new Error(`the test run left things behind or overran its budget (removed now):\n- ${problems.join("\n- ")}`);
}
