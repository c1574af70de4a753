import type { InjectOptions } from "fastify";
import { fieldPath } from "../src/http/validation";
import { gatewayForFile } from "./document";
import { TEST_ADMIN_TOKEN as ADMIN } from "./gateway-deps";
import { noServiceReady } from "./services";

const admin = { authorization: `Bearer ${ADMIN}` };

describe("gateway edge (real Postgres; services not running)", () => {
  // Nothing listens at the services' URLs: routes that reach a service answer 503, readiness says not ready.
  const edge = gatewayForFile();

  const inject = (opts: InjectOptions) => edge.gw.app.inject(opts);
  async function newAccount(name = "Acme") {
    const res = await inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name } });
    expect(res.statusCode).toBe(201);
    return res.json() as { accountID: string; apiKeyId: string; apiKey: string; name: string };
  }
  async function tokenFor(accountID: string, apiKey: string, ip = "10.0.0.1") {
    return inject({ method: "POST", url: "/v2/api/auth", payload: { accountID, apiKey }, remoteAddress: ip });
  }

  it("issues a bearer token for a valid account and key", async () => {
    const acct = await newAccount();
    expect(acct.apiKey.startsWith(acct.apiKeyId + ".")).toBe(true);
    const res = await tokenFor(acct.accountID, acct.apiKey);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ tokenType: "Bearer", expiresIn: 3600 });
    const stored = await edge.gw.db("api_keys").where({ id: acct.apiKeyId }).first();
    expect(stored.secret_hash).not.toContain(acct.apiKey.split(".")[1]);
  });

  it("answers the same 401 for an unknown account, unknown key and wrong secret", async () => {
    const acct = await newAccount();
    const wrongSecret = await tokenFor(acct.accountID, acct.apiKeyId + ".nope", "10.0.1.1");
    const unknownAccount = await tokenFor("3f1e0a52-3a4c-4e57-9f57-0c1a2b3c4d5e", acct.apiKey, "10.0.1.2");
    const garbage = await tokenFor("not-a-uuid", "garbage", "10.0.1.3");
    for (const r of [wrongSecret, unknownAccount, garbage]) {
      expect(r.statusCode).toBe(401);
      expect(r.json()).toEqual({ statusCode: 401, error: "Unauthorized", message: "wrong account id or API key", code: "unauthenticated" });
    }
  });

  it("brakes brute force with 429 and Retry-After, per address and per (address, account), never per account alone", async () => {
    const acct = await newAccount();
    for (let i = 0; i < 3; i++) expect((await tokenFor(acct.accountID, acct.apiKeyId + ".bad", "10.9.9.9")).statusCode).toBe(401);
    const blocked = await tokenFor(acct.accountID, acct.apiKey, "10.9.9.9");
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers["retry-after"])).toBeGreaterThan(0);
    // No lock-out by strangers: the right key from an address that is not braked gets its token.
    expect((await tokenFor(acct.accountID, acct.apiKey, "10.9.9.10")).statusCode).toBe(200);
    // The braked address may still sign in to another account (3 failures < 5 x 3 for the address).
    const second = await newAccount();
    expect((await tokenFor(second.accountID, second.apiKey, "10.9.9.9")).statusCode).toBe(200);
    // An address that fails on many accounts is braked for all of them.
    for (let i = 0; i < 15; i++) await tokenFor((await newAccount()).accountID, "x.y", "10.7.7.7");
    expect((await tokenFor(second.accountID, second.apiKey, "10.7.7.7")).statusCode).toBe(429);
    // A forged X-Forwarded-For does not buy a fresh address (no trusted proxy configured).
    const other = await newAccount();
    for (let i = 0; i < 3; i++) await tokenFor(other.accountID, other.apiKeyId + ".bad", "10.8.8.8");
    const forged = await inject({
      method: "POST",
      url: "/v2/api/auth",
      payload: { accountID: other.accountID, apiKey: other.apiKey },
      remoteAddress: "10.8.8.8",
      headers: { "x-forwarded-for": "1.2.3.4" },
    });
    expect(forged.statusCode).toBe(429);
  });

  it("refuses missing, malformed and expired tokens, and tokens of revoked keys at once", async () => {
    const acct = await newAccount();
    const token = (await tokenFor(acct.accountID, acct.apiKey, "10.0.2.1")).json().accessToken as string;
    for (const authorization of [undefined, "Bearer", "Basic abc", `Bearer ${token}x`]) {
      const res = await inject({ method: "GET", url: "/v2/api/events", headers: authorization ? { authorization } : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe("Unauthorized");
    }
    // A valid token reaches the (absent) events service: 503, not 401.
    expect((await inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(503);
    const revoke = await inject({ method: "DELETE", url: `/admin/v1/accounts/${acct.accountID}/keys/${acct.apiKeyId}`, headers: admin });
    expect(revoke.json()).toEqual({ statusCode: 200, error: "", message: "revoked" });
    expect((await inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(401);
    expect((await tokenFor(acct.accountID, acct.apiKey, "10.0.2.2")).statusCode).toBe(401);
  });

  it("rejects an expired token", async () => {
    const { TokenIssuer } = await import("../src/accounts/tokens");
    const acct = await newAccount();
    const issuer = new TokenIssuer("j".repeat(40), -10 as number);
    const expired = await issuer.issue({ accountId: acct.accountID, apiKeyId: acct.apiKeyId });
    expect((await inject({ method: "GET", url: "/v2/api/events", headers: { authorization: `Bearer ${expired}` } })).statusCode).toBe(401);
  });

  it("stops a token at its expiry also after it was verified (and remembered) while valid", async () => {
    const { TokenIssuer } = await import("../src/accounts/tokens");
    let now = Date.now();
    const issuer = new TokenIssuer("j".repeat(40), 60, () => now);
    const token = await issuer.issue({ accountId: "a", apiKeyId: "k" });
    expect(await issuer.verify(token)).toEqual({ accountId: "a", apiKeyId: "k" });
    now += 59_000;
    expect(await issuer.verify(token)).toEqual({ accountId: "a", apiKeyId: "k" });
    now += 2_000;
    expect(await issuer.verify(token)).toBeUndefined();
    expect(await issuer.verify(`${token}x`)).toBeUndefined();
  });

  it("serves the admin API only with the admin token: extra keys, revocation, settings", async () => {
    expect((await inject({ method: "POST", url: "/admin/v1/accounts", payload: { name: "x" } })).statusCode).toBe(401);
    expect((await inject({ method: "POST", url: "/admin/v1/accounts", headers: { authorization: "Bearer wrong" }, payload: { name: "x" } })).statusCode).toBe(401);
    const acct = await newAccount();
    const key = await inject({ method: "POST", url: `/admin/v1/accounts/${acct.accountID}/keys`, headers: admin, payload: { name: "erp" } });
    expect(key.statusCode).toBe(201);
    expect((await tokenFor(acct.accountID, key.json().apiKey, "10.0.3.1")).statusCode).toBe(200);
    expect((await inject({ method: "POST", url: `/admin/v1/accounts/3f1e0a52-3a4c-4e57-9f57-0c1a2b3c4d5e/keys`, headers: admin, payload: { name: "erp" } })).statusCode).toBe(404);
    expect((await inject({ method: "DELETE", url: `/admin/v1/accounts/${acct.accountID}/keys/nope`, headers: admin })).statusCode).toBe(404);
    const settings = await inject({
      method: "PUT",
      url: `/admin/v1/accounts/${acct.accountID}/settings`,
      headers: admin,
      payload: { customPriceFields: ["outlet", "campaign"], timezone: "Europe/Stockholm" },
    });
    expect(settings.statusCode).toBe(200);
    expect(settings.json()).toEqual({ customPriceFields: ["outlet", "campaign"], timezone: "Europe/Stockholm", salesPlanGrowth: 0, rateLimitPerSecond: 100, rateLimitBurst: 6000 });
    const bad = await inject({ method: "PUT", url: `/admin/v1/accounts/${acct.accountID}/settings`, headers: admin, payload: { timezone: "Mars/Olympus" } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details).toEqual([{ path: "timezone", message: expect.stringMatching(/IANA/) }]);
  });

  it("applies the conventions: 400 with details, unknown fields, 404, 413, 415, old paths", async () => {
    const unknownField = await inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: "a", apiKey: "b", extra: 1 } });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json().details).toEqual([{ path: "(root)", message: "unknown field(s): extra" }]);
    const missing = await inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: "a" } });
    expect(missing.json().details[0].path).toBe("apiKey");
    const notJson = await inject({ method: "POST", url: "/v2/api/auth", headers: { "content-type": "application/json" }, payload: "{oops" });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ error: "Bad Request", message: "request body is not valid JSON" });
    const wrongType = await inject({ method: "POST", url: "/v2/api/auth", headers: { "content-type": "text/plain" }, payload: "hello" });
    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.json().error).toBe("Unsupported Media Type");
    const tooBig = await inject({
      method: "POST",
      url: "/v2/api/auth",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ accountID: "a", apiKey: "x".repeat(11 * 1024 * 1024) }),
    });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json().error).toBe("Payload Too Large");
    for (const url of ["/auth", "/v1/auth", "/v3/api/auth", "/v1/events", "/events"]) {
      const res = await inject({ method: "POST", url, payload: {} });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe("Not Found");
    }
  });

  it("checks page and pageSize before calling a service", async () => {
    const acct = await newAccount();
    const token = (await tokenFor(acct.accountID, acct.apiKey, "10.0.4.1")).json().accessToken;
    // Only digits make a number: zod's coercion took hex, exponents, a sign, spaces and nothing.
    for (const q of ["page=0", "pageSize=0", "pageSize=1001", "page=x", "status=done", "page=0x10", "pageSize=1e1", "pageSize=%2B5", "page=%205", "page=", "pageSize=1.0"]) {
      const res = await inject({ method: "GET", url: `/v2/api/events?${q}`, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(400);
      expect(res.json().details[0].path).toBe(q.split("=")[0]);
    }
  });

  it("answers a batch per item when the service behind it is down, so nothing is silently lost", async () => {
    const acct = await newAccount();
    const token = (await tokenFor(acct.accountID, acct.apiKey, "10.0.5.1")).json().accessToken;
    const headers = { authorization: `Bearer ${token}` };
    const put = await inject({ method: "PUT", url: "/v2/api/products", headers, payload: [{ key: "A", color: "x" }, { color: "no key" }] });
    expect(put.statusCode).toBe(503);
    expect(put.json()).toEqual([
      { reference: "A", referenceField: "key", statusCode: 503, message: "a service is unavailable, try again" },
      { reference: "", referenceField: "key", statusCode: 400, message: expect.stringContaining("key") },
    ]);
    const batch = await inject({ method: "POST", url: "/v2/api/products/batch", headers, payload: [{ key: "A" }] });
    expect(batch.statusCode).toBe(503);
    expect(batch.json()[0]).toMatchObject({ reference: "A", statusCode: 503 });
  });

  it("echoes an overlong key in a batch answer only as long as a valid key", async () => {
    const acct = await newAccount();
    const token = (await tokenFor(acct.accountID, acct.apiKey, "10.0.5.2")).json().accessToken;
    const key = "k".repeat(100_000);
    const headers = { authorization: `Bearer ${token}` };
    const orders = await inject({ method: "POST", url: "/v2/api/purchaseorders/batch", headers, payload: [{ externalPONo: key }, { externalPONo: key }] });
    expect(orders.json().map((r: { reference: string; statusCode: number }) => [r.reference, r.statusCode])).toEqual([
      [key.slice(0, 500), 400],
      [key.slice(0, 500), 400],
    ]);
    // The products batch names the key in its message.
    const products = await inject({ method: "POST", url: "/v2/api/products/batch", headers, payload: [{ key }] });
    expect(products.json()[0][0].statusCode).toBe(400);
    expect(products.json()[0][0].message.length).toBeLessThan(1000);
  });

  it("reports health, readiness and the OpenAPI document without a token", async () => {
    // No service runs here: alive, ready (its database answers), and /healthz says which are down.
    expect((await inject({ method: "GET", url: "/healthz" })).json()).toEqual({ status: "ok", checks: noServiceReady(true) });
    const ready = await inject({ method: "GET", url: "/readyz" });
    expect([ready.statusCode, ready.json()]).toEqual([200, { status: "ready", checks: { database: true } }]);
    const doc = (await inject({ method: "GET", url: "/v2/api/openapi.json" })).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/v2/api/auth",
        "/v2/api/events",
        "/v2/api/events/batch",
        "/v2/api/events/{id}",
        "/v2/api/products",
        "/v2/api/products/batch",
        "/v2/api/products/example",
        "/v2/api/products/keyswitch",
        "/v2/api/products/imageupload",
        "/v2/api/products/imageupload/batch",
        "/v2/api/images/{sha256}",
        "/v2/api/brands",
        "/v2/api/brands/{ID}",
        "/v2/api/categories",
        "/v2/api/categories/{ID}",
        "/v2/api/mappingtables",
        "/v2/api/mappingtables/{mappingField}",
      ]),
    );
    expect(Object.keys(doc.paths["/v2/api/mappingtables/{mappingField}"]).sort()).toEqual(["delete", "get", "post", "put"]);
    expect(doc.paths["/v2/api/products"].put.requestBody).toBeDefined();
    expect(doc.paths["/v2/api/products"].get.responses["200"].content["application/json"].schema.items).toEqual({ $ref: "#/components/schemas/Product" });
    expect(doc.components.schemas.Product.properties).toHaveProperty("costCalculationValues");
    // Every reference resolves inside the document.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(doc.components.schemas).toHaveProperty([ref]);
    const { Validator } = await import("@seriousme/openapi-schema-validator");
    const validation = await new Validator().validate(doc);
    expect(validation.errors).toBeUndefined();
    expect(validation.valid).toBe(true);
    const list = doc.paths["/v2/api/events"].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(["page", "pageSize", "event_type", "status"]);
    expect(list.responses["200"].headers).toHaveProperty("X-Total-Count");
    const docs = await inject({ method: "GET", url: "/docs/" });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toMatch(/swagger/i);
  });
});

describe("edge helpers", () => {
  it("writes zod paths as clients write them", () => {
    expect(fieldPath([3, "items", 0, "sku"])).toBe("[3].items[0].sku");
    expect(fieldPath(["deliveries", 1, "quantity"])).toBe("deliveries[1].quantity");
    expect(fieldPath([])).toBe("(root)");
  });
});
