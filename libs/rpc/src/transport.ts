import http2 from "node:http2";
import {
  create,
  fromBinary,
  isMessage,
  toBinary,
  type DescMessage,
  type DescMethodStreaming,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { Code, ConnectError, type ContextValues, type StreamResponse, type Transport, type UnaryResponse } from "@connectrpc/connect";
import { codeFromHttpStatus, endStreamFromJson, errorFromJsonBytes } from "@connectrpc/connect/protocol-connect";
import { DATA_VERSION_HEADER, dataVersionsOf } from "./data-version";
import { Replicas, type Replica, type ReplicaOptions } from "./replicas";

/**
 * The Connect protocol's unary and server-streaming calls (binary, uncompressed) over one HTTP/2
 * session per replica of the service (every address its host name resolves to, calls spread
 * round-robin: `Replicas`), written on node:http2. Services keep connect-node's server; callers get
 * the same ConnectErrors (code, message, details) as from connect-node's transport.
 *
 * Why not connect-node's `createConnectTransport`: per call it builds async-iterable pipelines,
 * two AbortControllers, a DOMException and a ConnectError even when the call succeeds, and
 * converts headers to and from fetch `Headers`: measured, that was a quarter of the gateway's CPU
 * per request (issue 8 item 4). Client-streaming calls, compression and interceptors, which no
 * caller here uses, are not supported. A call whose context collects DataVersions asks its
 * service for the caller's data version (data-version.ts).
 */
export function createServiceTransport(baseUrl: string, options: ReplicaOptions = {}): Transport {
  const replicas = new Replicas(baseUrl, options);
  const prefix = new URL(baseUrl).pathname.replace(/\/+$/, "");

  /**
   * Sends one request and arms its deadline and the caller's signal: either ends the stream with
   * its ConnectError, which every reader of the stream then gets. `done()` disarms them.
   */
  async function send(method: { parent: { typeName: string }; name: string }, contentType: string, body: Uint8Array, signal: AbortSignal | undefined, timeoutMs: number | undefined, header: HeaderInit, askVersion = false) {
    const path = `${prefix}/${method.parent.typeName}/${method.name}`;
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": contentType,
      "connect-protocol-version": "1",
    };
    if (timeoutMs !== undefined && timeoutMs > 0) headers["connect-timeout-ms"] = String(serviceDeadlineMs(timeoutMs));
    if (header) {
      if (header instanceof Headers || Array.isArray(header)) new Headers(header).forEach((value, key) => (headers[key] = value));
      else for (const [key, value] of Object.entries(header as Record<string, string>)) headers[key.toLowerCase()] = value;
    }
    if (askVersion) headers[DATA_VERSION_HEADER] = "1";
    if (signal?.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
    let stream: http2.ClientHttp2Stream | undefined;
    // The call's end before its answer: its deadline or the caller's signal.
    let failure: ConnectError | undefined;
    let stopOpening: (error: ConnectError) => void = () => undefined;
    const opening = new Promise<never>((_, reject) => (stopOpening = reject));
    // Reset as cancelled (the service's handler is aborted as Canceled), then end the reading with
    // the error; while still connecting (a host that drops the connection attempt), stop waiting.
    const fail = (error: ConnectError) => {
      failure ??= error;
      if (!stream) return stopOpening(error);
      stream.close(http2.constants.NGHTTP2_CANCEL);
      stream.destroy(error);
    };
    const timer = timeoutMs !== undefined && timeoutMs > 0 ? setTimeout(() => fail(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeoutMs) : undefined;
    const onAbort = () => fail(ConnectError.from(signal!.reason, Code.Canceled));
    signal?.addEventListener("abort", onAbort, { once: true });
    const disarm = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    let refusedBy: Replica | undefined;
    for (let attempt = 1; ; attempt++) {
      let replica: Replica;
      try {
        const requested = open(path, headers, () => failure !== undefined, refusedBy);
        // A stream that opens after its call ended is cancelled at once.
        requested.then((late) => failure === undefined || late.stream.close(http2.constants.NGHTTP2_CANCEL), () => undefined);
        ({ stream, replica } = await Promise.race([requested, opening]));
      } catch (error) {
        disarm();
        throw fromNodeError(error);
      }
      const opened = stream;
      let streamError: unknown;
      // Kept for whoever waits for the answer; listening also keeps an early error from being unhandled.
      opened.on("error", (error) => (streamError ??= error));
      const answer = new Promise<http2.IncomingHttpHeaders | "refused">((resolve, reject) => {
        let answered = false;
        opened.once("response", (headers) => {
          answered = true;
          resolve(headers);
        });
        // Only a stream that closes unanswered gets an error: building one costs a stack trace.
        opened.once("close", () => {
          if (answered) return;
          if (failure === undefined && opened.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return resolve("refused");
          reject(failure ?? (streamError === undefined ? closedError(opened) : fromNodeError(streamError)));
        });
      });
      opened.end(body);
      let responseHeaders: http2.IncomingHttpHeaders | "refused";
      try {
        responseHeaders = await answer;
      } catch (error) {
        disarm();
        throw error;
      }
      // Refused (REFUSED_STREAM, or above the last stream of a GOAWAY): by HTTP/2's rules the service
      // never ran it, whatever the method, so it goes to another replica (a replica shutting down).
      if (responseHeaders === "refused") {
        stream = undefined;
        refusedBy = replica;
        if (attempt < MAX_ATTEMPTS) {
          await replicas.resolveAgain();
          continue;
        }
        disarm();
        throw closedError(opened);
      }
      const done = () => {
        disarm();
        // A stream read to its end closes by itself; one left early is cancelled, so the service stops.
        if (!opened.closed && !opened.readableEnded) opened.close(http2.constants.NGHTTP2_CANCEL);
      };
      return { stream: opened, replica, headers: responseHeaders, done };
    }
  }

  /**
   * send(), asking for the caller's data version when the call's context collects the versions
   * of an answer and this is its first call to an owning service (a later one waits for it).
   */
  async function sendFor(contextValues: ContextValues | undefined, ...args: Parameters<typeof send>) {
    const versions = dataVersionsOf(contextValues);
    const answered = versions && (await versions.beforeCall(args[0].parent.typeName));
    if (!answered) return send(...args);
    try {
      const sent = await send(args[0], args[1], args[2], args[3], args[4], args[5], true);
      const version = sent.headers[DATA_VERSION_HEADER];
      answered(typeof version === "string" ? version : undefined);
      return sent;
    } catch (error) {
      answered(undefined);
      throw error;
    }
  }

  /**
   * Opens the call's stream on the next replica (another than `avoid` while there is one). A
   * replica that cannot be connected to has received nothing, so the name is resolved again (a pod
   * that restarted has a new address) and the call goes to another replica, once; a call whose
   * stream opened may have reached its service and is never sent twice.
   */
  async function open(path: string, headers: http2.OutgoingHttpHeaders, ended: () => boolean, avoid?: Replica): Promise<{ stream: http2.ClientHttp2Stream; replica: Replica }> {
    const first = await replicas.pick(avoid);
    if (!first) throw new ConnectError("the service has no address", Code.Unavailable);
    try {
      return { stream: await first.request(path, headers), replica: first };
    } catch (error) {
      if (ended() || !isNetworkError(error)) throw error;
      await replicas.resolveAgain();
      const other = ended() ? undefined : await replicas.pick(first);
      if (!other || other === first) throw error;
      return { stream: await other.request(path, headers), replica: other };
    }
  }

  /** Every byte of the response, read as it arrives. */
  async function* data(stream: http2.ClientHttp2Stream, replica: Replica): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        replica.sessions.notifyResponseByteRead(stream);
        yield chunk;
      }
    } catch (error) {
      throw fromNodeError(error);
    }
    // Ended without its end-of-stream, e.g. reset by a service that stopped.
    if (stream.rstCode) throw closedError(stream);
  }

  return {
    async unary<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, signal: AbortSignal | undefined, timeoutMs: number | undefined, header: HeaderInit, input: MessageInitShape<I>, contextValues?: ContextValues): Promise<UnaryResponse<I, O>> {
      const request = toBinary(method.input, isMessage(input, method.input) ? input : create(method.input, input));
      const { stream, replica, headers, done } = await sendFor(contextValues, method, "application/proto", request, signal, timeoutMs, header);
      try {
        const status = Number(headers[":status"]);
        const chunks: Buffer[] = [];
        for await (const chunk of data(stream, replica)) chunks.push(chunk);
        const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        if (status !== 200) throw errorFromJsonBytes(bytes, new Headers(), new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status)));
        return { stream: false, service: method.parent, method, header: new Headers(), trailer: new Headers(), message: fromBinary(method.output, bytes) };
      } finally {
        done();
      }
    },

    async stream<I extends DescMessage, O extends DescMessage>(method: DescMethodStreaming<I, O>, signal: AbortSignal | undefined, timeoutMs: number | undefined, header: HeaderInit, input: AsyncIterable<MessageInitShape<I>>, contextValues?: ContextValues): Promise<StreamResponse<I, O>> {
      if (method.methodKind !== "server_streaming") throw new ConnectError(`${method.methodKind} calls are not supported`, Code.Unimplemented);
      let message: MessageInitShape<I> | undefined;
      for await (const m of input) message ??= m;
      const request = toBinary(method.input, isMessage(message, method.input) ? message : create(method.input, message));
      const envelope = Buffer.allocUnsafe(5 + request.byteLength);
      envelope[0] = 0;
      envelope.writeUInt32BE(request.byteLength, 1);
      envelope.set(request, 5);
      const { stream, replica, headers, done } = await sendFor(contextValues, method, "application/connect+proto", envelope, signal, timeoutMs, header);
      const status = Number(headers[":status"]);
      if (status !== 200) {
        done();
        throw new ConnectError(`HTTP ${status}`, codeFromHttpStatus(status));
      }
      async function* messages(): AsyncGenerator<MessageShape<O>> {
        try {
          let ended = false;
          for await (const bytes of envelopes(data(stream, replica))) {
            if (ended) throw new ConnectError("protocol error: a message after the end of the stream", Code.Internal);
            if (bytes.flags & END_STREAM) {
              // A successful stream ends with `{}`; connect's parser builds a ConnectError (a stack
              // trace) before it parses anything, so it reads only ends that say more.
              if (!isEmptyEnd(bytes.data)) {
                const end = endStreamFromJson(bytes.data);
                if (end.error) throw end.error;
              }
              ended = true;
            } else if (bytes.flags & COMPRESSED) throw new ConnectError("protocol error: a compressed message", Code.Internal);
            else yield fromBinary(method.output, bytes.data);
          }
          if (!ended) throw new ConnectError("the service's stream ended before its end", Code.Unavailable);
        } finally {
          done();
        }
      }
      return { stream: true, service: method.parent, method, header: new Headers(), trailer: new Headers(), message: messages() };
    },
  };
}

