#!/usr/bin/env node
// Writes libs/sdk/src/generated/ from the OpenAPI document the gateway serves, built in-process
// (gateway/src/routes.ts apiDocument: no database, service or network). Run from the repository's
// root: `node libs/sdk/scripts/generate.mjs`; `--check` writes nothing and fails when a file differs;
// `--out DIR` writes into DIR instead (test/generated.test.ts); `--operation-ids` prints the
// document's operation ids as JSON; `--document FILE` reads the document from FILE (one a gateway
// served) instead of building it.
import { build } from "esbuild";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const entry = 'export { apiDocument } from "./gateway/src/routes"; export { generate, GENERATED_DIR } from "./libs/sdk/scripts/codegen";';
const { outputFiles } = await build({
  stdin: { contents: entry, resolveDir: root, loader: "ts", sourcefile: "generate-entry.ts" },
  bundle: true,
  platform: "node",
  format: "cjs",
  packages: "external",
  tsconfig: join(root, "tsconfig.base.json"),
  write: false,
  logLevel: "warning",
});
// Compiled in memory, resolving its packages from the repository's node_modules.
const filename = join(root, "libs/sdk/scripts/generate-entry.cjs");
const bundle = new Module(filename);
bundle.filename = filename;
bundle.paths = Module._nodeModulePaths(root);
bundle._compile(outputFiles[0].text, filename);
const { apiDocument, generate, GENERATED_DIR } = bundle.exports;

const documentFile = process.argv.includes("--document") ? process.argv[process.argv.indexOf("--document") + 1] : undefined;
const document = documentFile ? JSON.parse(readFileSync(documentFile, "utf8")) : apiDocument();
const out = process.argv.includes("--out") ? resolve(process.argv[process.argv.indexOf("--out") + 1]) : undefined;
const files = Object.fromEntries(Object.entries(generate(document)).map(([path, text]) => [out ? join(out, path.slice(GENERATED_DIR.length + 1)) : join(root, path), text]));
const dir = out ?? join(root, GENERATED_DIR);
mkdirSync(dir, { recursive: true });
const existing = readdirSync(dir, { withFileTypes: true }).filter((f) => f.isFile()).map((f) => join(dir, f.name));
const stale = existing.filter((path) => !(path in files));
const differing = Object.entries(files).filter(([path, text]) => {
  try {
    return readFileSync(path, "utf8") !== text;
  } catch {
    return true;
  }
});
if (process.argv.includes("--check")) {
  for (const [path] of differing) console.error(`differs from the document: ${path}`);
  for (const path of stale) console.error(`not generated from the document: ${path}`);
  if (differing.length || stale.length) {
    console.error("run: node libs/sdk/scripts/generate.mjs");
    process.exit(1);
  }
  console.log(`${Object.keys(files).length} generated files match the document`);
} else {
  for (const path of stale) rmSync(path);
  for (const [path, text] of differing) writeFileSync(path, text);
  console.error(`wrote ${differing.length} of ${Object.keys(files).length} files, removed ${stale.length}`);
}
if (process.argv.includes("--operation-ids")) {
  const ids = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((op) => (op?.operationId ? [op.operationId] : [])));
  console.log(JSON.stringify(ids));
}
// The gateway's modules leave nothing running, but its clients' sockets would be waited for.
process.exit(0);
