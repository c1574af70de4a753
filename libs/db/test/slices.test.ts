import { jsonArrayInSlices, mapInSlices, SLICE_ITEMS } from "../src";

/** A long pass over a batch lets the process's other work run between its slices. */
describe("mapInSlices", () => {
  it("maps every item in order, letting other work run after each slice", async () => {
    const items = Array.from({ length: 2 * SLICE_ITEMS + 50 }, (_, i) => i);
    const seen: number[] = [];
    // Another request's callback, queued when the pass starts: it runs between two slices.
    let ranAt: number | undefined;
    setImmediate(() => (ranAt = seen.length));
    const doubled = await mapInSlices(items, (item, index) => {
      seen.push(index);
      return item * 2;
    });
    expect(doubled).toEqual(items.map((i) => i * 2));
    expect(ranAt).toBe(SLICE_ITEMS);
  });

  it("writes the JSON array JSON.stringify writes", async () => {
    const rows = Array.from({ length: 250 }, (_, i) => ({ n: i, name: `row "${i}"`, none: null }));
    expect(await jsonArrayInSlices(rows)).toBe(JSON.stringify(rows));
    expect(await jsonArrayInSlices([])).toBe("[]");
  });
});
