import { databaseForFile } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt } from "./services";
import { countingInventory } from "./counting-inventory";

const admin = { authorization: `Bearer ${ADMIN}` };

describe("conditional requests on single resources (ETag, If-None-Match, If-Match)", () => {
  const database = databaseForFile();
  let inventory: Awaited<ReturnType<typeof countingInventory>>;
  let gw: Gateway;
  let auth: { authorization: string };

  beforeAll(async () => {
    inventory = await countingInventory();
    gw = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url } }));
    const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    const token = (await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey } })).json().accessToken;
    auth = { authorization: `Bearer ${token}` };
  });
  afterAll(async () => {
    await gw?.close();
    await inventory?.close();
  });
  beforeEach(() => {
    inventory.stored = { externalId: "W1", name: "Main" };
    inventory.writes = 0;
  });

  const get = (headers: Record<string, string> = {}) => gw.app.inject({ method: "GET", url: "/v2/api/warehouses/W1", headers: { ...auth, ...headers } });
  const put = (name: string, headers: Record<string, string> = {}) => gw.app.inject({ method: "PUT", url: "/v2/api/warehouses/W1", headers: { ...auth, ...headers }, payload: { name } });

  it("answers a strong ETag that changes with the resource, and 304 without a body for a current If-None-Match", async () => {
    const first = await get();
    const tag = first.headers.etag as string;
    expect(first.statusCode).toBe(200);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    const again = await get({ "if-none-match": tag });
    expect([again.statusCode, again.body, again.headers.etag]).toEqual([304, "", tag]);
    expect((await get({ "if-none-match": `"other", W/${tag}` })).statusCode).toBe(304);
    inventory.stored = { externalId: "W1", name: "Renamed" };
    const changed = await get({ "if-none-match": tag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
  });

  it("does a PUT with the current If-Match, and answers 412 for a stale one without changing anything", async () => {
    const tag = (await get()).headers.etag as string;
    const done = await put("Second", { "if-match": tag });
    expect([done.statusCode, done.json().name]).toEqual([200, "Second"]);
    const stale = await put("Third", { "if-match": tag });
    expect([stale.statusCode, stale.json().details]).toEqual([412, [{ path: "If-Match", message: "is not the resource's current ETag" }]]);
    expect(stale.headers.etag).toBe((await get()).headers.etag);
    expect([inventory.writes, inventory.stored?.name]).toEqual([1, "Second"]);
  });

  it("refuses a DELETE with a stale If-Match (412) and does one with the current tag or *", async () => {
    const tag = (await get()).headers.etag as string;
    inventory.stored = { externalId: "W1", name: "Changed by someone else" };
    const stale = await gw.app.inject({ method: "DELETE", url: "/v2/api/warehouses/W1", headers: { ...auth, "if-match": tag } });
    expect(stale.statusCode).toBe(412);
    expect(inventory.stored).toBeDefined();
    const any = await gw.app.inject({ method: "DELETE", url: "/v2/api/warehouses/W1", headers: { ...auth, "if-match": "*" } });
    expect(any.statusCode).toBe(200);
    const gone = await gw.app.inject({ method: "DELETE", url: "/v2/api/warehouses/W1", headers: { ...auth, "if-match": "*" } });
    expect(gone.statusCode).toBe(412);
    expect(inventory.writes).toBe(1);
  });

  it("answers 412 to any listed If-Match on a resource with no GET of its own (no ETag of it is served), before its service is called; * lets the write run", async () => {
    // Pricing and events are unreachable here (port 9): a write that runs answers 503.
    const fxRate = { externalReference: "EURSEK", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.2, fromDate: "2026-01-01" };
    const writes = [
      { method: "PUT" as const, url: "/v2/api/fxrates/1", payload: fxRate },
      { method: "DELETE" as const, url: "/v2/api/fxrates/1" },
      { method: "PUT" as const, url: "/v2/api/events/e1", payload: { payload: { key: "K1" } } },
    ];
    for (const write of writes) {
      const stale = await gw.app.inject({ ...write, headers: { ...auth, "if-match": '"1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", W/"x"' } });
      expect([write.url, stale.statusCode, stale.json().details]).toEqual([write.url, 412, [{ path: "If-Match", message: "names no ETag this resource has" }]]);
      expect([write.url, (await gw.app.inject({ ...write, headers: { ...auth, "if-match": "*" } })).statusCode]).toEqual([write.url, 503]);
      expect([write.url, (await gw.app.inject({ ...write, headers: auth })).statusCode]).toEqual([write.url, 503]);
    }
    const document = (await gw.app.inject({ method: "GET", url: "/v2/api/openapi.json" })).json();
    const ifMatchOf = (path: string, method: string) => document.paths[path][method].parameters.find((p: { $ref?: string }) => p.$ref?.includes("IfMatch"))?.$ref;
    expect([ifMatchOf("/v2/api/fxrates/{id}", "put"), ifMatchOf("/v2/api/fxrates/{id}", "delete"), ifMatchOf("/v2/api/events/{id}", "put")]).toEqual(
      Array(3).fill("#/components/parameters/IfMatchUntagged"),
    );
    expect(ifMatchOf("/v2/api/warehouses/{externalWarehouseID}", "put")).toBe("#/components/parameters/IfMatch");
    const untagged = Object.entries(document.paths as Record<string, Record<string, { parameters: { $ref?: string }[] }>>).flatMap(([path, ops]) =>
      Object.entries(ops).filter(([, op]) => op.parameters.some((p) => p.$ref === "#/components/parameters/IfMatchUntagged")).map(([method]) => `${method} ${path}`),
    );
    expect(untagged.sort()).toEqual(["delete /v2/api/fxrates/{id}", "put /v2/api/events/{id}", "put /v2/api/fxrates/{id}"]);
  });

  it("changes nothing for a client that sends no condition", async () => {
    expect((await put("Plain")).statusCode).toBe(200);
    expect(inventory.writes).toBe(1);
  });
});
