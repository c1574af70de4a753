import { randomUUID } from "node:crypto";
import { databaseForFile } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { PIPELINE } from "../src/pipeline/route";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt } from "./services";
import { countingInventory } from "./counting-inventory";
import { countingPlanning } from "./counting-planning";

const admin = { authorization: `Bearer ${ADMIN}` };

/**
 * Every step of the pipeline carries a behaviour: with the step taken out of the list (the
 * gateway built with `pipeline` without it), that behaviour is gone. Each probe says whether its
 * step's behaviour holds on a gateway; with the whole pipeline every probe holds.
 */
describe("the request pipeline: each step is load-bearing", () => {
  const database = databaseForFile();
  let inventory: Awaited<ReturnType<typeof countingInventory>>;
  let planning: Awaited<ReturnType<typeof countingPlanning>>;
  let gw: Gateway;
  let auth: { authorization: string };

  const deps = (overrides = {}) => testGatewayDeps(database.url, { services: { ...allServicesAt(), inventory: inventory.url, planning: planning.url }, ...overrides });
  /** A new account with these rate limits (set through the whole pipeline), and its token. */
  const signUp = async (limits?: { rateLimitPerSecond: number; rateLimitBurst: number }) => {
    const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    if (limits) await gw.app.inject({ method: "PUT", url: `/admin/v1/accounts/${created.accountID}/settings`, headers: admin, payload: limits });
    const token = (await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey } })).json().accessToken;
    return { authorization: `Bearer ${token}` };
  };

  beforeAll(async () => {
    inventory = await countingInventory();
    planning = await countingPlanning();
    gw = await buildGateway(deps());
    auth = await signUp();
  });
  afterAll(async () => {
    await gw?.close();
    await inventory?.close();
    await planning?.close();
  });
  beforeEach(() => {
    inventory.stored = { externalId: "W1", name: "Main" };
  });

  const warehouse = "/v2/api/warehouses/W1";
  const volumes = "/v2/api/planning/planned-volumes";
  /** Per step: whether what it provides holds on `on`. */
  const probes: Record<string, (on: Gateway) => Promise<boolean>> = {
    // A declared length over the limit is a 413 before the token is even looked at.
    declaredLength: async (on) =>
      (await on.app.inject({ method: "POST", url: "/v2/api/warehouses", headers: { "content-type": "application/json", "content-length": String(11 * 1024 * 1024) }, payload: "[]" })).statusCode === 413,
    authenticate: async (on) => (await on.app.inject({ method: "GET", url: warehouse })).statusCode === 401,
    // A deprecated route's 400 says it is deprecated too.
    answerHeaders: async (on) => {
      const refused = await on.app.inject({ method: "GET", url: volumes, headers: auth });
      return refused.statusCode === 400 && refused.headers.deprecation !== undefined;
    },
    // A write costs 5: a bucket of 5 pays one, and the next is a 429 before its service is called.
    rateLimit: async (on) => {
      const limited = await signUp({ rateLimitPerSecond: 1, rateLimitBurst: 5 });
      const put = () => on.app.inject({ method: "PUT", url: warehouse, headers: limited, payload: { name: "Limited" } });
      const first = await put();
      const writes = inventory.writes;
      const second = await put();
      return first.statusCode === 200 && second.statusCode === 429 && inventory.writes === writes;
    },
    idempotency: async (on) => {
      const headers = { ...auth, "idempotency-key": randomUUID() };
      const put = () => on.app.inject({ method: "PUT", url: warehouse, headers, payload: { name: "Keyed" } });
      const first = await put();
      const writes = inventory.writes;
      const replay = await put();
      return first.statusCode === 200 && replay.headers["idempotent-replayed"] === "true" && replay.body === first.body && inventory.writes === writes;
    },
    // A stale If-Match is a 412 before the service is called.
    conditional: async (on) => {
      const writes = inventory.writes;
      const stale = await on.app.inject({ method: "PUT", url: warehouse, headers: { ...auth, "if-match": `"1-${"a".repeat(32)}"` }, payload: { name: "Stale" } });
      return stale.statusCode === 412 && inventory.writes === writes;
    },
    // An Accept that takes neither JSON nor CSV is a 406 on a route that speaks both.
    negotiate: async (on) => (await on.app.inject({ method: "GET", url: `${volumes}?fromDate=2026-03-01&toDate=2026-03-31`, headers: { ...auth, accept: "application/xml" } })).statusCode === 406,
    validate: async (on) => {
      const refused = await on.app.inject({ method: "GET", url: `${warehouse}?nope=1`, headers: auth });
      return refused.statusCode === 400 && refused.json().code === "unknown_field";
    },
    // A current If-None-Match is a 304 without running the query.
    dataVersion: async (on) => {
      const url = `${volumes}?fromDate=2026-03-01&toDate=2026-03-31`;
      const tag = (await on.app.inject({ method: "GET", url, headers: auth })).headers.etag;
      const queries = planning.queries;
      const again = await on.app.inject({ method: "GET", url, headers: { ...auth, "if-none-match": String(tag) } });
      return tag !== undefined && again.statusCode === 304 && planning.queries === queries;
    },
    handle: async (on) => {
      const read = await on.app.inject({ method: "GET", url: warehouse, headers: auth });
      return read.statusCode === 200 && read.json().name === inventory.stored?.name;
    },
  };

  it("has a probe per step, and every probe holds with the whole pipeline", async () => {
    expect(Object.keys(probes)).toEqual(PIPELINE.map((step) => step.name));
    for (const [name, holds] of Object.entries(probes)) expect([name, await holds(gw)]).toEqual([name, true]);
  });

  it.each(PIPELINE.map((step) => [step.name, step] as const))("loses what %s provides when it is taken out of the pipeline", async (name, step) => {
    const without = await buildGateway(deps({ pipeline: PIPELINE.filter((s) => s !== step) }));
    try {
      expect(await probes[name](without)).toBe(false);
    } finally {
      await without.close();
    }
  });
});
