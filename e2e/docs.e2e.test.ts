import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { configSchema } from "@analytics/config";
import { ERROR_CODES } from "@analytics/errors";
import { eventually } from "@analytics/testing";
import { checkoutRoot as root, client, platformForFile } from "./harness";

/**
 * The documentation keeps working: README.md, docs/ and the chart's README. Every relative link
 * and anchor resolves, every repository path named in backticks exists, every `npm run` script and
 * `node` command named is there, and the README's curl walk runs against the platform on the test
 * services. The README's first command (`npm ci && npm start` in a fresh clone) is run by
 * e2e/embedded.e2e.test.ts, not here.
 */

const docs = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`), "deploy/helm/analytics/README.md"];
const read = (file: string) => readFileSync(join(root, file), "utf8");

/** The text outside fenced code blocks (``` ... ```), line numbers kept. */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : line;
    })
    .join("\n");
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, text] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = text
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Every `[text](target)` of a file outside code, but for absolute URLs. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** What is wrong with a link from `file`, or undefined. */
function brokenLink(file: string, target: string): string | undefined {
  const [path, anchor] = target.split("#", 2);
  const resolved = path ? join(dirname(file), decodeURIComponent(path)) : file;
  if (!existsSync(join(root, resolved))) return `${file}: link to ${target}: no file ${resolved}`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith(".md")) return `${file}: link to ${target}: an anchor into a file that is not markdown`;
  if (!anchorsOf(read(resolved)).has(anchor)) return `${file}: link to ${target}: ${resolved} has no heading #${anchor}`;
  return undefined;
}

const REPO_DIRS = /^(?:\.\/)?((?:\.ci|bench|deploy|docs|e2e|eslint-rules|gateway|libs|proto|services)(?:\/[\w.@-]+)*\/?)$/;

function ignoredByGit(path: string): boolean {
  return spawnSync("git", ["check-ignore", "-q", "--no-index", path], { cwd: root }).status === 0;
}

/** Inline code of a file that names a repository path (`libs/outbox`, `bench/po-batch.mjs`) which does not exist; bare file names are not taken for paths. */
function missingPaths(file: string): string[] {
  const missing: string[] = [];
  for (const [, code] of prose(read(file)).matchAll(/`([^`\n]+)`/g)) {
    const path = REPO_DIRS.exec(code)?.[1];
    if (!path) continue;
    // Relative to the root or, as in the chart's README, to the file's own directory; generated files are listed in .gitignore.
    if (existsSync(join(root, path)) || existsSync(join(root, dirname(file), path)) || ignoredByGit(path)) continue;
    missing.push(`${file}: \`${code}\` does not exist`);
  }
  return missing;
}

/** Links and inline-code paths of a file that lead out of the repository (`../shared/x.md`): a clone has nothing there. */
function outsidePaths(file: string): string[] {
  const text = prose(read(file));
  const targets = [...relativeLinks(read(file)).map((t) => t.split("#")[0]), ...[...text.matchAll(/`(\.\.\/[^`\s]*)`/g)].map((m) => m[1])];
  return targets.filter((t) => t && join(dirname(file), decodeURIComponent(t)).startsWith("..")).map((t) => `${file}: ${t} is outside the repository`);
}

/** Where `npm run build` writes each deployable from (deploy/local/build.mjs). */
function sourceOfBundle(path: string): string | undefined {
  if (path === "dist/gateway/main.js") return "gateway/src/main.ts";
  if (path === "dist/local/start.js") return "deploy/local/start.ts";
  const service = /^dist\/services\/([\w-]+)\/main\.js$/.exec(path)?.[1];
  return service ? `services/${service}/src/main.ts` : undefined;
}

/** `npm run x`, `npm start`/`npm test` and `node path` commands anywhere in a file (code blocks included) that would not run. */
function brokenCommands(file: string): string[] {
  const scripts: Record<string, string> = JSON.parse(read("package.json")).scripts;
  const text = read(file);
  const broken: string[] = [];
  for (const [command, run, builtIn] of text.matchAll(/\bnpm (?:run ([\w-]+(?::[\w-]+)*)|(start|test)\b)/g)) {
    const script = run ?? builtIn;
    if (!scripts[script]) broken.push(`${file}: \`${command}\`: package.json has no script "${script}"`);
  }
  for (const [command, path] of text.matchAll(/\bnode ((?:\.\/)?[\w./<>-]+\.(?:mjs|cjs|js|ts))\b/g)) {
    if (path.includes("<")) continue;
    const source = path.startsWith("dist/") ? sourceOfBundle(path) : path;
    if (!source || !existsSync(join(root, source))) broken.push(`${file}: \`${command}\`: no ${source ?? `bundle ${path} in deploy/local/build.mjs`}`);
  }
  return broken;
}

