import { ConnectionError, errorOf, type ApiError } from "./errors";

/** How a generated method sends its operation. */
export interface Spec {
  method: string;
  /** The path with its parameters filled in. */
  path: string;
  /** An account's bearer token, the admin token, or nothing. */
  auth: "bearer" | "admin" | "none";
  /** A file body's default media type (imports, images); absent: a JSON body. */
  media?: string;
}

/** A file body: sent as is. A stream is sent once (not retried: its bytes are gone). */
export type Upload = string | Uint8Array | Blob | ReadableStream<Uint8Array>;

export interface RequestOptions {
  /** The write's Idempotency-Key; by default a new one per call, the same across its retries. */
  idempotencyKey?: string;
  /** Retries of this call (the client's maxRetries when absent). */
  maxRetries?: number;
  /** A file body's media type (e.g. text/csv). */
  contentType?: string;
  /** Extra request headers (Accept: text/csv for a planning answer as CSV, ...). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** Where the API answers, e.g. https://api.example.com (paths start /v2/api). */
  baseUrl: string;
  /** An account's credentials: exchanged for a bearer token (POST /v2/api/auth), renewed as needed. */
  accountID?: string;
  apiKey?: string;
  /** A token got elsewhere (no renewal). */
  accessToken?: string;
  /** The operator's token for the Admin operations. */
  adminToken?: string;
  /** Retries on no answer, 408, a 409 `idempotency_key_in_use`, 429 and 5xx; 2 when absent. */
  maxRetries?: number;
  /**
   * How long an attempt may wait for its answer's headers before it counts as no answer (then
   * retried), and how long the answer's body may then send nothing before its read fails with a
   * ConnectionError (not retried: a write was done); 60 s when absent.
   */
  timeoutMs?: number;
  /** The first retry's wait before jitter (doubling each time, at most 8 s); 500 ms when absent. */
  retryBaseMs?: number;
  /** Conditional reads: keep answers with an ETag, send If-None-Match, and return the kept answer on 304. */
  cache?: boolean | { maxEntries: number };
  fetch?: typeof fetch;
  /** How a wait is done (retries, polling); tests record the waits instead. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const retryable = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;
const MAX_RETRY_AFTER_MS = 120_000;

/**
 * The answer with a body that fails with a ConnectionError when the server sends nothing for
 * `timeoutMs` while it is being read (`deadline` aborts the request): a stalled answer never hangs
 * its reader. Only the waits for the server count, never the reader's own pace between reads, so
 * a body of any size can be read as slowly as the caller likes.
 */
function idleBody(res: Response, deadline: AbortController, timeoutMs: number): Response {
  if (!res.body || res.status === 204 || res.status === 304) return res;
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const timer = setTimeout(() => deadline.abort(new Error(`no bytes of the answer in ${timeoutMs} ms`)), timeoutMs);
        timer.unref?.();
        try {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          // The server's silence is a ConnectionError; anything else (the caller's abort) as it came.
          controller.error(deadline.signal.aborted ? new ConnectionError(deadline.signal.reason) : error);
        } finally {
          clearTimeout(timer);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** Waits `ms`, or rejects when `signal` aborts first. */
export const wait = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", aborted, { once: true });
  });

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
}

/** The `rel="next"` target of a Link header. */
export function nextLink(link: string | null): string | undefined {
  for (const part of link?.split(/,(?=\s*<)/) ?? []) {
    const m = /<([^>]*)>(.*)/.exec(part);
    if (m && /;\s*rel="?([^";]*\s)?next(\s[^";]*)?"?/i.test(m[2])) return m[1];
  }
  return undefined;
}

/** A query object as `?a=1&b=x&b=y` (arrays repeated, absent values left out), "" for none. */
export const queryString = (query: object | undefined) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) q.append(k, String(item));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
};

/**
 * The runtime every generated resource calls: authentication, retries with one Idempotency-Key per
 * write, typed errors, conditional reads, paging and NDJSON answers.
 */
