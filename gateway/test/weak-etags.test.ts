import { databaseForFile } from "@analytics/testing";
import { buildGateway, type Gateway } from "../src/app";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt } from "./services";
import { countingPlanning } from "./counting-planning";

const admin = { authorization: `Bearer ${ADMIN}` };

/**
 * Weak ETags on planning answers (CONTRACT "Conditional requests"): the tag is the account's
 * planning data version, read before the answer; a current If-None-Match is a 304 for which the
 * planned-volumes query is never run.
 */
describe("weak ETags decided before the expensive query", () => {
  const database = databaseForFile();
  let planning: Awaited<ReturnType<typeof countingPlanning>>;
  let gw: Gateway;
  const auth: { authorization: string }[] = [];

  beforeAll(async () => {
    planning = await countingPlanning();
    gw = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), planning: planning.url } }));
    const signIn = async (accountID: string, apiKey: string) =>
      auth.push({ authorization: `Bearer ${(await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID, apiKey } })).json().accessToken}` });
    const accounts = [];
    for (const name of ["Acme", "Other"]) {
      const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name } })).json();
      await signIn(created.accountID, created.apiKey);
      accounts.push(created.accountID);
    }
    // auth[2]: Acme's second API key.
    const key = (await gw.app.inject({ method: "POST", url: `/admin/v1/accounts/${accounts[0]}/keys`, headers: admin, payload: { name: "erp" } })).json();
    await signIn(accounts[0], key.apiKey);
  });
  afterAll(async () => {
    await gw?.close();
    await planning?.close();
  });

  const volumes = (headers: Record<string, string> = {}, account = 0, query = "fromDate=2026-03-01&toDate=2026-03-31") =>
    gw.app.inject({ method: "GET", url: `/v2/api/planning/planned-volumes?${query}`, headers: { ...auth[account], ...headers } });

  it("answers 304 for a current If-None-Match without running the query, and 200 with a new tag once the data version moved on", async () => {
    planning.version = 41n;
    const first = await volumes();
    const tag = first.headers.etag as string;
    expect(first.statusCode).toBe(200);
    expect(tag).toMatch(/^W\/"planning-41-2026-11-27-[A-Za-z0-9_-]{22}"$/);
    const queries = planning.queries;
    const again = await volumes({ "if-none-match": tag });
    expect([again.statusCode, again.body, again.headers.etag]).toEqual([304, "", tag]);
    expect(again.headers.ratelimit).toBeDefined();
    expect(planning.queries).toBe(queries);
    planning.version = 42n;
    const changed = await volumes({ "if-none-match": tag });
    expect(changed.statusCode).toBe(200);
    expect(changed.json()).toEqual([expect.objectContaining({ poVolume: 42 })]);
    expect(changed.headers.etag).not.toBe(tag);
    expect(planning.queries).toBe(queries + 1);
  });

  it("without If-None-Match makes no GetAccountVersion call: the service answers its version with the list, and the tag is the one an If-None-Match is checked against", async () => {
    planning.version = 50n;
    const [calls, queries] = [planning.versionCalls, planning.queries];
    const first = await volumes();
    expect(first.statusCode).toBe(200);
    expect([planning.versionCalls, planning.queries]).toEqual([calls, queries + 1]);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^W\/"planning-50-2026-11-27-[A-Za-z0-9_-]{22}"$/);
    expect((await volumes({ "if-none-match": tag })).statusCode).toBe(304);
    expect([planning.versionCalls, planning.queries]).toEqual([calls + 1, queries + 1]);
  });

  it("tags an answer with the version read before its query: a write landing between leaves the tag older than the data, never newer", async () => {
    planning.version = 60n;
    // The write lands as the query starts, after the service read the version.
    planning.beforeQuery = () => void (planning.version = 61n);
    const first = await volumes();
    planning.beforeQuery = undefined;
    expect(first.json()).toEqual([expect.objectContaining({ poVolume: 61 })]);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^W\/"planning-60-/);
    // The client's tag is stale: the data it has is answered again, never a 304 on data it did not see.
    expect((await volumes({ "if-none-match": tag })).statusCode).toBe(200);
  });

  it("tags a streamed answer (a breakdown) with the version its service sent before the first row, with no GetAccountVersion call", async () => {
    planning.version = 70n;
    const calls = planning.versionCalls;
    planning.beforeQuery = () => void (planning.version = 71n);
    const breakdown = (headers: Record<string, string> = {}) =>
      gw.app.inject({ method: "GET", url: "/v2/api/planning/breakdown?fromDate=2026-03-01&toDate=2026-03-31", headers: { ...auth[0], ...headers } });
    const first = await breakdown();
    planning.beforeQuery = undefined;
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual([expect.objectContaining({ groupKey: "SS26" })]);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^W\/"planning-70-2026-11-27-[A-Za-z0-9_-]{22}"$/);
    expect(planning.versionCalls).toBe(calls);
    expect((await breakdown({ "if-none-match": tag })).statusCode).toBe(200);
    const current = (await breakdown()).headers.etag as string;
    expect((await breakdown({ "if-none-match": current })).statusCode).toBe(304);
  });

  it("never stands for another account's answer, another API key's (a purchase order list answers the key's own) nor another query's", async () => {
    const tag = (await volumes()).headers.etag as string;
    expect((await volumes({ "if-none-match": tag }, 1)).statusCode).toBe(200);
    expect((await volumes({ "if-none-match": tag }, 2)).statusCode).toBe(200);
    expect((await volumes({ "if-none-match": tag }, 0)).statusCode).toBe(304);
    expect((await volumes({ "if-none-match": tag }, 0, "fromDate=2026-03-01&toDate=2026-04-30")).statusCode).toBe(200);
  });

  it("still answers a bad query 400, whatever If-None-Match says", async () => {
    const tag = (await volumes()).headers.etag as string;
    expect((await volumes({ "if-none-match": tag }, 0, "fromDate=2026-03-01")).statusCode).toBe(400);
    expect((await volumes({ "if-none-match": "*" }, 0, "toDate=x")).statusCode).toBe(400);
  });
});
