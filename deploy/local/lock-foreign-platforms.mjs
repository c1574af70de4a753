// Completes package-lock.json with the other platforms' optional native packages (@swc/core-*,
// @bufbuild/buf-*, ...). The registry this project is built from serves only this platform's, so
// npm leaves them out of the lockfile and `npm ci` then refuses it as out of sync. Each entry is
// written as npm writes them (optional, with its os/cpu), so npm skips them on other platforms.
// Run after `npm install` changes the lockfile: node deploy/local/lock-foreign-platforms.mjs
import { readFileSync, writeFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const packages = lock.packages;
const OS = ["darwin", "linux", "win32", "freebsd", "android", "openbsd", "netbsd", "sunos", "aix", "openharmony", "wasm32"];
const CPU = { arm64: "arm64", aarch64: "arm64", x64: "x64", ia32: "ia32", arm: "arm", armv7: "arm", ppc64: "ppc64", s390x: "s390x", riscv64: "riscv64", loong64: "loong64", mips64el: "mips64el", wasm32: "wasm32" };

function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  const libc = parts.includes("musl") ? "musl" : parts.includes("gnu") || parts.includes("gnueabihf") ? "glibc" : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    // Where npm would place it: top level, unless another version is there already; then beside
    // the package that wants it.
    const top = `node_modules/${dep}`;
    const wanted = String(version).replace(/^[\^~]/, "");
    const nested = `${path.slice(0, path.lastIndexOf("node_modules/"))}node_modules/${dep}`;
    if (packages[`${path}/node_modules/${dep}`] || packages[nested]) continue;
    if (packages[top] && packages[top].version === wanted) continue;
    const at = packages[top] ? nested : top;
    const { os, cpu, libc } = platformOf(dep);
    if (!os && !cpu) continue;
    packages[at] = {
      version: wanted,
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      ...(os ? { os: [os] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
writeFileSync("package-lock.json", JSON.stringify(lock, null, 2) + "\n");
console.log(`added ${added} foreign-platform entries`);
