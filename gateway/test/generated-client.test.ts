import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { servedDocument } from "./document";

/** Type errors of `code` compiled next to the types openapi-typescript generates from the served document. */
function typeErrors(dir: string, name: string, code: string): string[] {
  const file = join(dir, name);
  writeFileSync(file, code);
  const program = ts.createProgram([file], { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}

describe("a client generated from the document (openapi-typescript)", () => {
  it("type-checks a product batch and rejects a wrong body at compile time", async () => {
    const doc = await servedDocument();
    const dir = mkdtempSync(join(tmpdir(), "generated-client-"));
    try {
      writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
      // The generator's own command line, as a user runs it (it is an ES module).
      execFileSync(process.execPath, [join(__dirname, "../../node_modules/openapi-typescript/bin/cli.js"), join(dir, "openapi.json"), "-o", join(dir, "api.ts")], { stdio: "pipe" });
      const header = `import type { operations } from "./api";\ntype Batch = operations["upsertProductsBatch"]["requestBody"]["content"]["application/json"];\n`;
      expect(typeErrors(dir, "good.ts", `${header}export const batch: Batch = [{ key: "SKU-1", sku: "1001-BLK-M", productName: "Merino crew", status: 2, activePlanning: true }];\n`)).toEqual([]);
      const wrong = typeErrors(dir, "wrong.ts", `${header}export const batch: Batch = [{ sku: "1001-BLK-M", productName: 42 }];\n`);
      expect(wrong.join("\n")).toMatch(/key|productName|number/);
      const list = `import type { operations } from "./api";\ntype Page = operations["listProducts"]["responses"][200]["content"]["application/json"];\nexport const name = (p: Page) => p[0].productName;\nexport const q: operations["listProducts"]["parameters"]["query"] = { skus: ["a", "b"], pageSize: 100 };\n`;
      expect(typeErrors(dir, "list.ts", list)).toEqual([]);
      // Fields with a default may be left out (warehouses' name and centralWarehouse, a product's status).
      const defaults = `import type { paths } from "./api";
  type Body = paths["/v2/api/warehouses"]["post"]["requestBody"];
  export const body: NonNullable<Body>["content"]["application/json"] = [{ externalId: "W1" }];
  `;
      expect(typeErrors(dir, "defaults.ts", defaults)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
