import { build, stop } from "esbuild";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/**
 * Size budgets (issue 50): what an application ships when it imports the core, or the core with one
 * resource and the import helper, minified and gzipped. Bundled for the browser: the core needs no
 * Node module (webhooks.verify, which needs node:crypto, is its own entry point).
 */
const root = join(__dirname, "../../..");
const gzippedSize = async (contents: string) => {
  const { outputFiles } = await build({
    stdin: { contents, resolveDir: root, loader: "ts" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return gzipSync(outputFiles[0].contents, { level: 9 }).length;
};

describe("size budgets", () => {
  afterAll(() => stop());

  it("the core (client, errors, paging) is at most 10 kB minified and gzipped", async () => {
    const size = await gzippedSize(`export { Client } from "./libs/sdk/src/core/client"; export * from "./libs/sdk/src/core/errors";`);
    expect(size).toBeLessThanOrEqual(10 * 1024);
  });

  it("the core with one resource and its import is at most 15 kB", async () => {
    const size = await gzippedSize(
      `export { Client } from "./libs/sdk/src/core/client"; export { Products } from "./libs/sdk/src/generated/products"; export { importFile, importResults } from "./libs/sdk/src/core/imports";`,
    );
    expect(size).toBeLessThanOrEqual(15 * 1024);
  });

  it("the client with every resource stays small too (no budget in the issue: a guard against a runaway generator)", async () => {
    const size = await gzippedSize(`export * from "./libs/sdk/src/index";`);
    expect(size).toBeLessThanOrEqual(20 * 1024);
  });
});
