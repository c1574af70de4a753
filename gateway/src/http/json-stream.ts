import { Readable } from "node:stream";
import { stringifyRest } from "@analytics/contracts";

/**
 * A JSON array answer from a server-streaming call, written chunk by chunk as the chunks arrive,
 * so a 10 MB page is never held whole in the gateway. Reads the first chunk before answering, so
 * that a failing call (bad filter, unavailable service) is still an ordinary error answer; a
 * failure after that cuts the body short, which a client sees as a broken response, never as a
 * complete one. A client that goes away cancels the call.
 */
export async function jsonArrayStream<C, T>(chunks: AsyncIterable<C>, items: (chunk: C) => T[], toRest: (item: T) => unknown) {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* body() {
    let separator = "[";
    try {
      for (let next = first; !next.done; next = await iterator.next()) {
        let text = "";
        for (const item of items(next.value)) {
          text += separator + stringifyRest(toRest(item));
          separator = ",";
        }
        if (text) yield text;
      }
      yield separator === "[" ? "[]" : "]";
    } finally {
      await iterator.return?.();
    }
  }
  return { first: first.done ? undefined : first.value, body: Readable.from(body()) };
}