describe("documentation", () => {
  it("covers the docs/ pages and links each from the README", () => {
    const readmeLinks = new Set(relativeLinks(read("README.md")).map((t) => t.split("#")[0]));
    expect(docs.filter((f) => f.startsWith("docs/") && !readmeLinks.has(f))).toEqual([]);
  });

  it("has no relative link to a missing file or heading", () => {
    const broken = docs.flatMap((file) => relativeLinks(read(file)).map((target) => brokenLink(file, target))).filter(Boolean);
    expect(broken).toEqual([]);
  });

  it("names only repository paths that exist", () => {
    expect(docs.flatMap(missingPaths)).toEqual([]);
  });

  it("names no path outside the repository", () => {
    expect(docs.flatMap(outsidePaths)).toEqual([]);
  });

  it("names test files only in the pages about testing and measurements", () => {
    const aboutTests = new Set(["docs/testing.md", "docs/benchmarks.md", "docs/cluster.md"]);
    const named = docs
      .filter((file) => !aboutTests.has(file))
      .flatMap((file) => [...prose(read(file)).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]).filter((code) => /\.test\.ts\b|^e2e\//.test(code)).map((code) => `${file}: \`${code}\``));
    expect(named).toEqual([]);
  });

  it("names only npm scripts and node commands that exist", () => {
    expect(docs.flatMap(brokenCommands)).toEqual([]);
  });

  it("lists every variable of libs/config in the README's configuration table, and no other", () => {
    const table = /^## Configuration\n([\s\S]*?)(?=^## )/m.exec(read("README.md"))?.[1] ?? "";
    const documented = new Set(table.split("\n").flatMap((row) => [...(row.split("|")[1] ?? "").matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])));
    const variables = Object.keys(configSchema.shape);
    expect({ undocumented: variables.filter((v) => !documented.has(v)), unknown: [...documented].filter((v) => !variables.includes(v)) }).toEqual({ undocumented: [], unknown: [] });
  });

  it("lists every error code of libs/errors with its status in the gateway page's table, and no other", () => {
    const table = /^## Error codes\n([\s\S]*?)(?=^## )/m.exec(read("docs/gateway.md"))?.[1] ?? "";
    const rows = table.split("\n").flatMap((row) => [.../^\| (\d{3}) \| `([a-z_]+)` \|/.exec(row) ?? []].slice(1, 3));
    const documented = Object.fromEntries(Array.from({ length: rows.length / 2 }, (_, i) => [rows[2 * i + 1], Number(rows[2 * i])]));
    expect(documented).toEqual(Object.fromEntries(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status])));
  });

  it("finds headings as GitHub anchors them", () => {
    expect([...anchorsOf("# Running as root\n## `update_sku` entries\n## Calls spread over a service's replicas\n## A\n## A\n```sh\n# not a heading\n```")]).toEqual([
      "running-as-root",
      "update_sku-entries",
      "calls-spread-over-a-services-replicas",
      "a",
      "a-1",
    ]);
  });
});

/** The README's "Try it with curl" part: the start command's admin token, and the calls as one bash script. */
function curlWalk(): { adminToken: string; script: string; calls: number } {
  const readme = read("README.md");
  const part = /^## Try it with curl\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!part) throw new Error('README.md has no "## Try it with curl" part');
  const blocks = [...part.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1].trim());
  const start = /^ADMIN_TOKEN=(\S+) npm start$/.exec(blocks[0] ?? "");
  if (!start) throw new Error(`the walk's first block is not "ADMIN_TOKEN=... npm start": ${blocks[0]}`);
  const script = blocks.slice(1).join("\n");
  if (!/^BASE=http:\/\/localhost:8080$/m.test(script)) throw new Error("the walk does not set BASE=http://localhost:8080");
  return { adminToken: start[1], script, calls: script.match(/^\s*(?:\w+=\$\()?curl /gm)?.length ?? 0 };
}

describe("the README's curl walk", () => {
  const walk = curlWalk();
  const platform = platformForFile({ ADMIN_TOKEN: walk.adminToken });
  const dir = mkdtempSync(join(tmpdir(), "readme-walk-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs as written against the platform, every call answered 2xx, and puts the product on the queue", async () => {
    expect(walk.calls).toBeGreaterThanOrEqual(7);
    // Every curl fails the script on an HTTP error (--fail-with-body) and counts itself; the walk's
    // own BASE is the platform's address.
    const script = [
      "set -euo pipefail",
      "shopt -s inherit_errexit",
      'curl() { command curl --fail-with-body -sS "$@" && echo >> "$CALLS"; }',
      walk.script.replace(/^BASE=.*$/m, `BASE=${platform.baseUrl}`),
      'printf "\\nWALK_TOKEN=%s\\n" "$TOKEN"',
    ].join("\n");
    const run = spawnSync("bash", ["-c", script], {
      cwd: dir,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, CALLS: join(dir, "calls"), PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect({ status: run.status, output: run.status === 0 ? "" : output }).toEqual({ status: 0, output: "" });
    expect(readFileSync(join(dir, "calls"), "utf8").length).toBe(walk.calls);
    expect(run.stdout).toContain('"productName":"Merino crew"');
    expect(run.stdout).toContain("HTTP/1.1 200 OK");

    const token = /^WALK_TOKEN=(.+)$/m.exec(run.stdout)![1];
    const api = client(platform.baseUrl, token);
    const entry = await eventually(async () => {
      const events = await api<{ eventType: string; payload: { key?: string } }[]>("GET", "/v2/api/events?page=1&pageSize=10&status=pending");
      return events.body.find((e) => e.eventType === "update_sku" && e.payload.key === "SKU-1");
    }, 10_000, "the walk's update_sku entry");
    expect(entry).toBeDefined();
  });
});
