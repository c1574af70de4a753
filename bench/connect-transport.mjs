// Issue 29 item 5: does the gateway's own Connect client (libs/rpc/src/transport.ts) still beat
// connect-node's transport? The services run in processes of their own (on the test JetStream);
// this process only calls them, so its CPU time per call is the client's cost. Both clients make
// the same calls with 10 in flight, in alternating rounds; reported: the client's CPU per call
// (median of rounds) and calls per second.
// Usage: node bench/connect-transport.mjs [--seconds S] [--rounds N]   (after npm run build)
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";
import { arg, median, startSeparately } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 3));
const ROUNDS = Number(arg("--rounds", 5));
const CONCURRENCY = 10;

const out = join(process.cwd(), "dist/bench/transport-clients.cjs");
await build({ entryPoints: ["bench/transport-clients.ts"], outfile: out, bundle: true, platform: "node", format: "cjs", packages: "external", tsconfig: "tsconfig.base.json", logLevel: "warning" });
const { clientPairs } = createRequire(import.meta.url)(out);

const platform = await startSeparately();
try {
  const account = await platform.signUp("Transport");
  await platform.call("POST", "/v2/api/products/batch", Array.from({ length: 100 }, (_, i) => ({ key: `K-${i}`, sku: `S-${i}`, productName: `P ${i}` })), account.token);
  const pairs = clientPairs(platform.services, platform.internalToken, { accountId: account.accountId, apiKeyId: account.apiKeyId });

  /** Calls per second and this process's CPU microseconds per call, CONCURRENCY in flight for SECONDS. */
  async function measure(call) {
    const end = performance.now() + SECONDS * 1000;
    const cpu = process.cpuUsage();
    let done = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < end) {
          await call();
          done++;
        }
      }),
    );
    const { user, system } = process.cpuUsage(cpu);
    return { rps: done / SECONDS, cpuUsPerCall: (user + system) / done };
  }

  const cases = [
    { label: "ListEvents (unary, GET /events?pageSize=10)", ours: () => pairs.ours.eventsPage(), connectNode: () => pairs.connectNode.eventsPage() },
    { label: "StreamProductsJson (streaming, GET /products?key=K)", ours: () => pairs.ours.productByKey("K-50"), connectNode: () => pairs.connectNode.productByKey("K-50") },
  ];
  const results = [];
  for (const c of cases) {
    await measure(c.ours);
    await measure(c.connectNode);
    const ours = [];
    const theirs = [];
    for (let r = 0; r < ROUNDS; r++) {
      ours.push(await measure(c.ours));
      theirs.push(await measure(c.connectNode));
    }
    const summary = (xs) => ({ cpuUsPerCall: Math.round(median(xs.map((x) => x.cpuUsPerCall))), rps: Math.round(median(xs.map((x) => x.rps))) });
    const result = { label: c.label, ours: summary(ours), connectNode: summary(theirs) };
    result.cpuRatio = +(result.ours.cpuUsPerCall / result.connectNode.cpuUsPerCall).toFixed(2);
    results.push(result);
    console.log(`${c.label}: ours ${result.ours.cpuUsPerCall} µs CPU/call (${result.ours.rps}/s), connect-node ${result.connectNode.cpuUsPerCall} µs CPU/call (${result.connectNode.rps}/s) -> ours/connect-node ${result.cpuRatio}`);
  }
  console.log(JSON.stringify({ transport: results }));
} finally {
  await platform.stop();
}
