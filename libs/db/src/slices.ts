/** Items handled per slice of a long synchronous pass over a batch (mapInSlices). */
export const SLICE_ITEMS = 100;

/**
 * `each` of every item in order, SLICE_ITEMS at a time, letting the event loop run between
 * slices. A process serves every account on one thread: a pass over a batch of 1000 items in one
 * go holds every other request (another account's single write, a consumer's next message) until
 * it ends; in slices, they wait for one slice at most.
 */
export async function mapInSlices<T, R>(items: readonly T[], each: (item: T, index: number) => R, size = SLICE_ITEMS): Promise<R[]> {
  const mapped: R[] = [];
  for (let from = 0; from < items.length; from += size) {
    if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (let i = from; i < Math.min(items.length, from + size); i++) mapped.push(each(items[i], i));
  }
  return mapped;
}

/** The JSON array of `items`, each written by `stringify` (JSON.stringify by default), in slices (mapInSlices). */
export async function jsonArrayInSlices<T>(items: readonly T[], stringify: (item: T) => string = JSON.stringify): Promise<string> {
  return `[${(await mapInSlices(items, stringify)).join(",")}]`;
}
