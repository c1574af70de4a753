// Fails when the generated contracts library is not what buf generates from proto/ today:
// generates into a temporary folder with proto/buf.gen.yaml (its `out` redirected) and compares.
import { execSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, statSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { tmpdir } from "node:os";

const committed = "libs/contracts/src/gen";
const tmp = mkdtempSync(join(tmpdir(), "gen-"));
const out = join(tmp, "gen");
const template = readFileSync("proto/buf.gen.yaml", "utf8").replace("../libs/contracts/src/gen", out);
writeFileSync(join(tmp, "buf.gen.yaml"), template);
execSync("npx buf lint", { cwd: "proto", stdio: "inherit" });
execSync(`npx buf generate --template ${join(tmp, "buf.gen.yaml")}`, { cwd: "proto", stdio: "inherit" });

const files = (dir) =>
  readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
const a = new Map(files(committed).map((f) => [relative(committed, f), readFileSync(f, "utf8")]));
const b = new Map(files(out).map((f) => [relative(out, f), readFileSync(f, "utf8")]));
rmSync(tmp, { recursive: true, force: true });
const stale = [...new Set([...a.keys(), ...b.keys()])].filter((f) => a.get(f) !== b.get(f));
if (stale.length) {
  console.error(`generated code is stale (run \`npm run gen\`): ${stale.join(", ")}`);
  process.exit(1);
}
console.log(`generated code is current (${a.size} files)`);

// Wire compatibility: the protos may only change in ways that old readers and writers survive
// (buf's FILE rules) compared with the last commit of main. A checkout without git, or without
// a main branch, has nothing to compare with.
let gitDir;
try {
  gitDir = execSync("git rev-parse --path-format=absolute --git-common-dir", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  execSync("git rev-parse --verify --quiet refs/heads/main", { stdio: "ignore" });
} catch {
  gitDir = undefined;
}
if (gitDir) {
  execSync(`npx buf breaking --against '${gitDir}#branch=main,subdir=proto'`, { cwd: "proto", stdio: "inherit" });
  console.log("protos are wire-compatible with main");
} else {
  console.log("no main branch to compare the protos with: buf breaking skipped");
}
