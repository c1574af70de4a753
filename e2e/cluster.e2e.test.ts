import { spawn } from "node:child_process";
import { join } from "node:path";
import { checkoutRoot } from "./harness";

/**
 * The cluster run in its short form (deploy/cluster/run.mjs --short): 3 NATS servers as a
 * JetStream cluster, 2 gateways, 2 replicas of each service as processes of their own from dist/,
 * two clients writing (products, prices, stock, purchase orders, transactions) while a service
 * replica, a NATS node and a gateway are killed with SIGKILL and started again; the script
 * checks what must hold (planned volumes and the breakdown equal to a computation from the
 * writes among it) and exits 1 listing what did not.
 */
describe("the platform as a cluster (deploy/cluster/run.mjs --short)", () => {
  it("stores every acknowledged write once, gives each product write its queue entry with the newest last, plans right and leaves no outbox row behind, through kills", async () => {
    const run = spawn(process.execPath, [join(checkoutRoot, "deploy/cluster/run.mjs"), "--short"], { cwd: checkoutRoot, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    run.stdout.on("data", (chunk) => (output += chunk));
    run.stderr.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => run.once("exit", (c, signal) => resolve(c ?? signal)));
    if (code !== 0) throw new Error(`deploy/cluster/run.mjs --short exited ${code}:\n${output.slice(-4000)}`);
    expect(output).toMatch(/everything held/);
  }, 200_000);
});
