import zlib, { brotliDecompressSync, gunzipSync } from "node:zlib";
import { acceptedEncoding } from "../src/http/prebuilt";
import { OpenApi } from "../src/http/openapi";
import { gatewayForFile } from "./document";

/** The object of `object`'s prototype chain that holds `name` itself. */
function ownerOf(object: object, name: string): object {
  let owner: object | null = object;
  while (owner && !Object.prototype.hasOwnProperty.call(owner, name)) owner = Object.getPrototypeOf(owner);
  if (!owner) throw new Error(`no ${name}`);
  return owner;
}

describe("the OpenAPI document, served pre-built", () => {
  const h = gatewayForFile();
  const get = (url: string, headers: Record<string, string> = {}) => h.gw.app.inject({ method: "GET", url, headers });

  it("answers each coding with its own strong ETag, 304 on If-None-Match, the same bytes however it travels", async () => {
    const plain = await get("/v2/api/openapi.json");
    expect(plain.statusCode).toBe(200);
    expect(plain.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    expect(plain.headers["cache-control"]).toBe("no-cache");
    const tag = plain.headers.etag as string;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(plain.json().openapi).toBe("3.1.0");

    const gz = await get("/v2/api/openapi.json", { "accept-encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
    const br = await get("/v2/api/openapi.json", { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
    expect(new Set([tag, gz.headers.etag, br.headers.etag]).size).toBe(3);

    for (const [headers, etag] of [
      [{ "if-none-match": tag }, tag],
      [{ "if-none-match": `"other", W/${tag}` }, tag],
      [{ "if-none-match": "*" }, tag],
      [{ "if-none-match": gz.headers.etag as string, "accept-encoding": "gzip" }, gz.headers.etag],
    ] as const) {
      const res = await get("/v2/api/openapi.json", headers);
      expect([res.statusCode, res.rawPayload.length, res.headers.etag]).toEqual([304, 0, etag]);
    }
    // Another coding's tag is another representation: the full answer.
    expect((await get("/v2/api/openapi.json", { "if-none-match": gz.headers.etag as string })).statusCode).toBe(200);
    expect((await get("/v2/api/openapi.json", { "if-none-match": '"stale"' })).statusCode).toBe(200);
  });

  it("serialises and compresses the document once, not per request: 32 clients at once cost no render", async () => {
    // zlib's exports are read-only: its streams' common _transform (what @fastify/compress runs) is watched instead.
    const compressors = new Set([ownerOf(zlib.createGzip(), "_transform"), ownerOf(zlib.createBrotliCompress(), "_transform")]);
    const spies = [jest.spyOn(OpenApi.prototype, "document"), ...[...compressors].map((owner) => jest.spyOn(owner as { _transform(): void }, "_transform"))];
    const stringify = jest.spyOn(JSON, "stringify");
    try {
      const codings = ["identity", "gzip", "br"];
      const answers = await Promise.all(Array.from({ length: 32 }, (_, n) => get(n % 4 === 3 ? "/docs/json" : "/v2/api/openapi.json", { "accept-encoding": codings[n % 3] })));
      expect(answers.map((a) => a.statusCode)).toEqual(Array(32).fill(200));
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
      expect(stringify.mock.calls.filter(([value]) => (value as { openapi?: string } | undefined)?.openapi === "3.1.0")).toEqual([]);
    } finally {
      for (const spy of [...spies, stringify]) spy.mockRestore();
    }
  });

  it("keeps /docs working on the same pre-built document", async () => {
    const plain = await get("/v2/api/openapi.json");
    const ui = await get("/docs/json", { "accept-encoding": "br" });
    expect(ui.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(ui.rawPayload).equals(plain.rawPayload)).toBe(true);
    expect((await get("/docs/json", { "if-none-match": plain.headers.etag as string })).statusCode).toBe(304);
    const yaml = await get("/docs/yaml");
    expect([yaml.statusCode, yaml.headers["content-type"]]).toEqual([200, "application/x-yaml"]);
    expect(yaml.body).toMatch(/^openapi: 3\.1\.0$/m);
    expect(yaml.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    const page = await get("/docs/");
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("swagger-ui");
    expect((await get("/docs/static/swagger-initializer.js")).body).toContain("./json");
  });

  it("reads Accept-Encoding as RFC 9110 does: br before gzip, q=0 refuses, * for the rest", () => {
    expect(acceptedEncoding(undefined)).toBe("identity");
    expect(acceptedEncoding("gzip, deflate, br")).toBe("br");
    expect(acceptedEncoding("br;q=0, gzip;q=0.5")).toBe("gzip");
    expect(acceptedEncoding("GZIP")).toBe("gzip");
    expect(acceptedEncoding("deflate")).toBe("identity");
    expect(acceptedEncoding("*")).toBe("br");
    expect(acceptedEncoding("*;q=0, identity")).toBe("identity");
    expect(acceptedEncoding("gzip;q=0, *")).toBe("br");
  });
});
