import { imageCapabilities, imageUrlKey } from "@analytics/auth";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import pino from "pino";
import { Registry } from "prom-client";
import { gatewayForFile, TEST_ADMIN_TOKEN, testGateway } from "./document";

describe("HTTP behaviour of the edge", () => {
  const h = gatewayForFile();

  it("answers a wrong method on a known path with 405, Allow and a GeneralResponse (item 10)", async () => {
    const res = await h.gw.app.inject({ method: "DELETE", url: "/v2/api/products?x=1" });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe("GET, HEAD, POST, PUT");
    expect(res.json()).toMatchObject({ statusCode: 405, error: "Method Not Allowed", message: expect.stringContaining("DELETE") });
    const param = await h.gw.app.inject({ method: "POST", url: "/v2/api/events/some-id" });
    expect(param.statusCode).toBe(405);
    expect(param.headers.allow).toBe("PUT");
    const unknown = await h.gw.app.inject({ method: "GET", url: "/v2/api/nothing-here" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();
  });

  it("refuses what no route can store with a 400 naming where it is: nesting beyond 32 levels, lone surrogates in values and names", async () => {
    const post = async (body: unknown) => {
      const res = await h.gw.app.inject({
        method: "POST",
        url: "/admin/v1/accounts",
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" },
        payload: JSON.stringify(body),
      });
      return { status: res.statusCode, message: res.json().message as string };
    };
    const deep = (levels: number): unknown => (levels === 0 ? 1 : { a: deep(levels - 1) });
    expect(await post({ name: "x", extra: deep(32) })).toEqual({ status: 400, message: `invalid body: extra${".a".repeat(31)}: nested deeper than 32 levels` });
    expect((await post({ name: "x", extra: deep(31) })).message).not.toContain("nested deeper");
    expect(await post({ name: "x", tags: ["ok", "x\ud800"] })).toEqual({ status: 400, message: "invalid body: tags[1]: contains a lone UTF-16 surrogate (not valid Unicode)" });
    expect(await post({ name: "x", nested: [{ ["k\udc00"]: 1 }] })).toEqual({ status: 400, message: "invalid body: nested[0]: has a field name with a lone UTF-16 surrogate" });
    // A surrogate pair is one well-formed character.
    expect((await post({ name: "Acme 😀" })).status).toBe(201);
  });

  it("refuses a body too wide before parsing it, a 400 naming the limit: over 1,000,000 fields in all, an object over 10,000 keys (a mapping table's values: 100,000)", async () => {
    const post = async (url: string, payload: string, authorization = `Bearer ${TEST_ADMIN_TOKEN}`, method: "POST" | "PUT" = "POST") => {
      const res = await h.gw.app.inject({ method, url, headers: { authorization, "content-type": "application/json" }, payload });
      return { status: res.statusCode, message: res.json().message as string };
    };
    const accounts = "/admin/v1/accounts";
    // {"name":"x","extra":[0,0,...]}: two keys and n elements.
    const withElements = (n: number) => `{"name":"x","extra":[${"0,".repeat(n - 1)}0]}`;
    expect(await post(accounts, withElements(999_999))).toEqual({ status: 400, message: "invalid body: (root): has more than 1000000 fields (object keys and array elements together); send fewer in one request" });
    expect((await post(accounts, withElements(999_998))).message).not.toContain("fields");
    const wide = (keys: number) => JSON.stringify(Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, i])));
    expect(await post(accounts, `{"name":"x","extra":[{"a":${wide(10_001)}}]}`)).toEqual({ status: 400, message: "invalid body: extra[0].a: has more than 10000 fields" });
    expect((await post(accounts, `{"name":"x","extra":[{"a":${wide(10_000)}}]}`)).message).not.toContain("fields");
    // Keys are counted whatever they hold, escaped quotes and all; values are not keys.
    expect((await post(accounts, `{"name":"x","extra":${wide(10_000).replace('"k0"', '"k\\"0"')}}`)).message).not.toContain("more than");
    expect((await post(accounts, `{"name":"x","extra":[${'"a","b",'.repeat(6_000)}1]}`)).message).not.toContain("more than");

    const created = (await h.gw.app.inject({ method: "POST", url: accounts, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, payload: { name: "Acme" } })).json();
    const token = (await h.gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey } })).json().accessToken;
    const mapping = (values: number) => post("/v2/api/mappingtables/color?mappingType=products", `{"mappingValues":${wide(values)}}`.replace(/:(\d+)/g, ':"$1"'), `Bearer ${token}`, "PUT");
    expect(await mapping(100_001)).toEqual({ status: 400, message: "invalid body: mappingValues: has more than 100000 fields" });
    // Taken (the catalogue is not running: 503).
    expect((await mapping(100_000)).status).toBe(503);

    // A free JSON object takes 10,000 fields at any depth: a 400 naming it before anything walks them.
    const product = (fields: number) =>
      post("/v2/api/products", JSON.stringify({ key: "P1", externalAttributes: { a: Array.from({ length: fields - 2 }, (_, i) => i), b: 1 } }), `Bearer ${token}`);
    expect(await product(10_001)).toEqual({ status: 400, message: "invalid body: externalAttributes: has more than 10000 fields (keys and array elements at any depth)" });
    expect((await product(10_000)).status).toBe(503);
  });

  it("refuses a body whose bytes are not UTF-8 (a 400, never text with U+FFFD in their place)", async () => {
    const post = async (payload: Buffer) =>
      (await h.gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" }, payload })).json();
    const withName = (bytes: number[]) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('"}')]);
    expect(await post(withName([0xff, 0xfe, 0xc3]))).toMatchObject({ statusCode: 400, message: "invalid body: not valid UTF-8" });
    expect(await post(withName([0xc0, 0x80]))).toMatchObject({ statusCode: 400, message: "invalid body: not valid UTF-8" });
    expect(await post(withName([...Buffer.from("Åsa ☃")]))).toMatchObject({ name: "Åsa ☃" });
    expect((await post(Buffer.from('{"name":"x","__proto__":{"a":1}}'))).statusCode).toBe(400);
  });

  it("answers a NUL character in a path or query parameter with a 400 naming the parameter", async () => {
    const get = async (url: string) => (await h.gw.app.inject({ method: "GET", url, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).json();
    expect(await get("/admin/v1/accounts/a%00b/settings")).toMatchObject({ statusCode: 400, message: "invalid path: accountID: must be text without NUL characters" });
    expect(await get("/admin/v1/accounts/x/settings?cacheBuster=a%00b")).toMatchObject({ statusCode: 400, message: "invalid query: cacheBuster: must be text without NUL characters" });
  });

  it("names unknown fields without echoing them whole: a name cut at 100 characters, at most 20 of them", async () => {
    const post = async (body: unknown) =>
      (await h.gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" }, payload: JSON.stringify(body) })).json();
    const huge = await post({ name: "x", ["k".repeat(1_000_000)]: 1 });
    expect(huge.message).toBe(`invalid body: (root): unknown field(s): ${"k".repeat(100)}…`);
    const many = await post({ name: "x", ...Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, i])) });
    expect(many.message).toBe(`invalid body: (root): unknown field(s): ${Array.from({ length: 20 }, (_, i) => `f${i}`).join(", ")} and 30 more`);
  });

  it("takes a DELETE without a body although it says Content-Type: application/json (clients that send the header on every call)", async () => {
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const created = await h.gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { ...admin, "content-type": "application/json" }, payload: { name: "Keys" } });
    const { accountID, apiKeyId } = created.json();
    const revoke = (headers: Record<string, string>) => h.gw.app.inject({ method: "DELETE", url: `/admin/v1/accounts/${accountID}/keys/${apiKeyId}`, headers: { ...admin, ...headers } });
    expect((await revoke({ "content-type": "application/json" })).statusCode).toBe(200);
    expect((await revoke({ "content-type": "application/json; charset=utf-8", "content-length": "0" })).statusCode).toBe(200);
    // A body that is there is still read (and one that is no JSON refused).
    const withBody = await h.gw.app.inject({ method: "DELETE", url: `/admin/v1/accounts/${accountID}/keys/${apiKeyId}`, headers: { ...admin, "content-type": "application/json" }, payload: "{" });
    expect(withBody.statusCode).toBe(400);
    // A POST still needs its body.
    const empty = await h.gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { ...admin, "content-type": "application/json" } });
    expect([empty.statusCode, empty.json().message]).toEqual([400, "request body is empty"]);
  });
});


