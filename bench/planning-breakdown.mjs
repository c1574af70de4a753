// Bundles bench/planning-breakdown.ts (tsconfig aliases resolved, node_modules external) and runs
// it: `node bench/planning-breakdown.mjs [seed-only]`. Needs the local Postgres
// (TEST_DATABASE_URL); makes its own database.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";

await build({
  entryPoints: ["bench/planning-breakdown.ts"],
  outfile: "dist/bench/planning-breakdown.js",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  packages: "external",
  logLevel: "warning",
  tsconfig: "tsconfig.base.json",
});
const run = spawnSync(process.execPath, ["--expose-gc", "dist/bench/planning-breakdown.js", ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(run.status ?? 1);
