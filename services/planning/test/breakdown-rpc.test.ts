import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { planningV1 } from "@analytics/contracts";
import { toConnectError } from "@analytics/errors";
import { planningUnderTest, sku, stock, warehouse } from "./fixtures";
import { queryOf, type BreakdownInit } from "./breakdown-helpers";
import { breakdownByWarehouse } from "../src/breakdown";

const { GroupBy, Period } = planningV1;

/** The three RPCs as a caller sees them: 400s naming the parameter, rows streamed in chunks in REST order. */
describe("breakdown RPCs", () => {
  const p = planningUnderTest();
  const request = ({ period, channels, ...volumes }: BreakdownInit) => ({ query: { volumes: { fromDate: "2026-03-01", toDate: "2026-03-31", ...volumes }, period, channels } });

  it("a bad request is INVALID_ARGUMENT naming the parameter, on all three", async () => {
    const acc = randomUUID();
    const calls = [
      (q: BreakdownInit) => p.client.getSalesPlans(request(q), p.as(acc)),
      (q: BreakdownInit) => p.client.getBreakdown(request(q), p.as(acc)),
      (q: BreakdownInit) => p.client.getBreakdownByWarehouse(request(q), p.as(acc)),
    ];
    for (const call of calls) {
      const bad = async (q: BreakdownInit) => {
        let error: unknown;
        try {
          for await (const _ of call(q));
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(ConnectError);
        expect((error as ConnectError).code).toBe(Code.InvalidArgument);
        return (error as ConnectError).message;
      };
      expect(await bad({ channels: [3] })).toMatch(/channel/);
      expect(await bad({ period: 9 as planningV1.Period })).toMatch(/period/);
      expect(await bad({ fromDate: "" })).toMatch(/fromDate/);
      expect(await bad({ groupBy: 9 as planningV1.GroupBy })).toMatch(/groupBy/);
      // 107 ISO weeks (2026-01-05 is a Monday) is one too many; 106 is fine.
      expect(await bad({ fromDate: "2026-01-05", toDate: "2028-01-23", period: Period.WEEK })).toMatch(/toDate.*106.*period=week/);
      for await (const _ of call({ fromDate: "2026-01-05", toDate: "2028-01-16", period: Period.WEEK }));
      expect(await bad({ fromDate: "2020-01-01", toDate: "2028-12-31" })).toMatch(/toDate.*106.*period=month/);
    }
  });

  it("streams rows 500 a chunk in group order, every period in every row", async () => {
    const acc = randomUUID();
    const wh = randomUUID();
    const skus = Array.from({ length: 1203 }, (_, i) => ({ id: randomUUID(), key: `K${String(i).padStart(5, "0")}` }));
    await p.apply([warehouse(acc, wh, 1, "W", "Main"), ...skus.map((s) => sku(acc, s.id, 1, { key: s.key, season: "S" })), ...skus.map((s, i) => stock(acc, wh, s.id, 1, i))]);
    const chunks: number[] = [];
    const keys: string[] = [];
    for await (const { rows } of p.client.getBreakdown(request({ groupBy: GroupBy.SKUS, fromDate: "2026-03-01", toDate: "2026-05-31" }), p.as(acc))) {
      chunks.push(rows.length);
      for (const r of rows) {
        keys.push(r.groupKey);
        expect(r.periods.map((x) => x.periodStart)).toEqual(["2026-03-01", "2026-04-01", "2026-05-01"]);
      }
    }
    expect(chunks).toEqual([500, 500, 203]);
    expect(keys).toEqual(skus.map((s) => s.key));
    const byWarehouse: number[] = [];
    for await (const { rows } of p.client.getBreakdownByWarehouse(request({ groupBy: GroupBy.SKUS }), p.as(acc))) byWarehouse.push(rows.length);
    expect(byWarehouse).toEqual([500, 500, 203]);
  });

  /**
   * PLANNING_QUERY_TIMEOUT_MS: an answer's statement runs under its own limit, not the pool's
   * (DB_STATEMENT_TIMEOUT_MS, 15 s: less than an answer by SKU takes at 100,000 SKUs); past its
   * limit the call is UNAVAILABLE, a 503 with Retry-After, never a 500.
   */
  it("a breakdown's statement runs under its own timeout: longer than the pool's passes, past its own is UNAVAILABLE", async () => {
    const acc = randomUUID();
    const wh = randomUUID();
    await p.apply([warehouse(acc, wh, 1, "W", "Main")]);
    // 4,000 SKUs with stock and a year of sales: seconds of statement under load, well over 100 ms anywhere.
    await p.db.raw(
      `INSERT INTO skus (account_id, sku_id, version, key, sku, status, active_planning, season) SELECT ?, gen_random_uuid(), 1, 'K' || lpad(g::text, 5, '0'), 'S' || g, 2, true, 'S' FROM generate_series(1, 4000) g`,
      [acc],
    );
    await p.db.raw(`INSERT INTO stock (account_id, sku_id, warehouse_id, version, available_quantity, deleted, changed_at) SELECT account_id, sku_id, ?, 1, 5, false, now() FROM skus WHERE account_id = ?`, [wh, acc]);
    await p.db.raw(
      `INSERT INTO sales_lines (account_id, transaction_id, external_item_id, external_warehouse_id, key, channel, sold_at, units, changed_at)
       SELECT ?, gen_random_uuid(), '1', 'W', 'K' || lpad((1 + g % 4000)::text, 5, '0'), 1, timestamptz '2025-03-01' + g * interval '20 minutes', 1, now() FROM generate_series(1, 40000) g`,
      [acc],
    );
    const q = queryOf({ groupBy: GroupBy.SKUS, fromDate: "2026-01-01", toDate: "2026-12-31" });
    const shortPool = p.openDb("planning", { statementTimeoutMs: 100 });
    let rows = 0;
    for await (const chunk of breakdownByWarehouse(shortPool, acc, q, { today: "2026-03-15" })) rows += chunk.length;
    expect(rows).toBe(4000);
    let error: unknown;
    try {
      for await (const _ of breakdownByWarehouse(p.db, acc, q, { today: "2026-03-15", timeoutMs: 1 }));
    } catch (e) {
      error = e;
    }
    expect((error as { code?: string }).code).toBe("57014"); // query_canceled: the statement timeout
    expect(toConnectError(error)).toMatchObject({ code: Code.Unavailable });
  });
});
