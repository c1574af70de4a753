// Issue 50: the command line's import of a large file ends in the state the same lines give when
// sent in batches. A products file of --lines N (default 100,000) is imported by `analytics import`
// (libs/sdk's bin, built first) into one account, and the same lines are POSTed to
// /v2/api/products/batch 1000 at a time into another; then both accounts' products are read
// page by page and compared (ids and timestamps aside). Prints each side's lines a second and
// whether the states are equal; exits 1 when they differ.
// Usage: node bench/sdk-import.mjs [--lines N] [--start path/to/dist/local/start.js]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, arg, startPlatform } from "./platform.mjs";

const LINES = Number(arg("--lines", 100_000));
const product = (i) => ({ key: `SKU-${i}`, sku: `SKU-${i}`, productName: `Product ${Math.floor(i / 10)}`, season: "SS27", color: ["black", "white", "red"][i % 3], size: ["S", "M", "L", "XL"][i % 4] });

execFileSync(process.execPath, ["libs/sdk/scripts/build.mjs", "--no-types"], { stdio: "inherit" });
const dir = mkdtempSync(join(tmpdir(), "sdk-import-bench-"));
const file = join(dir, "products.ndjson");
writeFileSync(file, Array.from({ length: LINES }, (_, i) => JSON.stringify(product(i))).join("\n") + "\n");

const platform = await startPlatform({ start: arg("--start", "dist/local/start.js") });
try {
  /** An account with its API key (the CLI signs in with it), its rate limit out of the way. */
  const account = async (name) => {
    const created = (await platform.call("POST", "/admin/v1/accounts", { name }, ADMIN)).body;
    await platform.call("PUT", `/admin/v1/accounts/${created.accountID}/settings`, { rateLimitPerSecond: 1_000_000, rateLimitBurst: 100_000_000 }, ADMIN);
    const token = (await platform.call("POST", "/v2/api/auth", { accountID: created.accountID, apiKey: created.apiKey })).body.accessToken;
    return { ...created, token };
  };
  const cliAccount = await account("CLI");
  const batchAccount = await account("Batch");

  let t = performance.now();
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ["libs/sdk/dist/cjs/cli.cjs", "import", "products", file, "--progress"], {
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, ANALYTICS_BASE_URL: platform.base, ANALYTICS_ACCOUNT_ID: cliAccount.accountID, ANALYTICS_API_KEY: cliAccount.apiKey },
    });
    child.on("exit", resolve);
  });
  const cliMs = performance.now() - t;
  if (code !== 0) throw new Error(`analytics import exited ${code}`);

  t = performance.now();
  for (let at = 0; at < LINES; at += 1000) {
    const items = Array.from({ length: Math.min(1000, LINES - at) }, (_, i) => product(at + i));
    const res = await platform.call("POST", "/v2/api/products/batch", items, batchAccount.token);
    if (res.status >= 300) throw new Error(`batch at ${at}: ${res.status}`);
  }
  const batchMs = performance.now() - t;

  /** Products as a client reads them, without what differs between accounts. */
  const stateOf = async (token) => {
    const all = [];
    for (let page = 1; ; page++) {
      const got = (await platform.call("GET", `/v2/api/products?page=${page}&pageSize=1000`, undefined, token)).body;
      if (!got.length) break;
      all.push(...got.map(({ id: _i, uuid: _u, createdAt: _c, updatedAt: _up, ...p }) => JSON.stringify(p)));
    }
    return all.sort();
  };
  const [viaCli, viaBatch] = [await stateOf(cliAccount.token), await stateOf(batchAccount.token)];
  const differing = viaCli.length !== viaBatch.length ? -1 : viaCli.findIndex((p, i) => p !== viaBatch[i]);
  console.log(
    JSON.stringify({
      lines: LINES,
      cliLinesPerSecond: Math.round(LINES / (cliMs / 1000)),
      batchLinesPerSecond: Math.round(LINES / (batchMs / 1000)),
      products: [viaCli.length, viaBatch.length],
      sameState: differing === -1 && viaCli.length === viaBatch.length,
    }),
  );
  if (viaCli.length !== viaBatch.length || differing !== -1) process.exitCode = 1;
} finally {
  await platform.stop();
  rmSync(dir, { recursive: true, force: true });
}
