import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { buildSync } from "esbuild";
import { Code, ConnectError } from "@connectrpc/connect";
import { RawJson } from "@analytics/contracts";
import { eventually } from "@analytics/testing";
import { JsonItems, jsonArrayStream } from "../src/http/json-stream";
import { productItems } from "../src/routes/products";

/** Chunks 1..n as a streaming call delivers them, recording each delivery. */
async function* delivered(n: number, log: string[]) {
  for (let i = 1; i <= n; i++) {
    log.push(`received ${i}`);
    yield i;
  }
}

describe("jsonArrayStream (a streamed JSON array answer)", () => {
  it("receives the next chunk while the current one is converted, one ahead, and writes the items in order", async () => {
    const log: string[] = [];
    const gates = new Map<number, () => void>();
    const converting = (chunk: number) =>
      new Promise<unknown[]>((resolve) => {
        log.push(`converting ${chunk}`);
        gates.set(chunk, () => resolve([{ n: chunk }, new RawJson(`{"raw":${chunk}}`)]));
      });
    const answer = jsonArrayStream(() => delivered(3, log), converting);
    // Chunk 2 arrives while chunk 1 is still being converted (its pricing call, say); chunk 3 does not.
    await eventually(async () => log.includes("received 2"));
    expect(log.sort()).toEqual(["converting 1", "received 1", "received 2"]);
    gates.get(1)!();
    const { body } = await answer;
    const written = text(body);
    await eventually(async () => gates.has(2));
    await eventually(async () => log.includes("received 3"));
    expect(log.sort()).toEqual(["converting 1", "converting 2", "received 1", "received 2", "received 3"]);
    gates.get(2)!();
    await eventually(async () => gates.has(3));
    gates.get(3)!();
    expect(JSON.parse(await written)).toEqual([{ n: 1 }, { raw: 1 }, { n: 2 }, { raw: 2 }, { n: 3 }, { raw: 3 }]);
  });

  it("answers [] for a call without items, and fails before answering when the first chunk cannot be converted", async () => {
    const empty = await jsonArrayStream(() => delivered(0, []), () => []);
    expect(await text(empty.body)).toBe("[]");
    await expect(jsonArrayStream(() => delivered(2, []), () => Promise.reject(new Error("pricing unavailable")))).rejects.toThrow("pricing unavailable");
  });

  it("a chunk that fails while the answer is being abandoned is no crash", () => {
    // In a process of its own: there an unhandled rejection ends the process, as in the gateway
    // (Jest's sandbox reports none to the test).
    const scenario = `
      import { jsonArrayStream } from "./gateway/src/http/json-stream";
      let failed = false;
      async function* failingSecond() {
        yield 1;
        failed = true;
        throw new Error("the catalogue went away");
      }
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      (async () => {
        const { body } = await jsonArrayStream(() => failingSecond(), (n) => [n]);
        // The second chunk's failure is already on its way; nobody reads the body.
        body.destroy();
        await new Promise((resolve) => body.once("close", resolve));
        while (!failed) await turn();
        // Node reports an unhandled rejection once the microtasks after it have run: one turn of the loop.
        await turn();
        console.log(failed ? "survived the failure" : "no failure");
      })();`;
    const root = join(__dirname, "../..");
    const [bundle] = buildSync({ stdin: { contents: scenario, loader: "ts", resolveDir: root }, bundle: true, platform: "node", format: "cjs", packages: "external", tsconfig: join(root, "tsconfig.base.json"), write: false }).outputFiles;
    const run = spawnSync(process.execPath, ["-e", bundle.text], { cwd: root, encoding: "utf8" });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({ status: 0, stdout: "survived the failure\n", stderr: "" });
  });

  it("aborts the calls behind the answer when a client goes away in the middle, and when it is written", async () => {
    let signal: AbortSignal | undefined;
    const pricing: AbortSignal[] = [];
    const abandoned = await jsonArrayStream(
      (s) => ((signal = s), delivered(5, [])),
      (n, s) => (pricing.push(s), [n]),
    );
    expect(signal?.aborted).toBe(false);
    abandoned.body.destroy();
    await eventually(async () => signal?.aborted);
    expect(pricing.every((s) => s === signal)).toBe(true);
    const written = await jsonArrayStream((s) => ((signal = s), delivered(2, [])), (n) => [n]);
    expect(JSON.parse(await text(written.body))).toEqual([1, 2]);
    await eventually(async () => signal?.aborted);
  });

  it("aborts a call without a deadline when a chunk it asked for does not come within idleTimeoutMs", async () => {
    /** Delivers `n` chunks, then waits, as a stalled service does, until the call is aborted. */
    async function* stalling(n: number, signal: AbortSignal) {
      for (let i = 1; i <= n; i++) yield i;
      await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    }
    await expect(jsonArrayStream((s) => stalling(0, s), (n) => [n], { idleTimeoutMs: 20 })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    let signal: AbortSignal | undefined;
    const answer = await jsonArrayStream((s) => stalling(2, (signal = s)), (n) => [n], { idleTimeoutMs: 20 });
    await expect(text(answer.body)).rejects.toBeInstanceOf(ConnectError);
    expect((signal?.reason as ConnectError).code).toBe(Code.DeadlineExceeded);
  });

  it("gives the first chunk firstTimeoutMs (a long statement runs before it), every later one idleTimeoutMs", async () => {
    /** Delivers chunk 1 after `firstMs`, then chunk 2 after `laterMs`, unless aborted first. */
    async function* late(firstMs: number, laterMs: number, signal: AbortSignal) {
      const wait = (ms: number) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)));
        });
      await wait(firstMs);
      yield 1;
      await wait(laterMs);
      yield 2;
    }
    const slowFirst = await jsonArrayStream((s) => late(150, 0, s), (n) => [n], { idleTimeoutMs: 50, firstTimeoutMs: 2_000 });
    expect(JSON.parse(await text(slowFirst.body))).toEqual([1, 2]);
    await expect(jsonArrayStream((s) => late(2_000, 0, s), (n) => [n], { idleTimeoutMs: 2_000, firstTimeoutMs: 50 })).rejects.toMatchObject({ code: Code.DeadlineExceeded });
    const slowSecond = await jsonArrayStream((s) => late(0, 2_000, s), (n) => [n], { idleTimeoutMs: 50, firstTimeoutMs: 5_000 });
    await expect(text(slowSecond.body)).rejects.toMatchObject({ code: Code.DeadlineExceeded });
  });

  it("with whole, answers one chunk as one Buffer (its call ended), more as a stream, and fails before answering when the second chunk fails", async () => {
    let signal: AbortSignal | undefined;
    const one = await jsonArrayStream((s) => ((signal = s), delivered(1, [])), (n) => [{ n }], { whole: true });
    expect(Buffer.isBuffer(one.body) && JSON.parse(one.body.toString())).toEqual([{ n: 1 }]);
    expect(signal?.aborted).toBe(true);
    const none = await jsonArrayStream(() => delivered(0, []), () => [], { whole: true });
    expect(none.body.toString()).toBe("[]");
    const three = await jsonArrayStream(() => delivered(3, []), (n) => [n], { whole: true });
    expect(Buffer.isBuffer(three.body)).toBe(false);
    expect(JSON.parse(await text(three.body as Readable))).toEqual([1, 2, 3]);
    async function* failingSecond() {
      yield 1;
      throw new Error("the catalogue went away");
    }
    await expect(jsonArrayStream(() => failingSecond(), (n) => [n], { whole: true })).rejects.toThrow("the catalogue went away");
  });

  it("writes JsonItems as they are, among items it stringifies", async () => {
    const { body } = await jsonArrayStream(() => delivered(2, []), (n) => (n === 1 ? [new JsonItems(Buffer.from('{"a":1},{"b":"ü"}'))] : [{ c: 2 }]));
    expect(JSON.parse(await text(body))).toEqual([{ a: 1 }, { b: "ü" }, { c: 2 }]);
  });
});

