import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * The package as published (libs/sdk/scripts/build.mjs): every file its package.json points to
 * exists, the ES-module and CommonJS builds export the same names, and the bin runs.
 */
const run = promisify(execFile);
const sdk = join(__dirname, "..");
const manifest = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8"));

describe("the built package", () => {
  const out = mkdtempSync(join(tmpdir(), "sdk-package-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  beforeAll(async () => {
    await run(process.execPath, [join(sdk, "scripts/build.mjs"), "--out", join(out, "dist")]);
  });

  it("has every file its exports, main, module, types and bin name", () => {
    const paths = [manifest.main, manifest.module, manifest.types, ...Object.values(manifest.bin as Record<string, string>)];
    for (const conditions of Object.values(manifest.exports as Record<string, Record<string, string>>)) paths.push(...Object.values(conditions));
    const missing = paths.map((p) => p.replace("*", "products")).filter((p) => !existsSync(join(out, p)));
    expect(missing).toEqual([]);
    expect(manifest.sideEffects).toBe(false);
  });

  it("exports the same names from its ES modules and its CommonJS", async () => {
    const script = `
      const cjs = require(${JSON.stringify(join(out, "dist/cjs/index.cjs"))});
      import(${JSON.stringify(join(out, "dist/esm/index.js"))}).then((esm) => {
        const webhooks = require(${JSON.stringify(join(out, "dist/cjs/webhooks.cjs"))});
        console.log(JSON.stringify({ cjs: Object.keys(cjs).sort(), esm: Object.keys(esm).sort(), webhooks: Object.keys(webhooks).sort() }));
      });`;
    const { stdout } = await run(process.execPath, ["-e", script]);
    const names = JSON.parse(stdout);
    expect(names.esm).toEqual(names.cjs);
    expect(names.cjs).toEqual(expect.arrayContaining(["Analytics", "Client", "Products", "Imports", "ApiError", "eventQueue", "importFile"]));
    expect(names.webhooks).toEqual(["WebhookVerificationError", "verify"]);
  });

  it("runs its bin", async () => {
    const { stdout } = await run(join(out, manifest.bin.analytics), ["--help"]);
    expect(stdout).toMatch(/^Usage: analytics <command>/);
  });
});
