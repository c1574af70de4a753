// Bundles each deployable (gateway, every service, the single-process launcher) into dist/ with
// esbuild: one file each, node_modules left external, tsconfig path aliases resolved.
// `node deploy/local/build.mjs [name ...]` builds only the named ones.
import { build } from "esbuild";
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const services = readdirSync("services").filter((name) => existsSync(`services/${name}/src/main.ts`));
const entries = {
  gateway: { in: "gateway/src/main.ts", out: "gateway/main" },
  local: { in: "deploy/local/start.ts", out: "local/start" },
  ...Object.fromEntries(services.map((name) => [name, { in: `services/${name}/src/main.ts`, out: `services/${name}/main` }])),
};
const wanted = process.argv.slice(2);
const selected = Object.entries(entries).filter(([name]) => !wanted.length || wanted.includes(name));

const started = Date.now();
const { outputFiles } = await build({
  entryPoints: selected.map(([, e]) => e),
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
  tsconfig: "tsconfig.base.json",
  write: false,
});
// Each file written whole under a temporary name, then renamed over the old one: a process starting
// from dist/ meanwhile (two test files building at once) reads the old file or the new, never half.
for (const file of outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  const partial = `${file.path}.${process.pid}.partial`;
  writeFileSync(partial, file.contents);
  renameSync(partial, file.path);
}
console.log(`built ${selected.map(([n]) => n).join(", ")} in ${Date.now() - started} ms`);
