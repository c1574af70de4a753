import { Readable } from "node:stream";
import { RawJson, stringifyRest } from "@analytics/contracts";

/** Items of a JSON array answer already written: their UTF-8 JSON, separated by commas. */
export class JsonItems {
  constructor(readonly bytes: Uint8Array) {}
}
const OPEN = Buffer.from("[");
const COMMA = Buffer.from(",");

/**
 * A JSON array answer from a server-streaming call, written chunk by chunk as the chunks arrive,
 * so a 10 MB page is never held whole in the gateway. `toRest` turns one chunk into its REST
 * items (it may call other services for that chunk); meanwhile the next chunk is already being
 * received, never more than one ahead. The first chunk is read and converted before answering,
 * so that a failing call (bad filter, unavailable service) is still an ordinary error answer; a
 * failure after that cuts the body short, which a client sees as a broken response, never as a
 * complete one. A client that goes away cancels the call. An item that is RawJson is written as
 * its text; JsonItems are written as their bytes.
 */
export async function jsonArrayStream<C>(chunks: AsyncIterable<C>, toRest: (chunk: C) => unknown[] | Promise<unknown[]>) {
  const iterator = chunks[Symbol.asyncIterator]();
  const receive = () => {
    const next = iterator.next();
    // Awaited below, unless the answer stops first: then its failure is nobody's to handle.
    next.catch(() => undefined);
    return next;
  };
  let first: IteratorResult<C>;
  let following: Promise<IteratorResult<C>> | undefined;
  let firstItems: unknown[];
  try {
    first = await iterator.next();
    if (!first.done) following = receive();
    firstItems = first.done ? [] : await toRest(first.value);
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  let separator = "[";
  const bytes = (items: unknown[]) => {
    const parts: Uint8Array[] = [];
    let text = "";
    for (const item of items) {
      if (item instanceof JsonItems) {
        if (text) parts.push(Buffer.from(text));
        text = "";
        parts.push(separator === "[" ? OPEN : COMMA, item.bytes);
      } else text += separator + (item instanceof RawJson ? item.text : stringifyRest(item));
      separator = ",";
    }
    if (text) parts.push(Buffer.from(text));
    return Buffer.concat(parts);
  };
  async function* body() {
    try {
      yield bytes(firstItems);
      for (let next = await following; next && !next.done; next = await following) {
        following = receive();
        yield bytes(await toRest(next.value));
      }
      yield Buffer.from(separator === "[" ? "[]" : "]");
    } finally {
      await iterator.return?.();
    }
  }
  // One chunk buffered at a time: a slow client holds back the stream, not gateway memory.
  return { first: first.done ? undefined : first.value, body: Readable.from(body(), { highWaterMark: 1 }) };
}