describe("request ids (item 7)", () => {
  const lines: Record<string, unknown>[] = [];
  const h = gatewayForFile({ logger: pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) }) });

  it("answers X-Request-Id, the client's when sane, else a UUID, and logs every line of the request with it", async () => {
    const own = await h.gw.app.inject({ method: "GET", url: "/v2/api/products", headers: { "x-request-id": "client-req-42" } });
    expect(own.statusCode).toBe(401);
    expect(own.headers["x-request-id"]).toBe("client-req-42");
    expect(lines.filter((l) => l.requestId === "client-req-42").map((l) => l.msg)).toContain("request");
    const generated = await h.gw.app.inject({ method: "GET", url: "/healthz" });
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const insane = await h.gw.app.inject({ method: "GET", url: "/healthz", headers: { "x-request-id": "a b<script>" + "x".repeat(200) } });
    expect(insane.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    const missing = await h.gw.app.inject({ method: "POST", url: "/v2/api/nothing" });
    expect(missing.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("compression (item 8)", () => {
  const h = gatewayForFile();

  it("compresses JSON over 1 KiB with br or gzip when accepted, and nothing else", async () => {
    const plain = await h.gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(1024);
    const gz = await h.gw.app.inject({ method: "GET", url: "/v2/api/openapi.json", headers: { "accept-encoding": "gzip" } });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(gz.rawPayload).toString()).toBe(plain.body);
    expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    const br = await h.gw.app.inject({ method: "GET", url: "/v2/api/openapi.json", headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    // Small answers (under 1 KiB) go as they are.
    const small = await h.gw.app.inject({ method: "GET", url: "/healthz", headers: { "accept-encoding": "gzip, br" } });
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(small.json()).toMatchObject({ status: "ok" });
  });
});

describe("CORS (item 9)", () => {
  const origin = "https://app.example.com";
  const preflight = { "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" };

  it("is off by default: no CORS headers, a preflight is no success", async () => {
    const h = await testGateway();
    try {
      const res = await h.gw.app.inject({ method: "GET", url: "/healthz", headers: { origin } });
      expect(res.headers["access-control-allow-origin"]).toBeUndefined();
      const pre = await h.gw.app.inject({ method: "OPTIONS", url: "/v2/api/products/batch", headers: { origin, ...preflight } });
      expect(pre.statusCode).toBeGreaterThanOrEqual(400);
      expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await h.close();
    }
  });

  it("allows the CORS_ORIGINS list only, and answers preflights", async () => {
    const h = await testGateway({ corsOrigins: [origin] });
    try {
      const pre = await h.gw.app.inject({ method: "OPTIONS", url: "/v2/api/products/batch", headers: { origin, ...preflight } });
      expect(pre.statusCode).toBe(204);
      expect(pre.headers["access-control-allow-origin"]).toBe(origin);
      expect(pre.headers["access-control-allow-methods"]).toContain("POST");
      expect(String(pre.headers["access-control-allow-headers"]).toLowerCase()).toContain("authorization");
      const res = await h.gw.app.inject({ method: "GET", url: "/v2/api/products", headers: { origin } });
      expect(res.headers["access-control-allow-origin"]).toBe(origin);
      expect(res.headers["access-control-expose-headers"]).toContain("X-Total-Count");
      // Conditional requests from a browser: the tag is readable, and sent back in If-None-Match / If-Match.
      expect(res.headers["access-control-expose-headers"]).toContain("ETag");
      expect(String(pre.headers["access-control-allow-headers"])).toEqual(expect.stringContaining("If-None-Match"));
      expect(String(pre.headers["access-control-allow-headers"])).toEqual(expect.stringContaining("If-Match"));
      const stranger = await h.gw.app.inject({ method: "GET", url: "/healthz", headers: { origin: "https://evil.example" } });
      expect(stranger.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});

describe("image capability URLs (item 11)", () => {
  it("sign account and content hash under the server key, absolute under PUBLIC_BASE_URL", () => {
    const sha = "a".repeat(64);
    const account = "658bdcab-5f1f-4989-a0b3-9ba59e456b19";
    const images = imageCapabilities("s".repeat(40), "https://api.example.com");
    const url = images.url(account, `/v2/api/images/${sha}`);
    expect(url).toMatch(new RegExp(`^https://api\\.example\\.com/v2/api/images/${account}/${sha}/[A-Za-z0-9_-]{43}$`));
    const signature = url.split("/").pop()!;
    expect(images.verify(account, sha, signature)).toBe(true);
    expect(images.verify("00000000-0000-4000-8000-000000000000", sha, signature)).toBe(false);
    expect(imageCapabilities("t".repeat(40)).verify(account, sha, signature)).toBe(false);
    expect(imageCapabilities("s".repeat(40)).url(account, `/v2/api/images/${sha}`)).toBe(`/v2/api/images/${account}/${sha}/${signature}`);
    expect(images.url(account, "https://cdn.example.com/x.png")).toBe("https://cdn.example.com/x.png");
    // The key derived from the secret (IMAGE_URL_KEY) signs the same URLs without the secret itself.
    expect(imageUrlKey("s".repeat(40))).toMatch(/^[0-9a-f]{64}$/);
    expect(imageCapabilities({ key: imageUrlKey("s".repeat(40)) }).url(account, `/v2/api/images/${sha}`)).toBe(`/v2/api/images/${account}/${sha}/${signature}`);
    expect(imageCapabilities({ key: imageUrlKey("t".repeat(40)) }).verify(account, sha, signature)).toBe(false);
  });
});

describe("metrics port (METRICS_PORT)", () => {
  const h = gatewayForFile({ metricsPort: 0 });
  // Unset: its own free port on 127.0.0.1, never the public one.
  const unset = gatewayForFile();

  it("serves /metrics on its own port alone: the public port answers it 404", async () => {
    expect((await h.gw.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    expect((await h.gw.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(404);
    const res = await fetch(`${h.gw.metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('http_request_duration_seconds_count{deployable="gateway",method="GET",route="/healthz",status="200"} 1');
    expect(text).toContain('db_pool_max_connections{deployable="gateway"}');
    expect((await fetch(`${h.gw.metricsUrl}/healthz`)).status).toBe(404);
  });

  it("renders once for 32 scrapers at once (its first scrape)", async () => {
    const renders = jest.spyOn(Registry.prototype, "metrics");
    try {
      const answers = await Promise.all(Array.from({ length: 32 }, () => fetch(`${unset.gw.metricsUrl}/metrics`).then((r) => r.text())));
      // One render serves every scraper; a machine stalled over a second between arrivals may render
      // again, never once per scraper (32 without the sharing).
      expect(renders.mock.calls.length).toBeLessThanOrEqual(3);
      expect(new Set(answers).size).toBeLessThanOrEqual(renders.mock.calls.length);
    } finally {
      renders.mockRestore();
    }
  });

  it("without METRICS_PORT still never answers anonymous /metrics on the public port, but on 127.0.0.1", async () => {
    for (const method of ["GET", "HEAD"] as const) expect((await unset.gw.app.inject({ method, url: "/metrics" })).statusCode).toBe(404);
    expect(unset.gw.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${unset.gw.metricsUrl}/metrics`)).text()).toContain('db_pool_max_connections{deployable="gateway"}');
  });
});
