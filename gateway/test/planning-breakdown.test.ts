import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { create } from "@bufbuild/protobuf";
import { planningV1 } from "@analytics/contracts";
import { invalid, toConnectError } from "@analytics/errors";
import { Code, ConnectError } from "@connectrpc/connect";
import { databaseForFile, eventually } from "@analytics/testing";
import { buildGateway, connectionTimeoutMs, type Gateway } from "../src/app";
import { answerCost } from "../src/routes/planning";
import { TEST_ADMIN_TOKEN as ADMIN, testGatewayDeps } from "./gateway-deps";
import { allServicesAt } from "./services";

const { BreakdownPeriodSchema, Period, PlanningService } = planningV1;

/**
 * The later revision's routes against a planning service of the test's own: what the gateway asks
 * (the BreakdownQuery built from the REST query), what it answers (Decimals as JSON numbers, unset
 * as null, REST's names), and that it writes each chunk of rows as it arrives.
 */
describe("GET /planning/sales-plans, /breakdown, /breakdown/by-warehouse through the gateway", () => {
  const database = databaseForFile();
  let gw: Gateway;
  let server: http2.Http2Server;
  const sessions = new Set<http2.ServerHttp2Session>();
  let baseUrl: string;
  let token: string;
  const received: planningV1.BreakdownQuery[] = [];
  /** What the next call's stream does after its first chunk (default: send the second at once). */
  let afterFirstChunk: () => Promise<void> = async () => undefined;
  let failWith: Error | undefined;
  /** The next breakdown's call as the service sees it, held before its first chunk until `release` (a long statement). */
  let holding: { signal?: AbortSignal; release: () => void; released: Promise<void> } | undefined;
  /** Rows of 10 periods the next answer by warehouse has (default: one row of one period). */
  let wideRows = 0;

  const decimal = (value: string) => ({ value });
  const period = (start: string, end: string, figures: Partial<Record<string, string>>) =>
    create(BreakdownPeriodSchema, {
      periodStart: start,
      periodEnd: end,
      ...Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, decimal(value!)])),
    });
  const march = period("2026-03-01", "2026-03-31", { salesPlanVolume: "12.50", salesActualVolume: "3", poVolume: "4", draftPoVolume: "8" });
  const april = period("2026-04-01", "2026-04-30", {
    openingStockVolume: "15",
    salesPlanVolume: "0.333333",
    salesActualVolume: "0",
    poVolume: "0",
    draftPoVolume: "0",
    closingStockVolume: "-1.5",
    targetStockVolume: "7",
    openToBuyVolume: "1234567890.125",
    transferInVolume: "2",
    transferOutVolume: "0",
  });

  beforeAll(async () => {
    server = http2.createServer(
      connectNodeAdapter({
        routes: (router) =>
          router.service(PlanningService, {
            async *getSalesPlans(req) {
              received.push(req.query!);
              if (failWith) throw toConnectError(failWith);
              yield { rows: [{ groupKey: "SS26", channel: 1, periods: [{ periodStart: "2026-03-01", periodEnd: "2026-03-31", salesPlanVolume: decimal("10"), storedPlanShare: decimal("0.25") }] }] };
            },
            async *getBreakdown(req, ctx) {
              received.push(req.query!);
              if (holding) {
                holding.signal = ctx.signal;
                await Promise.race([holding.released, new Promise((resolve) => ctx.signal.addEventListener("abort", resolve))]);
              }
              yield { rows: [{ groupKey: "AW26", periods: [march, april] }] };
              await afterFirstChunk();
              yield { rows: [{ groupKey: "SS26", periods: [april] }] };
            },
            async *getBreakdownByWarehouse(req) {
              received.push(req.query!);
              for (let from = 0; from < wideRows; from += 500) {
                yield { rows: Array.from({ length: Math.min(500, wideRows - from) }, (_, i) => ({ groupKey: `K${from + i}`, warehouseId: "", warehouseName: "", periods: Array(10).fill(april) })) };
              }
              if (wideRows) return;
              yield { rows: [{ groupKey: "AW26", warehouseId: "", warehouseName: "", periods: [april] }] };
            },
          }),
      }),
    );
    // The gateway keeps its HTTP/2 sessions open: closing ends them.
    server.on("session", (session) => {
      sessions.add(session);
      session.once("close", () => sessions.delete(session));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const planningUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    gw = await buildGateway(testGatewayDeps(database.url, { services: { ...allServicesAt(), planning: planningUrl } }));
    await gw.app.listen({ port: 0, host: "127.0.0.1" });
    baseUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    const admin = { authorization: `Bearer ${ADMIN}` };
    const account = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Acme" } })).json();
    token = (await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: account.accountID, apiKey: account.apiKey } })).json().accessToken;
  });
  afterAll(async () => {
    await gw?.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const session of sessions) session.close();
    });
  });
  beforeEach(() => {
    received.length = 0;
    afterFirstChunk = async () => undefined;
    failWith = undefined;
    holding?.release();
    holding = undefined;
    wideRows = 0;
  });

  // Uncompressed: a compressor holds small writes back, and the chunks on the wire are what is tested.
  const get = (path: string) => fetch(`${baseUrl}/v2/api/planning/${path}`, { headers: { authorization: `Bearer ${token}`, "accept-encoding": "identity" } });

  it("asks with planned volumes' query plus the period and the channels (sorted, once each; default both)", async () => {
    expect((await get("sales-plans?fromDate=2026-03-15T00:00:00Z&toDate=2026-04-02&groupBy=skus&skus=a,b&period=week&channel=2,1&channel=2")).status).toBe(200);
    expect((await get("sales-plans?fromDate=2026-03-15&toDate=2026-04-02")).status).toBe(200);
    const [first, second] = received;
    expect({ period: first.period, channels: first.channels, groupBy: first.volumes?.groupBy, fromDate: first.volumes?.fromDate, skus: first.volumes?.skus }).toEqual({
      period: Period.WEEK,
      channels: [1, 2],
      groupBy: planningV1.GroupBy.SKUS,
      fromDate: "2026-03-15",
      skus: ["a", "b"],
    });
    expect({ period: second.period, channels: second.channels, activePlanning: second.volumes?.activePlanning }).toEqual({ period: Period.MONTH, channels: [], activePlanning: true });
  });

  it("answers REST's shapes: Decimals as JSON numbers with their digits, unset as null, draftPOVolume, transfers only by warehouse", async () => {
    const plans = await get("sales-plans?fromDate=2026-03-01&toDate=2026-03-31");
    expect(await plans.json()).toEqual([
      { groupKey: "SS26", channel: 1, periods: [{ periodStart: "2026-03-01", periodEnd: "2026-03-31", salesPlanVolume: 10, salesActualVolume: null, storedPlanShare: 0.25 }] },
    ]);
    const breakdown = await get("breakdown?fromDate=2026-03-01&toDate=2026-04-30");
    expect(breakdown.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const text = await breakdown.text();
    expect(text).toContain('"openToBuyVolume":1234567890.125');
    expect(text).toContain('"salesPlanVolume":0.333333');
    const restApril = {
      periodStart: "2026-04-01",
      periodEnd: "2026-04-30",
      openingStockVolume: 15,
      salesPlanVolume: 0.333333,
      salesActualVolume: 0,
      poVolume: 0,
      draftPOVolume: 0,
      closingStockVolume: -1.5,
      targetStockVolume: 7,
      openToBuyVolume: 1234567890.125,
    };
    const restMarch = { periodStart: "2026-03-01", periodEnd: "2026-03-31", openingStockVolume: null, salesPlanVolume: 12.5, salesActualVolume: 3, poVolume: 4, draftPOVolume: 8, closingStockVolume: null, targetStockVolume: null, openToBuyVolume: null };
    expect(JSON.parse(text)).toEqual([
      { groupKey: "AW26", periods: [restMarch, restApril] },
      { groupKey: "SS26", periods: [restApril] },
    ]);
    const byWarehouse = await get("breakdown/by-warehouse?fromDate=2026-04-01&toDate=2026-04-30");
    expect(await byWarehouse.json()).toEqual([{ groupKey: "AW26", warehouseId: "", warehouseName: "", periods: [{ ...restApril, transferInVolume: 2, transferOutVolume: 0 }] }]);
  });

  it("writes each chunk of rows as it arrives: the first group is sent before the service sends the second", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    afterFirstChunk = () => released;
    const res = await get("breakdown?fromDate=2026-03-01&toDate=2026-04-30");
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = "";
    // The service holds its second chunk until the first group has reached the client.
    while (!text.includes('"groupKey":"AW26"')) text += Buffer.from((await reader.read()).value!).toString();
    expect(text).not.toContain("SS26");
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += Buffer.from(chunk.value).toString();
    expect(JSON.parse(text).map((r: { groupKey: string }) => r.groupKey)).toEqual(["AW26", "SS26"]);
  });

  it("answers the service's InvalidArgument as a 400 naming the field, and refuses a bad period, channel or too long a window itself", async () => {
    failWith = invalid("invalid planning request: toDate must not be before fromDate", [{ path: "toDate", message: "must not be before fromDate" }]);
    const reversed = await get("sales-plans?fromDate=2026-04-01&toDate=2026-03-01");
    expect([reversed.status, ((await reversed.json()) as { details: unknown }).details]).toEqual([400, [{ path: "toDate", message: "must not be before fromDate" }]]);
    received.length = 0;
    const march = "fromDate=2026-03-01&toDate=2026-03-31";
    for (const [query, parameter] of [
      [`${march}&period=day`, "period"],
      [`${march}&channel=3`, "channel"],
      [`${march}&channel=x`, "channel"],
      ["fromDate=2026-01-05&toDate=2028-01-17&period=week", "toDate"],
    ]) {
      const res = await get(`breakdown?${query}`);
      const body = (await res.json()) as { details: { path: string }[]; message: string };
      expect([query, res.status, body.details[0].path.startsWith(parameter), body.message]).toEqual([query, 400, true, expect.stringContaining(parameter)]);
    }
    expect(received).toEqual([]);
  });

  it("cancels the service's call when the client leaves while the statement runs (before the first chunk)", async () => {
    let release!: () => void;
    holding = { release: () => release(), released: new Promise<void>((resolve) => (release = resolve)) };
    const client = new AbortController();
    const answer = fetch(`${baseUrl}/v2/api/planning/breakdown?fromDate=2026-03-01&toDate=2026-04-30`, { headers: { authorization: `Bearer ${token}` }, signal: client.signal });
    answer.catch(() => undefined);
    const call = await eventually(async () => holding?.signal, 5_000, "the service's call");
    expect(call.aborted).toBe(false);
    client.abort();
    await eventually(async () => call.aborted, 5_000, "the service's call cancelled");
  });

  it("answers the service's RESOURCE_EXHAUSTED (the account over its share of planning) as a 429 with Retry-After", async () => {
    failWith = new ConnectError("the account already has as many planning answers running as it may at once (4); retry when one has ended", Code.ResourceExhausted);
    const res = await get("sales-plans?fromDate=2026-03-01&toDate=2026-03-31");
    expect([res.status, res.headers.get("retry-after"), ((await res.json()) as { message: string }).message]).toEqual([429, "5", expect.stringContaining("planning answers running as it may at once (4)")]);
  });

  it("charges an answer by its size: one token per 1000 periods of its rows", async () => {
    const admin = { authorization: `Bearer ${ADMIN}` };
    const created = (await gw.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: admin, payload: { name: "Wide" } })).json();
    const limits = { rateLimitPerSecond: 1, rateLimitBurst: 5000 };
    expect((await gw.app.inject({ method: "PUT", url: `/admin/v1/accounts/${created.accountID}/settings`, headers: admin, payload: limits })).statusCode).toBe(200);
    const wide = (await gw.app.inject({ method: "POST", url: "/v2/api/auth", payload: { accountID: created.accountID, apiKey: created.apiKey } })).json().accessToken;
    const as = (path: string) => fetch(`${baseUrl}/v2/api/planning/${path}`, { headers: { authorization: `Bearer ${wide}` } });
    const left = (res: Response) => Number(/r=(\d+)/.exec(res.headers.get("ratelimit")!)![1]);
    const before = left(await as("sales-plans?fromDate=2026-03-01&toDate=2026-03-31"));
    wideRows = 2_000;
    const answer = await as("breakdown/by-warehouse?fromDate=2026-04-01&toDate=2026-04-30");
    expect(((await answer.json()) as unknown[]).length).toBe(2_000);
    expect(answerCost(2_000 * 10)).toBe(20);
    // 20 tokens (2,000 rows of 10 periods) and the next read's 1; the bucket refills 1 a second meanwhile.
    const after = left(await as("sales-plans?fromDate=2026-03-01&toDate=2026-03-31"));
    expect(before - after).toBeGreaterThanOrEqual(19);
    expect(before - after).toBeLessThanOrEqual(21);
    expect([answerCost(0), answerCost(1_000), answerCost(1_001)]).toEqual([1, 1, 2]);
  });

  it("keeps a silent connection open longer than the longest wait for a planning answer's first byte", () => {
    // The gateway waits PLANNING_QUERY_TIMEOUT_MS + SERVICE_CALL_TIMEOUT_MS (defaults 120 s + 10 s) and then answers 503 itself.
    expect(gw.app.server.timeout).toBe(connectionTimeoutMs(120_000, 10_000));
    expect(gw.app.server.timeout).toBeGreaterThan(120_000 + 10_000);
    expect(connectionTimeoutMs(300_000, 20_000)).toBeGreaterThan(320_000);
    expect(connectionTimeoutMs(1_000, 1_000)).toBe(60_000);
  });
});
