#!/usr/bin/env node
// Builds the publishable package into libs/sdk/dist: ES modules (dist/esm, one file per module,
// shared code in chunks), CommonJS (dist/cjs, one .cjs per module) and, unless --no-types, the
// declarations (dist/types). Run from anywhere: `node libs/sdk/scripts/build.mjs [--out DIR]`.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(sdk, "src");
const dist = process.argv.includes("--out") ? resolve(process.argv[process.argv.indexOf("--out") + 1]) : join(sdk, "dist");
const entryPoints = readdirSync(src, { recursive: true })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(src, f));
rmSync(dist, { recursive: true, force: true });
const common = { entryPoints, outbase: src, platform: "node", target: "node20", logLevel: "warning" };
await build({ ...common, outdir: join(dist, "esm"), format: "esm", bundle: true, splitting: true, packages: "external" });
// CommonJS one file per module: its relative requires name the .cjs files.
const { outputFiles } = await build({ ...common, outdir: join(dist, "cjs"), format: "cjs", outExtension: { ".js": ".cjs" }, write: false });
for (const file of outputFiles) {
  const text = file.text.replace(/require\("(\.{1,2}\/[^"]+)"\)/g, (_m, path) => `require("${path}.cjs")`);
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, text);
}
// Each build says its module kind itself, wherever it is copied.
writeFileSync(join(dist, "cjs/package.json"), '{ "type": "commonjs" }\n');
writeFileSync(join(dist, "esm/package.json"), '{ "type": "module" }\n');
if (!process.argv.includes("--no-types")) {
  const tsc = join(sdk, "../../node_modules/typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(sdk, "tsconfig.build.json"), "--outDir", join(dist, "types")], { stdio: "inherit" });
}
// The bin is executable.
const cli = join(dist, "cjs/cli.cjs");
writeFileSync(cli, "#!/usr/bin/env node\n" + readFileSync(cli, "utf8"));
chmodSync(cli, 0o755);
console.log(`built ${relative(process.cwd(), dist)}: ${entryPoints.length} modules`);
