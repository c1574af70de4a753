// Issue 48: idempotency's share of a single-product POST (target <= 3 %). `POST /v2/api/products`
// of one new product, with an Idempotency-Key (the step claims the key before the write and keeps
// the answer after it: two statements on the gateway's database) and without (the step does
// nothing), alternating rounds, 10 requests in flight. Prints both req/s, the gateway's CPU per
// request (with --separate), and the share: 1 - (req/s with a key) / (req/s without).
// Usage: node bench/idempotency-share.mjs [--seconds S] [--rounds N] [--separate]
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { arg, median, requestsPerSecond, startPlatform, startSeparately } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 3));
const ROUNDS = Number(arg("--rounds", 5));
const CONCURRENCY = 10;

const separate = process.argv.includes("--separate");
const platform = separate ? await startSeparately() : await startPlatform();
try {
  const { token } = await platform.signUp("Idempotency");
  let n = 0;
  const post = (withKey) => async () => {
    const i = n++;
    const res = await fetch(`${platform.base}/v2/api/products`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(withKey ? { "idempotency-key": randomUUID() } : {}) },
      body: JSON.stringify({ key: `K-${i}`, sku: `S-${i}`, season: "SS27", productName: `P ${i}` }),
    });
    if (res.status !== 201) throw new Error(`POST /products: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  // The gateway's CPU time so far in ms (utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms).
  const gatewayCpuMs = () => {
    const fields = readFileSync(`/proc/${platform.child.pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };
  const round = async (request) => {
    const before = separate ? gatewayCpuMs() : 0;
    const rps = await requestsPerSecond(request, CONCURRENCY, SECONDS);
    return { rps, cpuMs: separate ? (gatewayCpuMs() - before) / (rps * SECONDS) : undefined };
  };
  const sides = { without: { request: post(false), rps: [], cpu: [] }, with: { request: post(true), rps: [], cpu: [] } };
  for (const side of Object.values(sides)) await round(side.request);
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of r % 2 ? [sides.with, sides.without] : [sides.without, sides.with]) {
      const { rps, cpuMs } = await round(side.request);
      side.rps.push(rps);
      side.cpu.push(cpuMs);
    }
  }
  const result = Object.fromEntries(
    Object.entries(sides).map(([name, s]) => [name, { rps: Math.round(median(s.rps)), gatewayCpuMsPerRequest: separate ? +median(s.cpu).toFixed(3) : undefined }]),
  );
  const share = 1 - median(sides.with.rps) / median(sides.without.rps);
  console.log(`POST /products (one product): without a key ${result.without.rps} req/s, with ${result.with.rps} req/s -> idempotency ${(share * 100).toFixed(1)} % of the request (target <= 3 %)`);
  if (separate) console.log(`gateway CPU per request: without ${result.without.gatewayCpuMsPerRequest} ms, with ${result.with.gatewayCpuMsPerRequest} ms`);
  console.log(JSON.stringify({ idempotencyShare: { ...result, share: +share.toFixed(3), target: 0.03 } }));
} finally {
  await platform.stop();
}
