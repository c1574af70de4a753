// The share of a process's busy time spent under given functions, from a V8 CPU profile
// (`--cpu-prof`, e.g. BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" with a
// --separate bench). A sample counts for a group when any frame of its stack has a function
// name the group's pattern matches (inclusive time); idle samples are not busy time.
// Usage: node bench/cpu-profile-shares.mjs FILE.cpuprofile NAME=REGEX [NAME=REGEX ...]
//   e.g. "rate limit=^(spendOrRefuse|spend|lease)$"
import { readFileSync } from "node:fs";

const [file, ...specs] = process.argv.slice(2);
const groups = specs.map((spec) => {
  const at = spec.indexOf("=");
  return { name: spec.slice(0, at), pattern: new RegExp(spec.slice(at + 1)), ms: 0 };
});
const profile = JSON.parse(readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
// Which groups each node's stack falls under, computed once per node.
const groupsOf = new Map();
const stackGroups = (id) => {
  if (groupsOf.has(id)) return groupsOf.get(id);
  const parent = parentOf.get(id);
  const inherited = parent === undefined ? new Set() : stackGroups(parent);
  const own = new Set(inherited);
  groups.forEach((g, i) => g.pattern.test(byId.get(id).callFrame.functionName) && own.add(i));
  groupsOf.set(id, own);
  return own;
};
let busyMs = 0;
profile.samples.forEach((id, i) => {
  const ms = (profile.timeDeltas[i] ?? 0) / 1000;
  if (byId.get(id).callFrame.functionName === "(idle)") return;
  busyMs += ms;
  for (const g of stackGroups(id)) groups[g].ms += ms;
});
console.log(`busy ${(busyMs / 1000).toFixed(1)} s`);
for (const g of groups) console.log(`${g.name}: ${g.ms.toFixed(0)} ms, ${((100 * g.ms) / busyMs).toFixed(2)} % of busy time`);
