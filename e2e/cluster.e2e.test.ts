import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { checkoutRoot } from "./harness";

/**
 * The cluster run in its short form (deploy/cluster/run.mjs --short): 3 NATS servers as a
 * JetStream cluster, 2 gateways, 2 replicas of each service as processes of their own from dist/,
 * two clients writing (products, prices, stock, purchase orders, transactions) and reading while a
 * service replica, a NATS node and a gateway are killed with SIGKILL and started again; then a
 * rolling update of a service in each order (new pod first; stop first) and a
 * service replica frozen (SIGSTOP) for 5 s, in which no request may fail. The script checks what
 * must hold (planned volumes and the breakdown equal to a computation from the writes among it)
 * and exits 1 listing what did not. It has no fixed time limit of its own (a stage fails when
 * nothing it waits for moves for a minute) and cleans up after itself whatever ends it.
 */
describe("the platform as a cluster (deploy/cluster/run.mjs --short)", () => {
  let run: ChildProcess | undefined;

  // Stopped with SIGINT, the run kills its processes, drops its database and removes its files.
  afterAll(async () => {
    if (!run || run.exitCode !== null || run.signalCode !== null) return;
    const exited = new Promise((resolve) => run!.once("exit", resolve));
    run.kill("SIGINT");
    await exited;
  });

  it("stores every acknowledged write once, gives each product write its queue entry with the newest last, plans right and leaves no outbox row behind, through kills; no request fails in rolling updates or with a frozen replica", async () => {
    run = spawn(process.execPath, [join(checkoutRoot, "deploy/cluster/run.mjs"), "--short"], { cwd: checkoutRoot, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    run.stdout!.on("data", (chunk) => (output += chunk));
    run.stderr!.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => run!.once("exit", (c, signal) => resolve(c ?? signal)));
    if (code !== 0) {
      // What failed first: a CI log shown in part still names it.
      const failed = output.slice(output.lastIndexOf("FAILED")).slice(0, 2000);
      throw new Error(`deploy/cluster/run.mjs --short exited ${code}: ${output.includes("FAILED") ? failed : "(no FAILED list)"}\n--- its output's end ---\n${output.slice(-6000)}`);
    }
    expect(output).toMatch(/everything held/);
  }, 400_000);
});
