import { readAhead } from "../src/products";

describe("readAhead (a streamed page's chunks)", () => {
  it("starts the next chunk's read while the current chunk is handed on, never more than one ahead", async () => {
    const reads: string[][] = [];
    const chunks = readAhead(["a", "b", "c", "d", "e"], async (ids) => (reads.push(ids), ids), 2);
    expect((await chunks.next()).value).toEqual(["a", "b"]);
    expect(reads).toEqual([["a", "b"], ["c", "d"]]);
    expect((await chunks.next()).value).toEqual(["c", "d"]);
    expect((await chunks.next()).value).toEqual(["e"]);
    expect(reads).toEqual([["a", "b"], ["c", "d"], ["e"]]);
    expect((await chunks.next()).done).toBe(true);
  });

  it("passes a failed read on to the reader, and a read ahead that fails after the reader stopped is no crash", async () => {
    const failing = readAhead(["a", "b", "c"], async (ids) => (ids[0] === "a" ? ids : Promise.reject(new Error(`cannot read ${ids}`))), 1);
    expect((await failing.next()).value).toEqual(["a"]);
    await expect(failing.next()).rejects.toThrow("cannot read b");
    const stopped = readAhead(["a", "b"], async (ids) => (ids[0] === "a" ? ids : Promise.reject(new Error("late"))), 1);
    await stopped.next();
    await stopped.return(undefined);
  });
});