export class Client {
  readonly baseUrl: string;
  private token?: { value: string; renewAt: number };
  private renewing?: Promise<string>;
  private readonly kept?: Map<string, { etag: string; value: unknown }>;
  private readonly fetch: typeof fetch;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetch = options.fetch ?? ((...args) => fetch(...args));
    this.sleep = options.sleep ?? wait;
    if (options.cache) this.kept = new Map();
  }

  /** The account's bearer token: exchanged once, renewed before it expires (or after a 401). */
  async accessToken(renew = false): Promise<string> {
    const { accountID, apiKey, accessToken } = this.options;
    if (!accountID || !apiKey) {
      if (accessToken) return accessToken;
      throw new Error("no credentials: give accountID and apiKey (or accessToken)");
    }
    if (!renew && this.token && Date.now() < this.token.renewAt) return this.token.value;
    this.renewing ??= this.call<{ accessToken: string; expiresIn: number }>({ method: "POST", path: "/v2/api/auth", auth: "none" }, undefined, { accountID, apiKey })
      .then(({ accessToken: value, expiresIn }) => {
        // Renewed at 90 % of its life (at most a minute early): a call never carries an expired token.
        this.token = { value, renewAt: Date.now() + expiresIn * 1000 - Math.min(60_000, expiresIn * 100) };
        return value;
      })
      .finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  /** Sends a request with retries; answers the Response of a 2xx or 304, throws an ApiError otherwise. */
  async send(spec: Spec, target: string, body?: unknown, options: RequestOptions = {}): Promise<Response> {
    const isUpload = spec.media !== undefined;
    const key = WRITES.has(spec.method) && spec.auth !== "none" ? (options.idempotencyKey ?? globalThis.crypto.randomUUID()) : undefined;
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (key) headers["idempotency-key"] = key;
    if (body !== undefined) headers["content-type"] = isUpload ? (options.contentType ?? spec.media!) : "application/json";
    const payload = body === undefined ? undefined : isUpload ? (body as Upload) : JSON.stringify(body);
    // A stream's bytes are read once: a retry could not send them again.
    const replayable = !(typeof ReadableStream !== "undefined" && payload instanceof ReadableStream);
    // An admin write is not retried: the gateway keeps Idempotency-Keys of accounts' calls only, so
    // a repeat of a lost answer would make a second account or key.
    const maxRetries = replayable && !(key && spec.auth === "admin") ? (options.maxRetries ?? this.options.maxRetries ?? 2) : 0;
    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      if (spec.auth === "bearer") headers.authorization = `Bearer ${await this.accessToken()}`;
      if (spec.auth === "admin") headers.authorization = `Bearer ${this.options.adminToken}`;
      let res: Response;
      // The attempt's deadline runs until the answer's headers; then the body's own (idleBody).
      const timeoutMs = this.options.timeoutMs ?? 60_000;
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
      timer.unref?.();
      const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
      try {
        res = await this.fetch(this.baseUrl + target, { method: spec.method, headers, body: payload, signal, ...(replayable ? {} : { duplex: "half" }) } as RequestInit);
      } catch (error) {
        if (options.signal?.aborted || attempt >= maxRetries) throw new ConnectionError(error);
        await this.sleep(this.backoff(attempt), options.signal);
        continue;
      } finally {
        clearTimeout(timer);
      }
      if (res.ok || res.status === 304) return idleBody(res, deadline, timeoutMs);
      // The token was revoked or expired early: renewed once, the request sent again (not a retry).
      if (res.status === 401 && spec.auth === "bearer" && !renewed && this.options.apiKey && replayable) {
        renewed = true;
        await res.body?.cancel();
        await this.accessToken(true);
        attempt--;
        continue;
      }
      if (retryable(res.status) && attempt < maxRetries) {
        if (res.status === 409) {
          // Only a key still in use can come right (its first request ends, then its answer is
          // replayed); any other conflict is the resource's state, the same on every retry.
          const conflict = await this.errorOf(res);
          if (conflict.code !== "idempotency_key_in_use") throw conflict;
        } else await res.body?.cancel();
        await this.sleep(retryAfterMs(res.headers.get("retry-after")) ?? this.backoff(attempt), options.signal);
        continue;
      }
      throw await this.errorOf(res);
    }
  }

  /** Exponential with full jitter: attempt 0 waits up to retryBaseMs, then twice that, at most 8 s. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(8_000, (this.options.retryBaseMs ?? 500) * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private async errorOf(res: Response): Promise<ApiError> {
    const text = await res.text().catch(() => "");
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = { message: text || `HTTP ${res.status}` };
    }
    return errorOf(res.status, body, res.headers);
  }

  /** One operation's JSON answer (undefined when it has no body); a kept one on 304 with the cache on. */
  async call<T>(spec: Spec, query?: object, body?: unknown, options?: RequestOptions): Promise<T> {
    const target = spec.path + queryString(query);
    const kept = spec.method === "GET" ? this.kept?.get(target) : undefined;
    const res = await this.send(spec, target, body, kept ? { ...options, headers: { "if-none-match": kept.etag, ...options?.headers } } : options);
    if (res.status === 304 && kept) return kept.value as T;
    const type = res.headers.get("content-type") ?? "";
    // JSON parsed, text as a string, anything else (an image) as its bytes.
    const binary = res.status !== 304 && type !== "" && !/json|^text\//.test(type);
    const text = binary ? "" : await res.text();
    const value = (binary ? await res.blob() : text && type.includes("json") ? JSON.parse(text) : text || undefined) as T;
    const etag = res.headers.get("etag");
    if (this.kept && etag && spec.method === "GET") {
      this.kept.delete(target);
      this.kept.set(target, { etag, value });
      const max = typeof this.options.cache === "object" ? this.options.cache.maxEntries : 1000;
      if (this.kept.size > max) this.kept.delete(this.kept.keys().next().value!);
    }
    return value;
  }

  /** A paged list: `await` it for the first page, `for await` it for every item (one page held at a time). */
  paged<T>(spec: Spec, query?: object, options?: RequestOptions): Paged<T> {
    return new Paged<T>(this, spec, spec.path + queryString(query), options);
  }

  /** An NDJSON answer, one parsed value per line, read as it arrives. */
  async *lines<T>(spec: Spec, query?: object, options?: RequestOptions): AsyncGenerator<T> {
    const res = await this.send(spec, spec.path + queryString(query), undefined, { ...options, headers: { accept: "application/x-ndjson", ...options?.headers } });
    const decoder = new TextDecoder();
    let rest = "";
    // A reader rather than `for await` over the body: not every browser's streams are async iterable.
    const reader = res.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const lines = (rest + decoder.decode(value, { stream: true })).split("\n");
        rest = lines.pop()!;
        for (const line of lines) if (line.trim()) yield JSON.parse(line) as T;
      }
      rest += decoder.decode();
      if (rest.trim()) yield JSON.parse(rest) as T;
    } finally {
      // A loop left early does not leave the answer's connection open.
      await reader.cancel().catch(() => undefined);
    }
  }
}

/** One page of a list: its items and X-Total-Count (items across all pages) when the API says. */
export interface Page<T> {
  items: T[];
  total?: number;
}

/** A paged list: thenable (its first page's items) and async iterable (every item, page after page). */
export class Paged<T> implements AsyncIterable<T>, PromiseLike<T[]> {
  constructor(
    private readonly client: Client,
    private readonly spec: Spec,
    private readonly target: string,
    private readonly options?: RequestOptions,
  ) {}

  then<A = T[], B = never>(ok?: ((items: T[]) => A | PromiseLike<A>) | null, fail?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.pages().next().then((r) => (r.done ? [] : r.value.items)).then(ok, fail);
  }

  /** Page after page, following Link rel="next" until there is none. */
  async *pages(): AsyncGenerator<Page<T>> {
    for (let target: string | undefined = this.target; target; ) {
      const res = await this.client.send(this.spec, target, undefined, this.options);
      const total = res.headers.get("x-total-count");
      yield { items: (await res.json()) as T[], total: total === null ? undefined : Number(total) };
      const next = nextLink(res.headers.get("link"));
      target = next && next.startsWith("http") ? next.slice(new URL(next).origin.length) : next;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for await (const page of this.pages()) yield* page.items;
  }
}
