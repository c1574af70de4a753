// The figures behind the chart's resource requests and limits (deploy/helm/analytics/values.yaml):
// each deployable in a process of its own (startSeparately, as on Kubernetes), its resident memory
// and CPU read from /proc, first idle, then while clients write products and stock and read pages
// through the gateway. Prints one line per process: RSS idle / under load / peak, CPU idle / under load.
//
//   node bench/footprint.mjs [--seconds 30] [--clients 8]      (npm run build first)
import { readFileSync } from "node:fs";
import { arg, startSeparately } from "./platform.mjs";

const SECONDS = Number(arg("--seconds", 30));
const CLIENTS = Number(arg("--clients", 8));
const TICKS = 100; // USER_HZ on Linux
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resident and peak resident memory (MiB), and CPU seconds so far, of one process. */
function reading(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)[1]);
  // utime and stime are fields 14 and 15; the name (field 2) may hold spaces, so count after its ")".
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const [utime, stime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(11, 13).map(Number);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024, cpu: (utime + stime) / TICKS };
}

/** Each process's CPU (millicores) over `ms`, and its memory at the end. */
async function window(processes, ms, during = sleep) {
  const before = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, reading(c.pid)]));
  const t = performance.now();
  await during(ms);
  const seconds = (performance.now() - t) / 1000;
  return Object.fromEntries(
    Object.entries(processes).map(([n, c]) => {
      const now = reading(c.pid);
      return [n, { ...now, millicores: Math.round(((now.cpu - before[n].cpu) / seconds) * 1000) }];
    }),
  );
}

const platform = await startSeparately({ env: { NODE_ENV: "production" } });
try {
  let limited = 0;
  /** The answer's body; a 429 (the account's rate limit) waits its Retry-After, anything else but a 2xx stops the bench. */
  const call = async (token, method, path, body) => {
    for (;;) {
      const res = await platform.call(method, path, body, token);
      if (res.status === 429) {
        limited++;
        await sleep(Number(res.headers.get("retry-after") ?? 1) * 1000);
        continue;
      }
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      return res.body;
    }
  };
  const products = Array.from({ length: 1000 }, (_, i) => ({ key: `SKU-${i}`, sku: `S${i}`, ean: String(7300000000000 + i) }));
  // An account per client: the per-account rate limit holds each one, not the platform.
  const tokens = [];
  for (let c = 0; c < CLIENTS; c++) {
    const { token } = await platform.signUp(`Footprint bench ${c}`);
    await call(token, "POST", "/v2/api/products/batch", products);
    await call(token, "POST", "/v2/api/warehouses", Array.from({ length: 4 }, (_, w) => ({ externalId: `W${w}`, name: `Warehouse ${w}` })));
    tokens.push(token);
  }
  await sleep(5_000); // start-up and the first writes settle
  const idle = await window(platform.processes, 10_000);

  let requests = 0;
  const load = async (ms) => {
    const until = Date.now() + ms;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let round = 0; Date.now() < until; round++) {
          const kind = (c + round) % 4;
          if (kind === 0) await call(tokens[c], "POST", "/v2/api/products/batch", products.slice(0, 200).map((p) => ({ ...p, name: `P ${c}-${round}` })));
          else if (kind === 1) {
            const date = new Date(Date.UTC(2026, 0, 1, 0, c, round)).toISOString();
            await call(tokens[c], "POST", "/v2/api/warehouses/stock", products.slice(0, 500).map((p, i) => ({ key: p.key, availableQuantity: i + round, physicalQuantity: i + round + 1, date, externalWarehouseID: `W${c % 4}` })));
          } else await call(tokens[c], "GET", `/v2/api/products?page=${1 + (round % 10)}&pageSize=100`);
          requests++;
        }
      }),
    );
  };
  const busy = await window(platform.processes, SECONDS * 1000, load);
  console.log(`${CLIENTS} clients for ${SECONDS} s: ${requests} requests (${(requests / SECONDS).toFixed(0)}/s), ${limited} answered 429 and retried`);
  console.log("process     RSS idle  RSS load  RSS peak  CPU idle  CPU load");
  for (const name of Object.keys(platform.processes)) {
    const i = idle[name];
    const b = busy[name];
    console.log(`${name.padEnd(10)} ${i.rss.toFixed(0).padStart(5)} MiB ${b.rss.toFixed(0).padStart(5)} MiB ${b.peak.toFixed(0).padStart(5)} MiB ${String(i.millicores).padStart(6)} m ${String(b.millicores).padStart(7)} m`);
  }
} finally {
  await platform.stop();
}
