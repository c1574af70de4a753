import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { Analytics, AuthenticationError, BadRequestError, ConflictError, ConnectionError, eventQueue, RateLimitError, ServerError, nextLink, retryAfterMs } from "../src";
import { verify, WebhookVerificationError } from "../src/webhooks";

/**
 * The SDK's runtime against a stub API (node:http): the retry matrix, Retry-After, one
 * Idempotency-Key per write, token renewal, paging, conditional reads, NDJSON, the event queue.
 * Waits are recorded by the client's `sleep`, never slept: no test depends on the clock.
 */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}
type Answer = (req: Seen, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let answers: Answer[] = [];
let auths = 0;
let tokenTtl = 3600;

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (_req, res) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const error = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { statusCode: status, error: "E", message: `failed with ${status}`, code }, { "x-request-id": `req-${status}`, ...headers });

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() };
      if (s.url === "/v2/api/auth") {
        auths++;
        return json(200, { accessToken: `token-${auths}`, tokenType: "Bearer", expiresIn: tokenTtl })(s, res);
      }
      seen.push(s);
      const answer = answers.shift() ?? json(200, { ok: true });
      answer(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

let waits: number[] = [];
const client = (options: Partial<ConstructorParameters<typeof Analytics>[0]> = {}) =>
  new Analytics({ baseUrl, accountID: "acme", apiKey: "key", sleep: async (ms) => void waits.push(ms), ...options });

beforeEach(() => {
  seen = [];
  answers = [];
  waits = [];
  auths = 0;
  tokenTtl = 3600;
});

describe("retries", () => {
  it("does not repeat an admin write (the gateway keeps no Idempotency-Key for it: a repeat would make a second account)", async () => {
    answers = [error(503, "service_unavailable"), json(201, { accountID: "a2" })];
    await expect(new Analytics({ baseUrl, adminToken: "root", sleep: async (ms) => void waits.push(ms) }).admin.createAccount({ name: "Acme" } as never)).rejects.toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
  });

  it("counts an attempt whose answer does not come within timeoutMs as no answer, and retries it with the same key", async () => {
    // The first request is held (never answered); the retry is answered.
    answers = [() => undefined, json(201, [{ statusCode: 201 }])];
    const result = await client({ timeoutMs: 200 }).warehouses.createWarehouses([{ externalId: "W1", name: "Main" }] as never);
    expect(result).toEqual([{ statusCode: 201 }]);
    expect(seen).toHaveLength(2);
    expect(seen[1].headers["idempotency-key"]).toBe(seen[0].headers["idempotency-key"]);
  });

  it("fails an answer whose body stops coming for timeoutMs with a ConnectionError, and does not send the write again", async () => {
    // Headers and half the JSON, then nothing: the connection stays open.
    answers = [(_req, res) => (res.writeHead(201, { "content-type": "application/json" }), res.write('[{"statusCode":'))];
    const failure = await client({ timeoutMs: 200 }).warehouses.createWarehouses([{ externalId: "W1", name: "Main" }] as never).then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(ConnectionError);
    expect((failure as Error).message).toBe("no answer: no bytes of the answer in 200 ms");
    expect(seen).toHaveLength(1);
  });

  it("stops reading when the caller aborts, with the caller's reason (not a ConnectionError)", async () => {
    answers = [(_req, res) => (res.writeHead(200, { "content-type": "application/x-ndjson" }), res.write('{"n":1}\n'))];
    const caller = new AbortController();
    const read: unknown[] = [];
    const failure = await (async () => {
      for await (const line of client({ timeoutMs: 60_000 }).imports.getImportResults("job-1", undefined, { signal: caller.signal })) {
        read.push(line);
        caller.abort(new Error("the caller left"));
      }
    })().then(() => undefined, (e: unknown) => e);
    expect(read).toEqual([{ n: 1 }]);
    expect(failure).not.toBeInstanceOf(ConnectionError);
    expect((failure as Error).message).toBe("the caller left");
  });

  it("reads an answer's body at the reader's pace: only the server's silence counts", async () => {
    // The second line is sent once the reader has taken the first and the clock has moved past
    // timeoutMs three times over (jest's clock, moved by the test: no waiting on the real one),
    // the answer open all that time.
    let sendRest = () => {};
    answers = [(_req, res) => (res.writeHead(200, { "content-type": "application/x-ndjson" }), res.write('{"n":1}\n'), (sendRest = () => res.end('{"n":2}\n')))];
    const read: unknown[] = [];
    jest.useFakeTimers({ doNotFake: ["nextTick", "setImmediate", "queueMicrotask", "hrtime", "performance", "Date"] });
    try {
      for await (const line of client({ timeoutMs: 100 }).imports.getImportResults("job-1")) {
        read.push(line);
        jest.advanceTimersByTime(300);
        sendRest();
      }
    } finally {
      jest.useRealTimers();
    }
    expect(read).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it.each([
    [408, "request_timeout"],
    [409, "idempotency_key_in_use"],
    [429, "rate_limited"],
    [500, "internal"],
    [503, "service_unavailable"],
  ])("retries a %i (%s) and answers the success that follows", async (status, code) => {
    answers = [error(status, code), json(201, [{ statusCode: 201 }])];
    const result = await client().warehouses.createWarehouses([{ externalId: "W1", name: "Main" }] as never);
    expect(result).toEqual([{ statusCode: 201 }]);
    expect(seen).toHaveLength(2);
  });

  it("gives up after 2 retries by default with the typed error of the last answer", async () => {
    answers = [error(503, "service_unavailable"), error(503, "service_unavailable"), error(503, "service_unavailable"), json(200, [])];
    const failure = await client().brands.listBrands().then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(ServerError);
    expect(failure).toMatchObject({ status: 503, code: "service_unavailable", message: "failed with 503", requestId: "req-503" });
    expect(seen).toHaveLength(3);
  });

  it("takes maxRetries from the client and from the call", async () => {
    answers = [error(429, "rate_limited"), json(200, [])];
    await expect(client({ maxRetries: 0 }).brands.listBrands()).rejects.toBeInstanceOf(RateLimitError);
    answers = [error(409, "idempotency_key_in_use"), json(200, [])];
    await expect(client().warehouses.createWarehouses([] as never, { maxRetries: 0 })).rejects.toBeInstanceOf(ConflictError);
  });

  it.each(["conflict", "import_finished"])("never retries a 409 %s: only a key still in use can come right", async (code) => {
    answers = [error(409, code), json(201, [{ statusCode: 201 }])];
    const failure = await client().warehouses.createWarehouses([{ externalId: "W1", name: "Main" }] as never).then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(ConflictError);
    expect(failure).toMatchObject({ status: 409, code, requestId: "req-409" });
    expect(seen).toHaveLength(1);
  });

  it("never retries a 4xx other than 408, 409 and 429; the error carries code, details and request id", async () => {
    answers = [json(400, { statusCode: 400, error: "Bad Request", message: "invalid", code: "validation_failed", details: [{ path: "name", message: "required" }] }, { "x-request-id": "r-1" })];
    const failure = await client().brands.listBrands().then(() => undefined, (e: unknown) => e);
    expect(failure).toBeInstanceOf(BadRequestError);
    expect(failure).toMatchObject({ status: 400, code: "validation_failed", details: [{ path: "name", message: "required" }], requestId: "r-1" });
    expect(seen).toHaveLength(1);
  });

  it("waits Retry-After seconds", async () => {
    answers = [error(503, "service_unavailable", { "retry-after": "7" }), json(200, [])];
    await client().brands.listBrands();
    expect(waits).toEqual([7000]);
  });

  it("waits until a Retry-After HTTP date", async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000);
    answers = [error(429, "rate_limited", { "retry-after": at.toUTCString() }), json(200, [])];
    await client().brands.listBrands();
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(25_000);
    expect(waits[0]).toBeLessThanOrEqual(31_000);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:30 GMT", Date.parse("2026-01-01T00:00:00Z"))).toBe(30_000);
    expect(retryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT")).toBe(0);
    expect(retryAfterMs("soon")).toBeUndefined();
  });

  it("backs off exponentially with jitter when no Retry-After is given", async () => {
    answers = [error(500, "internal"), error(500, "internal"), json(200, [])];
    await client({ retryBaseMs: 1000 }).brands.listBrands();
    expect(waits[0]).toBeGreaterThanOrEqual(500);
    expect(waits[0]).toBeLessThanOrEqual(1000);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[1]).toBeLessThanOrEqual(2000);
  });

  it("retries a connection cut before any answer", async () => {
    answers = [(_req, res) => res.socket!.destroy(), json(200, [{ name: "B" }])];
    expect(await client().brands.listBrands()).toEqual([{ name: "B" }]);
    answers = [(_req, res) => res.socket!.destroy(), (_req, res) => res.socket!.destroy(), (_req, res) => res.socket!.destroy()];
    await expect(client().brands.listBrands()).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe("Idempotency-Key", () => {
  it("is one per write, the same across its retries, and none on a read", async () => {
    answers = [error(503, "x"), error(500, "x"), json(201, []), json(201, []), json(200, [])];
    const api = client();
    await api.warehouses.createWarehouses([] as never);
    await api.warehouses.createWarehouses([] as never);
    await api.brands.listBrands();
    const keys = seen.map((s) => s.headers["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toBe(keys[0]);
    expect(keys[3]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[3]).not.toBe(keys[0]);
    expect(keys[4]).toBeUndefined();
  });

  it("is the caller's when given", async () => {
    await client().stores.deleteStore("S1", { idempotencyKey: "mine" });
    expect(seen[0]).toMatchObject({ method: "DELETE", url: "/v2/api/stores/S1" });
    expect(seen[0].headers["idempotency-key"]).toBe("mine");
  });

  it("a streamed body is sent once: its bytes cannot be sent again", async () => {
    answers = [error(503, "x"), json(202, { id: "i" })];
    const body = new Blob(["{}\n"]).stream();
    await expect(client().imports.createImport(body, { resource: "products" })).rejects.toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
  });
});

describe("authentication", () => {
  it("exchanges the API key once and sends the bearer token", async () => {
    const api = client();
    await api.brands.listBrands();
    await api.brands.listBrands();
    expect(auths).toBe(1);
    expect(seen.map((s) => s.headers.authorization)).toEqual(["Bearer token-1", "Bearer token-1"]);
  });

  it("renews the token before it expires", async () => {
    tokenTtl = 0;
    const api = client();
    await api.brands.listBrands();
    await api.brands.listBrands();
    expect(auths).toBe(2);
    expect(seen.map((s) => s.headers.authorization)).toEqual(["Bearer token-1", "Bearer token-2"]);
  });

  it("renews once on a 401 and sends the request again", async () => {
    answers = [error(401, "unauthenticated"), json(200, [])];
    await client().brands.listBrands();
    expect(auths).toBe(2);
    expect(seen.map((s) => s.headers.authorization)).toEqual(["Bearer token-1", "Bearer token-2"]);
    answers = [error(401, "unauthenticated"), error(401, "unauthenticated"), json(200, [])];
    seen = [];
    await expect(client().brands.listBrands()).rejects.toBeInstanceOf(AuthenticationError);
    expect(seen).toHaveLength(2);
  });

  it("sends the admin token to the Admin operations", async () => {
    await new Analytics({ baseUrl, adminToken: "root" }).admin.getAccountSettings("acme");
    expect(seen[0].headers.authorization).toBe("Bearer root");
    expect(auths).toBe(0);
  });
});

describe("paging", () => {
  const page = (items: number[], next?: string): Answer =>
    json(200, items.map((n) => ({ n })), { "x-total-count": "5", ...(next ? { link: `<${next}>; rel="next", </v2/api/brands?page=1>; rel="first"` } : {}) });

  it("iterates every item page after page, following Link rel=next", async () => {
    answers = [page([1, 2], "/v2/api/brands?page=2&pageSize=2"), page([3, 4], `${baseUrl}/v2/api/brands?page=3&pageSize=2`), page([5])];
    const items: unknown[] = [];
    for await (const item of client().brands.listBrands({ pageSize: 2 })) items.push(item);
    expect(items).toEqual([1, 2, 3, 4, 5].map((n) => ({ n })));
    expect(seen.map((s) => s.url)).toEqual(["/v2/api/brands?pageSize=2", "/v2/api/brands?page=2&pageSize=2", "/v2/api/brands?page=3&pageSize=2"]);
  });

  it("iterates 100,000 items holding one page: the next page is asked for only when the last item is taken", async () => {
    const pages = 100;
    answers = Array.from({ length: pages }, (_, p) => (req: Seen, res: ServerResponse) => {
      const items = Array.from({ length: 1000 }, (_, i) => p * 1000 + i);
      const next: Record<string, string> = p + 1 < pages ? { link: `</v2/api/brands?page=${p + 2}&pageSize=1000>; rel="next"` } : {};
      json(200, items, { "x-total-count": String(pages * 1000), ...next })(req, res);
    });
    let count = 0;
    const wrong: string[] = [];
    for await (const item of client().brands.listBrands({ pageSize: 1000 })) {
      // The page of item n is the only one asked for so far (plain comparisons: 100,000 expects are slow).
      if ((item as unknown) !== count || seen.length !== Math.floor(count / 1000) + 1) wrong.push(`item ${count}: ${String(item)} after ${seen.length} pages`);
      count++;
    }
    expect(wrong.slice(0, 3)).toEqual([]);
    expect(count).toBe(100_000);
  });

  it("awaits the first page alone, and gives each page's total", async () => {
    answers = [page([1, 2], "/v2/api/brands?page=2")];
    expect(await client().brands.listBrands()).toEqual([{ n: 1 }, { n: 2 }]);
    expect(seen).toHaveLength(1);
    answers = [page([1, 2])];
    for await (const p of client().brands.listBrands().pages()) expect(p.total).toBe(5);
  });

  it("reads Link headers", () => {
    expect(nextLink('</a?page=1>; rel="first", </a?page=3>; rel="next"')).toBe("/a?page=3");
    expect(nextLink('</a?page=1>; rel="prev"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
  });
});

describe("conditional reads", () => {
  it("sends If-None-Match with the cache on and answers the kept body on 304", async () => {
    answers = [json(200, { name: "Acme" }, { etag: '"v1"' }), (_req, res) => void res.writeHead(304, { etag: '"v1"' }).end()];
    const api = client({ cache: true });
    const first = await api.brands.getBrand("B1");
    const second = await api.brands.getBrand("B1");
    expect(second).toEqual(first);
    expect(seen[1].headers["if-none-match"]).toBe('"v1"');
  });

  it("sends none with the cache off", async () => {
    answers = [json(200, { name: "Acme" }, { etag: '"v1"' }), json(200, { name: "Acme" }, { etag: '"v1"' })];
    const api = client();
    await api.brands.getBrand("B1");
    await api.brands.getBrand("B1");
    expect(seen[1].headers["if-none-match"]).toBeUndefined();
  });
});

describe("answers", () => {
  it("gives an image's bytes as a Blob", async () => {
    answers = [(_req, res) => void res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff]))];
    const image = await client().products.getImage("abc");
    expect(image).toBeInstanceOf(Blob);
    expect([...new Uint8Array(await image.arrayBuffer())]).toEqual([0x89, 0x50, 0x4e, 0x47, 0xff]);
  });
});

describe("NDJSON answers and the event queue", () => {
  it("streams an import's results line by line", async () => {
    answers = [
      (_req, res) => {
        res.writeHead(200, { "content-type": "application/x-ndjson" });
        res.write('{"line":1,"statusCode":400}\n{"li');
        // The last line without its newline, a multi-byte character split between chunks.
        res.write('ne":2,"statusCode":400}\n{"line":3,"message":"caf');
        res.write(Buffer.from([0xc3]));
        res.end(Buffer.concat([Buffer.from([0xa9]), Buffer.from('"}')]));
      },
    ];
    const lines: unknown[] = [];
    for await (const line of client().imports.getImportResults("job-1")) lines.push(line);
    expect(lines).toEqual([{ line: 1, statusCode: 400 }, { line: 2, statusCode: 400 }, { line: 3, message: "café" }]);
  });

  it("acknowledges each pending entry once the loop asks for the next, a page at a time", async () => {
    const entry = (id: string) => ({ id, eventType: "update_sku", payload: {} });
    answers = [json(200, [entry("e1"), entry("e2")]), json(200, []), json(200, [entry("e3")]), json(200, [])];
    const got: string[] = [];
    for await (const e of eventQueue(client(), { pageSize: 2 })) got.push(e.id);
    expect(got).toEqual(["e1", "e2", "e3"]);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "GET /v2/api/events?status=pending&pageSize=2",
      "PATCH /v2/api/events/batch",
      "GET /v2/api/events?status=pending&pageSize=2",
      "PATCH /v2/api/events/batch",
      "GET /v2/api/events?status=pending&pageSize=2",
    ]);
    expect(JSON.parse(seen[1].body)).toEqual([{ id: "e1", status: "completed" }, { id: "e2", status: "completed" }]);
  });

  it("leaves the entry in hand pending when the loop breaks", async () => {
    answers = [json(200, [{ id: "e1" }, { id: "e2" }]), json(200, [])];
    for await (const e of eventQueue(client())) if (e.id === "e2") break;
    expect(JSON.parse(seen[1].body)).toEqual([{ id: "e1", status: "completed" }]);
  });
});

describe("webhooks.verify", () => {
  const secret = "whsec_" + Buffer.from("a secret of 24 bytes....").toString("base64");
  const other = "whsec_" + Buffer.from("another secret of bytes.").toString("base64");
  const body = JSON.stringify({ id: "e1", type: "update_sku", timestamp: "2026-01-01T00:00:00Z", data: { sku: "A" } });
  const signed = (s: string, at = new Date()) => {
    const signature = new Webhook(s).sign("msg_1", at, body);
    return { "webhook-id": "msg_1", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature };
  };

  it("accepts the reference library's signature and answers the body", () => {
    expect(verify(body, signed(secret), secret)).toEqual(JSON.parse(body));
    expect(verify(Buffer.from(body), new Headers(signed(secret)), secret)).toEqual(JSON.parse(body));
  });

  it("accepts any of several signatures and any of several secrets (rotation)", () => {
    const both = { ...signed(other), "webhook-signature": `${signed(other)["webhook-signature"]} ${signed(secret)["webhook-signature"]}` };
    expect(verify(body, both, secret)).toEqual(JSON.parse(body));
    expect(verify(body, signed(other), [secret, other])).toEqual(JSON.parse(body));
  });

  it("refuses a wrong secret, a changed body, a missing header and an old timestamp", () => {
    expect(() => verify(body, signed(other), secret)).toThrow(WebhookVerificationError);
    expect(() => verify(body.replace("A", "B"), signed(secret), secret)).toThrow(WebhookVerificationError);
    const { "webhook-id": _, ...noId } = signed(secret);
    expect(() => verify(body, noId, secret)).toThrow(WebhookVerificationError);
    const old = signed(secret, new Date(Date.now() - 10 * 60_000));
    expect(() => verify(body, old, secret)).toThrow(/timestamp/);
    expect(verify(body, old, secret, { toleranceSeconds: 3600 })).toEqual(JSON.parse(body));
  });
});
