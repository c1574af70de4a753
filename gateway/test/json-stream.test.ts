import { text } from "node:stream/consumers";
import { RawJson } from "@analytics/contracts";
import { eventually } from "@analytics/testing";
import { jsonArrayStream } from "../src/http/json-stream";

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
    const answer = jsonArrayStream(delivered(3, log), converting);
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
    const empty = await jsonArrayStream(delivered(0, []), () => []);
    expect(await text(empty.body)).toBe("[]");
    await expect(jsonArrayStream(delivered(2, []), () => Promise.reject(new Error("pricing unavailable")))).rejects.toThrow("pricing unavailable");
  });
});
