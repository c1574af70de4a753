import { checkResponse, client, E2E_ADMIN_TOKEN, type OpenApiDocument, platformForFile, signUp } from "./harness";

describe("response contract (item 6): every answer the e2e client receives is checked against the served document", () => {
  const platform = platformForFile();

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
});
