// Bundles bench/planning.ts (tsconfig aliases resolved, node_modules external) and runs it:
// `node bench/planning.mjs [volumes] [lag] [rebuild]` (all three by default). Needs the local
// Postgres and NATS (TEST_DATABASE_URL / TEST_NATS_URL); makes its own databases and streams.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";

await build({
  entryPoints: ["bench/planning.ts"],
  outfile: "dist/bench/planning.js",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  packages: "external",
  logLevel: "warning",
  tsconfig: "tsconfig.base.json",
});
const run = spawnSync(process.execPath, ["dist/bench/planning.js", ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(run.status ?? 1);
