import { ERROR_CODES, type ErrorCode } from "@analytics/errors";
import { eventually } from "@analytics/testing";
import { checkResponse, client, E2E_ADMIN_TOKEN, type OpenApiDocument, platformForFile, signUp } from "./harness";

describe("response contract (item 6): every answer the e2e client receives is checked against the served document", () => {
  const platform = platformForFile();
  const documentOf = async () => (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as OpenApiDocument;

  it("accepts what the server sends, error answers included, and refuses a drifted body or an undocumented status", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    expect((await api("POST", "/v2/api/products/batch", [{ key: "C-1", sku: "C-1" }, { sku: "no key" }])).status).toBe(201);
    expect((await api("GET", "/v2/api/products?pageSize=10")).status).toBe(200);
    expect((await client(platform.baseUrl)("GET", "/v2/api/products")).status).toBe(401);
    expect((await api("PUT", "/v2/api/products", [{ key: "nope", productName: 1 }])).status).toBe(400);
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as OpenApiDocument;
    const json = "application/json; charset=utf-8";
    expect(() => checkResponse(doc, "GET", "/v2/api/products?pageSize=1", 200, [{ id: 42 }], json)).toThrow(/contract: GET \/v2\/api\/products 200/);
    expect(() => checkResponse(doc, "GET", "/v2/api/products", 401, { statusCode: "401" }, json)).toThrow(/contract/);
    expect(() => checkResponse(doc, "GET", "/v2/api/products", 418, {}, json)).toThrow(/not documented/);
    expect(() => checkResponse(doc, "GET", "/v2/api/products", 200, [], json)).not.toThrow();
  });

  it("says what every error is (issue 49 item 5): each refusal of the framework and each status class carries its code", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Codes");
    const admin = client(platform.baseUrl, E2E_ADMIN_TOKEN);
    const bearer = { authorization: `Bearer ${acme.token}` };
    // Answers the e2e client cannot send (a broken body, another media type): each checked against the document too.
    const raw = async (method: string, path: string, body: string, headers: Record<string, string>) => {
      const res = await fetch(platform.baseUrl + path, { method, headers: { ...bearer, ...headers }, body });
      const parsed = JSON.parse(await res.text());
      checkResponse(await documentOf(), method, path, res.status, parsed, res.headers.get("content-type"));
      return { status: res.status, body: parsed };
    };
    const json = { "content-type": "application/json" };
    const sale = { externalTransactionID: "T-1", channel: 1, type: 1, currencyCode: "SEK", createdDate: "2026-03-01T12:00:00Z", items: [{ externalID: "1", key: "SKU-1", quantity: 1, type: 1 }] };
    expect((await acme.api("POST", "/v2/api/transactions", [sale])).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }])).status).toBe(201);
    const deep = (levels: number): unknown => (levels === 0 ? 1 : { a: deep(levels - 1) });
    const answers: [string, Promise<{ status: number; body: any }>, number, ErrorCode][] = [
      ["a field that is wrong", acme.api("GET", "/v2/api/products?page=0"), 400, "validation_failed"],
      ["a body that is not JSON", raw("POST", "/v2/api/warehouses", "[{", json), 400, "validation_failed"],
      ["a body nested too deep", raw("POST", "/v2/api/warehouses", JSON.stringify([deep(40)]), json), 400, "validation_failed"],
      ["a query parameter the route does not take", acme.api("GET", "/v2/api/products?pagesize=5"), 400, "unknown_field"],
      ["a body field the route does not take", admin("PUT", `/admin/v1/accounts/${acme.accountID}/settings`, { timezone: "UTC", nope: 1 }), 400, "unknown_field"],
      ["no token", client(platform.baseUrl)("GET", "/v2/api/products"), 401, "unauthenticated"],
      ["no such route", acme.api("GET", "/v2/api/nothing-here"), 404, "not_found"],
      ["no such resource (the service's answer)", acme.api("GET", "/v2/api/warehouses/NOPE"), 404, "not_found"],
      ["a method the path does not have", acme.api("PATCH", "/v2/api/products"), 405, "method_not_allowed"],
      ["a conflict (the service's answer)", acme.api("POST", "/v2/api/transactions", [sale]), 409, "conflict"],
      ["If-Match naming an old ETag", acme.api("PUT", "/v2/api/warehouses/W1", { name: "Main" }, { "if-match": '"0-old"' }), 412, "precondition_failed"],
      ["a body over 10 MiB", raw("POST", "/v2/api/warehouses", `[${" ".repeat(10 * 1024 * 1024)}]`, json), 413, "payload_too_large"],
      ["a path parameter over the router's limit", acme.api("GET", `/v2/api/warehouses/${"w".repeat(6_000)}`), 414, "uri_too_long"],
      ["a body that is not JSON by its type", raw("POST", "/v2/api/warehouses", "W1", { "content-type": "text/plain" }), 415, "unsupported_media_type"],
    ];
    const seen = await Promise.all(answers.map(async ([what, answer]) => [what, (await answer).status, (await answer).body.code]));
    expect(seen).toEqual(answers.map(([what, , status, code]) => [what, status, code]));

    // The Idempotency-Key of another request, then a rate limit spent: their own codes.
    const key = { "idempotency-key": "codes-1" };
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W2", name: "Two" }], key)).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W3", name: "Three" }], key)).body.code).toBe("idempotency_key_reused");
    expect((await admin("PUT", `/admin/v1/accounts/${acme.accountID}/settings`, { rateLimitPerSecond: 1, rateLimitBurst: 1 })).status).toBe(200);
    const limited = await eventually(async () => {
      const res = await acme.api("GET", "/v2/api/warehouses");
      return res.status === 429 && res;
    }, 15_000, "a 429 once the account's limit is 1 a second");
    expect(limited.body.code).toBe("rate_limited");
    for (const [, , status, code] of answers) expect(ERROR_CODES[code].status).toBe(status);
  });
});