type HeaderInit = ConstructorParameters<typeof Headers>[0];

/** The most the service's deadline is set before the caller's own (a tenth of a short one). */
const DEADLINE_GRACE_MS = 500;

/**
 * The deadline the service is told: a little shorter than the caller waits, so that a service
 * that refuses to commit once its deadline has passed (libs/db inTransaction) gets that answer,
 * a 503 (nothing written), to the caller before the caller's own timer ends the call with an
 * unknown outcome.
 */
export const serviceDeadlineMs = (timeoutMs: number) => Math.max(1, timeoutMs - Math.min(DEADLINE_GRACE_MS, Math.floor(timeoutMs / 10)));

/** Tries of a call whose streams are refused (replicas shutting down) before it fails. */
const MAX_ATTEMPTS = 3;

const COMPRESSED = 0b01;
const END_STREAM = 0b10;

/** The end of a stream that carries neither error nor metadata: `{}`. */
const isEmptyEnd = (data: Buffer) => data.length === 2 && data[0] === 0x7b && data[1] === 0x7d;

/**
 * The Connect stream's envelopes (a flags byte, a 4-byte length, the message) cut out of the
 * response's chunks. A message that spans chunks is copied once, when it is complete.
 */
async function* envelopes(chunks: AsyncIterable<Buffer>): AsyncGenerator<{ flags: number; data: Buffer }> {
  const parts: Buffer[] = [];
  let size = 0;
  const take = (n: number): Buffer => {
    if (n === 0) return Buffer.alloc(0);
    size -= n;
    if (parts[0].length >= n) {
      const head = parts[0].subarray(0, n);
      if (parts[0].length === n) parts.shift();
      else parts[0] = parts[0].subarray(n);
      return head;
    }
    const out = Buffer.allocUnsafe(n);
    for (let at = 0; at < n; ) {
      const part = parts[0];
      const count = Math.min(part.length, n - at);
      part.copy(out, at, 0, count);
      at += count;
      if (count === part.length) parts.shift();
      else parts[0] = part.subarray(count);
    }
    return out;
  };
  let flags = -1;
  let length = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    size += chunk.length;
    for (;;) {
      if (flags < 0) {
        if (size < 5) break;
        const head = take(5);
        flags = head[0];
        length = head.readUInt32BE(1);
      }
      if (size < length) break;
      yield { flags, data: take(length) };
      flags = -1;
    }
  }
  if (flags >= 0 || size > 0) throw new ConnectError("the service's stream ended inside a message", Code.Unavailable);
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EAI_AGAIN", "EPIPE", "ERR_HTTP2_STREAM_ERROR", "ERR_HTTP2_SESSION_ERROR", "ERR_HTTP2_GOAWAY_SESSION", "ERR_HTTP2_STREAM_CANCEL", "ERR_HTTP2_INVALID_SESSION", "ERR_STREAM_PREMATURE_CLOSE"]);

/**
 * A failure below the protocol. A service that cannot be reached or went away is UNAVAILABLE, the
 * network error kept as the cause (connect-node's session manager reports a refused connection as
 * INTERNAL, with that cause).
 */
function fromNodeError(error: unknown): ConnectError {
  const cause = error instanceof ConnectError ? error.cause : error;
  const network = isNetworkError(error);
  if (error instanceof ConnectError) return network && error.code === Code.Internal ? new ConnectError(error.rawMessage, Code.Unavailable, undefined, undefined, cause) : error;
  const connectError = ConnectError.from(error, network ? Code.Unavailable : Code.Internal);
  if (connectError !== error) connectError.cause = error;
  return connectError;
}

function isNetworkError(error: unknown): boolean {
  const cause = error instanceof ConnectError ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && NETWORK_CODES.has(code);
}

/** The stream closed before its answer: reset by the service, or its session went away. */
function closedError(stream: http2.ClientHttp2Stream): ConnectError {
  const { rstCode } = stream;
  if (rstCode === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM) return new ConnectError("the service is overloaded", Code.ResourceExhausted);
  return new ConnectError(`the service's stream closed (HTTP/2 code ${rstCode ?? "none"})`, Code.Unavailable);
}
