import { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { RawJson, stringifyRest } from "@analytics/contracts";

/**
 * Any number of items of a JSON array answer, already written: their UTF-8 JSON separated by
 * commas (a whole chunk of products, say). RawJson, by contrast, is one value as JSON text.
 */
export class JsonItems {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * The reason the calls behind an answer are aborted when it ends: one shared error, because an
 * abort without a reason builds a DOMException (a stack trace) per answer, and a finished call
 * no longer listens anyway.
 */
const ANSWER_ENDED = new ConnectError("the answer ended", Code.Canceled);

/**
 * A JSON array answer from a server-streaming call, written chunk by chunk as the chunks arrive,
 * so a 10 MB page is never held whole in the gateway. `call` starts the call with the answer's
 * signal; `toRest` turns one chunk into its REST items (it may call other services for that
 * chunk, and gets the signal too). An item that is RawJson is written as its text; JsonItems are
 * written as their bytes. How the call is read: chunkedAnswer.
 */
export async function jsonArrayStream<C, W extends boolean = false>(
  call: (signal: AbortSignal) => AsyncIterable<C>,
  toRest: (chunk: C, signal: AbortSignal) => unknown[] | Promise<unknown[]>,
  options: AnswerOptions<W> = {},
) {
  let separator = "[";
  /** The items as pieces of the answer: JsonItems as they are, the others stringified together. */
  const pieces = (items: unknown[]) => {
    const out: Uint8Array[] = [];
    let text = "";
    for (const item of items) {
      if (item instanceof JsonItems) {
        out.push(Buffer.from(text + (separator === "[" ? "[" : ",")), item.bytes);
        text = "";
      } else text += separator + (item instanceof RawJson ? item.text : stringifyRest(item));
      separator = ",";
    }
    if (text) out.push(Buffer.from(text));
    return out;
  };
  return chunkedAnswer(call, async (chunk, signal) => pieces(await toRest(chunk, signal)), () => [Buffer.from(separator === "[" ? "[]" : "]")], options);
}

/** How long a streamed answer's call may take (per chunk asked for, and for its first chunk), and whether a one-chunk answer is sent whole. */
export interface AnswerOptions<W extends boolean = boolean> {
  idleTimeoutMs?: number;
  firstTimeoutMs?: number;
  /**
   * An answer of one chunk (a product by key, a short page) as one Buffer: Fastify writes it in
   * one write with its Content-Length, where a stream costs a chunked answer's two flushes and a
   * stream's machinery (issue 48). The second chunk's arrival is then awaited before answering,
   * so a failure of it is an ordinary error answer too.
   */
  whole?: W;
}

/** A chunked answer: a stream, or with `whole` a Buffer when it was one chunk. */
export interface Answer<C, W extends boolean> {
  first: C | undefined;
  body: W extends true ? Readable | Buffer : Readable;
}

/**
 * An answer from a server-streaming call in any encoding, written chunk by chunk as the chunks
 * arrive: `encode` turns one chunk into bytes of the answer, `end` gives its last bytes (a JSON
 * array's `]`). Meanwhile the next chunk is already being received, never more than one ahead.
 * The first chunk is read and encoded before answering, so that a failing call (bad filter,
 * unavailable service) is still an ordinary error answer, and the first chunk is returned
 * (`first`: what the call said of the whole answer, a page's next link), and with `whole` the
 * second chunk is awaited too (none: the answer is one Buffer); a failure after that cuts
 * the body short, which a client sees as a broken response, never as a complete one. When the
 * answer ends, however it ends (written, failed, the client gone), the signal aborts the calls
 * behind it: Connect's stream has no `return` that would. A call too long for one deadline (every
 * price of an account, a big page read by a slow client) takes `idleTimeoutMs` instead: it is
 * aborted with DEADLINE_EXCEEDED when a chunk it was asked for takes longer than that; the first
 * chunk, which may wait for a long statement (a planning breakdown), takes `firstTimeoutMs` when
 * given.
 */
export async function chunkedAnswer<C, W extends boolean = false>(
  call: (signal: AbortSignal) => AsyncIterable<C>,
  encode: (chunk: C, signal: AbortSignal) => Uint8Array[] | Promise<Uint8Array[]>,
  end: () => Uint8Array[],
  { idleTimeoutMs, firstTimeoutMs = idleTimeoutMs, whole }: AnswerOptions<W> = {},
): Promise<Answer<C, W>> {
  const answer = new AbortController();
  const iterator = call(answer.signal)[Symbol.asyncIterator]();
  let idle: NodeJS.Timeout | undefined;
  let asked = 0;
  const next = () => {
    const timeoutMs = asked++ === 0 ? firstTimeoutMs : idleTimeoutMs;
    if (timeoutMs !== undefined) {
      clearTimeout(idle);
      idle = setTimeout(() => answer.abort(new ConnectError(`no answer within ${timeoutMs} ms`, Code.DeadlineExceeded)), timeoutMs);
    }
    const chunk = iterator.next();
    void chunk.finally(() => clearTimeout(idle)).catch(() => undefined);
    return chunk;
  };
  const receive = () => {
    const chunk = next();
    // Awaited below, unless the answer stops first: then its failure is nobody's to handle.
    chunk.catch(() => undefined);
    return chunk;
  };
  let first: IteratorResult<C>;
  let following: Promise<IteratorResult<C>> | undefined;
  let firstBytes: Uint8Array[];
  let second: IteratorResult<C> | undefined;
  try {
    first = await next();
    if (!first.done) following = receive();
    firstBytes = first.done ? [] : await encode(first.value, answer.signal);
    if (whole) second = first.done ? first : await following;
  } catch (error) {
    clearTimeout(idle);
    answer.abort();
    throw error;
  }
  if (second?.done) {
    clearTimeout(idle);
    answer.abort(ANSWER_ENDED);
    return { first: first.done ? undefined : first.value, body: Buffer.concat([...firstBytes, ...end()]) } as Answer<C, W>;
  }
  async function* body() {
    yield* firstBytes;
    let next = second ?? (await following);
    for (; next && !next.done; next = await following) {
      following = receive();
      yield* await encode(next.value, answer.signal);
    }
    yield* end();
  }
  const stream = Readable.from(body());
  stream.once("close", () => {
    clearTimeout(idle);
    answer.abort(ANSWER_ENDED);
  });
  return { first: first.done ? undefined : first.value, body: stream } as Answer<C, W>;
}