describe("productItems (GET /products' chunk from the catalogue's bytes)", () => {
  /** A chunk as the catalogue sends it: each product's parts one after the other, with the end of each. */
  const chunk = (products: string[][]) => {
    let end = 0;
    const ends = products.flatMap((parts) => parts.map((p) => (end += Buffer.byteLength(p))));
    return { json: Buffer.from(products.flat().join("")), ends };
  };

  it("joins each product's parts with the fields the gateway adds, each in its place", () => {
    const { json, ends } = chunk([
      ['{"id":"1","name":"😀 ü"}', '{"startDate":null}', '{"createdAt":"x"}'],
      ['{"id":"2"}', "{}", '{"t":"é"}'],
    ]);
    const added = [
      ['"imageUrl":null', '"prices":[]'],
      ['"imageUrl":"/x"', '"prices":[{"listExternalID":"ö","price":1.50}]'],
    ];
    expect(productItems(json, ends, added).toString()).toBe(
      '{"id":"1","name":"😀 ü","imageUrl":null,"startDate":null,"prices":[],"createdAt":"x"},' +
        '{"id":"2","imageUrl":"/x","prices":[{"listExternalID":"ö","price":1.50}],"t":"é"}',
    );
    expect(JSON.parse(`[${productItems(json, ends, added).toString()}]`)[1]).toEqual({ id: "2", imageUrl: "/x", prices: [{ listExternalID: "ö", price: 1.5 }], t: "é" });
  });

  it("refuses a chunk whose offsets do not match its bytes", () => {
    const { json, ends } = chunk([['{"id":"1"}', "{}", "{}"]]);
    const added = [['"a":1', '"b":2']];
    expect(productItems(json, ends, added).toString()).toBe('{"id":"1","a":1,"b":2}');
    expect(() => productItems(json, ends.slice(0, 2), added)).toThrow("does not match");
    expect(() => productItems(json, [ends[0] - 1, ends[1], ends[2]], added)).toThrow("does not match");
    expect(() => productItems(json, ends, [['"a":1']])).toThrow("does not match");
  });
});
