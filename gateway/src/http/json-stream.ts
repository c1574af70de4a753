import { Readable } from "node:stream";
import { stringifyRest } from "@analytics/contracts";

/**
 * A JSON array answer from a server-streaming call, written chunk by chunk as the chunks arrive,
 * so a 10 MB page is never held whole in the gateway. `toRest` turns one chunk into its REST
 * items (it may call other services for that chunk). The first chunk is read and converted before
 * answering, so that a failing call (bad filter, unavailable service) is still an ordinary error
 * answer; a failure after that cuts the body short, which a client sees as a broken response,
 * never as a complete one. A client that goes away cancels the call.
 */
export async function jsonArrayStream<C>(chunks: AsyncIterable<C>, toRest: (chunk: C) => unknown[] | Promise<unknown[]>) {
  const iterator = chunks[Symbol.asyncIterator]();
  let first: IteratorResult<C>;
  let firstItems: unknown[];
  try {
    first = await iterator.next();
    firstItems = first.done ? [] : await toRest(first.value);
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  let separator = "[";
  const text = (items: unknown[]) => {
    let out = "";
    for (const item of items) {
      out += separator + stringifyRest(item);
      separator = ",";
    }
    return out;
  };
  async function* body() {
    try {
      yield text(firstItems);
      if (!first.done) for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield text(await toRest(next.value));
      yield separator === "[" ? "[]" : "]";
    } finally {
      await iterator.return?.();
    }
  }
  return { first: first.done ? undefined : first.value, body: Readable.from(body()) };
}
