import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Analytics } from "../src";
import { OPERATIONS, RESOURCES } from "../src/generated/operations";

/**
 * The SDK agrees with the document the gateway serves: generating it again from the document
 * (built in-process, offline) gives the committed files byte for byte, twice, and every operation
 * of the document is a method. When this fails: `node libs/sdk/scripts/generate.mjs`.
 */
const root = join(__dirname, "../../..");
const committed = join(root, "libs/sdk/src/generated");
const run = promisify(execFile);
const generateInto = async (dir: string) => {
  const { stdout } = await run(process.execPath, ["libs/sdk/scripts/generate.mjs", "--out", dir, "--operation-ids"], { cwd: root });
  return JSON.parse(stdout) as string[];
};
const filesOf = (dir: string) => Object.fromEntries(readdirSync(dir).sort().map((name) => [name, readFileSync(join(dir, name), "utf8")]));

describe("the generated SDK", () => {
  const scratch = mkdtempSync(join(tmpdir(), "sdk-generated-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let operationIds: string[];
  let first: Record<string, string>;

  beforeAll(async () => {
    operationIds = await generateInto(join(scratch, "a"));
    first = filesOf(join(scratch, "a"));
  });

  it("is the committed code, byte for byte", () => {
    const mine = filesOf(committed);
    expect(Object.keys(mine)).toEqual(Object.keys(first));
    for (const name of Object.keys(first)) expect(`${name}:\n${mine[name]}`).toBe(`${name}:\n${first[name]}`);
  });

  it("is the same bytes when generated again", async () => {
    await generateInto(join(scratch, "b"));
    expect(filesOf(join(scratch, "b"))).toEqual(first);
  });

  it("has a method for every operation of the document, and no other", () => {
    const api = new Analytics({ baseUrl: "http://127.0.0.1:1" }) as unknown as Record<string, object>;
    const methods = Object.keys(RESOURCES).flatMap((resource) =>
      Object.getOwnPropertyNames(Object.getPrototypeOf(api[resource])).filter((name) => name !== "constructor" && typeof (api[resource] as Record<string, unknown>)[name] === "function"),
    );
    expect([...methods].sort()).toEqual([...operationIds].sort());
    expect(Object.keys(OPERATIONS).sort()).toEqual([...operationIds].sort());
    expect(operationIds.length).toBeGreaterThan(100);
  });
});
