import { randomUUID } from "node:crypto";
import { planningV1 } from "@analytics/contracts";
import { distributionOrder, planningUnderTest, purchaseOrder, settings, sku, stock, stockTrigger, transaction, warehouse } from "./fixtures";
import { readBreakdown, readByWarehouse, readPlans, type PeriodFigures } from "./breakdown-helpers";

const { GroupBy, Period } = planningV1;

/**
 * A golden account, every figure of the three answers computed by hand from the rules of
 * CONTRACT "Planning: the later revision" (and the decisions in src/breakdown.ts): the numbers
 * below are literals, worked out in the comments, never the code's own output.
 *
 * Account: Europe/Stockholm (UTC+1 in February and March), salesPlanGrowth 0.1, today 2026-03-18.
 * Seasons S1 = {A (KA), B (KB)}, S2 = {C (KC), D (KD)}; warehouses N (WN), S (WS), E (WE).
 */
describe("breakdown: a golden account computed by hand", () => {
  const p = planningUnderTest();
  const acc = randomUUID();
  const today = "2026-03-18";
  // Fixed ids, so that by-warehouse rows sort "" < N < S < E.
  const N = "00000000-0000-4000-8000-000000000001";
  const S = "00000000-0000-4000-8000-000000000002";
  const E = "00000000-0000-4000-8000-000000000003";
  const [A, B, C, D] = Array.from({ length: 4 }, () => randomUUID());
  const window = { groupBy: GroupBy.SEASONS, fromDate: "2026-02-10", toDate: "2026-04-20" };
  const FEB = { start: "2026-02-01", end: "2026-02-28" };
  const MAR = { start: "2026-03-01", end: "2026-03-31" };
  const APR = { start: "2026-04-01", end: "2026-04-30" };

  beforeAll(async () => {
    await p.apply([
      settings(acc, 1, "Europe/Stockholm", "0.1"),
      sku(acc, A, 1, { key: "KA", season: "S1" }),
      sku(acc, B, 1, { key: "KB", season: "S1" }),
      sku(acc, C, 1, { key: "KC", season: "S2" }),
      sku(acc, D, 1, { key: "KD", season: "S2" }),
      warehouse(acc, N, 1, "WN", "North"),
      warehouse(acc, S, 1, "WS", "South"),
      warehouse(acc, E, 1, "WE", "East"),
      stock(acc, N, A, 1, 10),
      stock(acc, S, A, 1, 5),
      stock(acc, N, B, 1, 8),
      stock(acc, S, B, 1, 4),
      stock(acc, E, C, 1, 20),
      stockTrigger(acc, 1, 1, { skuId: A, warehouseId: N, min: 4 }),
      stockTrigger(acc, 2, 1, { skuId: A, warehouseId: S, min: 2 }),
      stockTrigger(acc, 3, 1, { skuId: C, warehouseId: E, min: 6 }),
      stockTrigger(acc, 4, 1, { skuId: B, warehouseId: N }),
      // Last year: A ch1 March 10 - 2 returned = 8, April 5 (+100 cancelled); A ch2 April 20;
      // B without a channel (D2C) March 6.
      transaction(acc, randomUUID(), 1, { channel: 1, createdDate: "2025-03-10T12:00:00Z", items: [{ key: "KA", quantity: 10 }] }),
      transaction(acc, randomUUID(), 1, { channel: 1, type: 2, createdDate: "2025-03-20T12:00:00Z", items: [{ key: "KA", quantity: 2 }] }),
      transaction(acc, randomUUID(), 1, { channel: 1, createdDate: "2025-04-05T12:00:00Z", items: [{ key: "KA", quantity: 5 }] }),
      transaction(acc, randomUUID(), 1, { channel: 1, createdDate: "2025-04-06T12:00:00Z", cancelledDate: "2025-04-07T12:00:00Z", items: [{ key: "KA", quantity: 100 }] }),
      transaction(acc, randomUUID(), 1, { channel: 2, createdDate: "2025-04-10T12:00:00Z", items: [{ key: "KA", quantity: 20 }] }),
      transaction(acc, randomUUID(), 1, { channel: 0, createdDate: "2025-03-05T12:00:00Z", items: [{ key: "KB", quantity: 6 }] }),
      // This year: A ch1 Feb 3 (shipped from WN), March 4 (1 from WN, 3 from WS) - 1 returned;
      // B ch2 2 at 00:30 on 1 March in Stockholm (still February in UTC); C ch1 March 10 from WE.
      transaction(acc, randomUUID(), 1, { channel: 1, createdDate: "2026-02-15T12:00:00Z", items: [{ key: "KA", quantity: 3, shipments: [{ quantity: 3, warehouse: "WN" }] }] }),
      transaction(acc, randomUUID(), 1, {
        channel: 1,
        createdDate: "2026-03-05T12:00:00Z",
        items: [{ key: "KA", quantity: 4, shipments: [{ quantity: 1, warehouse: "WN" }, { quantity: 3, warehouse: "WS" }] }],
      }),
      transaction(acc, randomUUID(), 1, { channel: 1, createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 1, type: 2 }] }),
      transaction(acc, randomUUID(), 1, { channel: 2, createdDate: "2026-02-28T23:30:00Z", items: [{ key: "KB", quantity: 2 }] }),
      transaction(acc, randomUUID(), 1, { channel: 1, createdDate: "2026-03-02T12:00:00Z", items: [{ key: "KC", quantity: 10, shipments: [{ quantity: 10, warehouse: "WE" }] }] }),
      // Open, partly delivered, draft (one line without a warehouse), cancelled, overdue + out of range.
      purchaseOrder(acc, randomUUID(), 1, 0, [
        { skuId: A, warehouse: "WN", date: "2026-03-25", quantity: 20 },
        { skuId: A, warehouse: "WS", date: "2026-04-10", quantity: 10 },
      ]),
      purchaseOrder(acc, randomUUID(), 1, 1, [{ skuId: C, warehouse: "WE", date: "2026-04-02", quantity: 15, open: 5 }]),
      purchaseOrder(acc, randomUUID(), 1, 4, [
        { skuId: B, warehouse: "WS", date: "2026-04-15", quantity: 6 },
        { skuId: C, date: "2026-03-28", quantity: 4 },
      ]),
      purchaseOrder(acc, randomUUID(), 1, 3, [{ skuId: A, warehouse: "WN", date: "2026-03-20", quantity: 50 }]),
      purchaseOrder(acc, randomUUID(), 1, 0, [
        { skuId: A, warehouse: "WN", date: "2026-02-20", quantity: 2 },
        { skuId: A, warehouse: "WN", date: "2026-05-05", quantity: 7 },
      ]),
      // Distribution orders: A N->S 6 (2 delivered) in March; C E->N 3 in April; a cancelled and a completed one.
      distributionOrder(acc, randomUUID(), 1, { key: "KA", from: "WN", to: "WS", deliveryDate: "2026-03-25T10:00:00Z", quantity: 6, deliveredQuantity: 2, status: "IN TRANSIT" }),
      distributionOrder(acc, randomUUID(), 1, { key: "KC", from: "WE", to: "WN", deliveryDate: "2026-04-05T10:00:00Z", quantity: 3 }),
      distributionOrder(acc, randomUUID(), 1, { key: "KA", from: "WN", to: "WS", deliveryDate: "2026-03-26T10:00:00Z", quantity: 9, status: "CANCELLED", cancelledDate: "2026-03-01T00:00:00Z" }),
      distributionOrder(acc, randomUUID(), 1, { key: "KA", from: "WN", to: "WS", deliveryDate: "2026-03-27T10:00:00Z", quantity: 5, deliveredQuantity: 5 }),
    ]);
    // Stored plans: A ch1 April 40 (over its baseline 5.5), C ch1 March 30 and April 12, D ch2 April 5.
    const plan = (key: string, skuId: string, channel: number, month: string, volume: string) => ({ key, skuFound: true, skuId, channel, month, volume: { value: volume } });
    await p.client.upsertSalesPlans({ plans: [plan("KA", A, 1, "2026-04", "40"), plan("KC", C, 1, "2026-03", "30"), plan("KC", C, 1, "2026-04", "12"), plan("KD", D, 2, "2026-04", "5")] }, p.as(acc));
  });

  it("sales plans per season and channel: stored plans, baselines grown by 0.1, actuals net of returns", async () => {
    const z = (period: { start: string; end: string }) => ({ ...period, plan: 0, actual: 0, share: 0 });
    expect(await readPlans(p.db, acc, window, today)).toEqual([
      // S1 ch1: Feb actual A 3; March plan A 8×1.1 = 8.8 + B 6×1.1 = 6.6 (channel 0 is D2C), actual A 4 - 1;
      // April A's stored 40.
      {
        groupKey: "S1",
        channel: 1,
        periods: [
          { ...FEB, plan: 0, actual: 3, share: 0 },
          { ...MAR, plan: 15.4, actual: 3, share: 0 },
          { ...APR, plan: 40, actual: 0, share: 1 },
        ],
      },
      // S1 ch2: B's 2 at 00:30 on 1 March Stockholm; April A 20×1.1.
      { groupKey: "S1", channel: 2, periods: [z(FEB), { ...MAR, plan: 0, actual: 2, share: 0 }, { ...APR, plan: 22, actual: 0, share: 0 }] },
      { groupKey: "S2", channel: 1, periods: [z(FEB), { ...MAR, plan: 30, actual: 10, share: 1 }, { ...APR, plan: 12, actual: 0, share: 1 }] },
      { groupKey: "S2", channel: 2, periods: [z(FEB), z(MAR), { ...APR, plan: 5, actual: 0, share: 1 }] },
    ]);
    // One channel: its rows only.
    expect((await readPlans(p.db, acc, { ...window, channels: [2] }, today)).map((r) => `${r.groupKey}/${r.channel}`)).toEqual(["S1/2", "S2/2"]);
  });

  it("a week's plan is its days' share of its months' plans, per SKU rounded to 3 decimals", async () => {
    // ISO week 30 March - 5 April: 2 days of March, 5 of April.
    // S1 ch1: A stored 40×5/30 = 6.667, A base 8.8×2/31 = 0.568, B base 6.6×2/31 = 0.426: 7.661, stored 6.667/7.661.
    // S2 ch1: C 30×2/31 + 12×5/30 = 3.935 (stored).
    const rows = await readPlans(p.db, acc, { ...window, fromDate: "2026-04-01", toDate: "2026-04-03", period: Period.WEEK, channels: [1] }, today);
    expect(rows).toEqual([
      { groupKey: "S1", channel: 1, periods: [{ start: "2026-03-30", end: "2026-04-05", plan: 7.661, actual: 0, share: 0.870252 }] },
      { groupKey: "S2", channel: 1, periods: [{ start: "2026-03-30", end: "2026-04-05", plan: 3.935, actual: 0, share: 1 }] },
    ]);
  });

  const past = (period: { start: string; end: string }, f: Partial<PeriodFigures>, byWarehouse = false): PeriodFigures => ({
    ...period,
    opening: null,
    plan: 0,
    actual: 0,
    po: 0,
    draft: 0,
    closing: null,
    target: null,
    otb: null,
    ...(byWarehouse ? { in: 0, out: 0 } : {}),
    ...f,
  });

  it("breakdown per season: the projection from today's stock, remaining plan, target and open-to-buy", async () => {
    expect(await readBreakdown(p.db, acc, window, today)).toEqual([
      {
        groupKey: "S1",
        periods: [
          // February ended: sales and PO figures only (the overdue PO line of 2).
          past(FEB, { actual: 3, po: 2 }),
          // March (current): stock 10 + 5 + 8 + 4 = 27; remaining max(0, 15.4 - 5) = 10.4;
          // closing 27 + 20 - 10.4 = 36.6; target 4 + 2 + 0 = 6; otb max(0, 10.4 + 6 - 27 - 20) = 0.
          { ...MAR, opening: 27, plan: 15.4, actual: 5, po: 20, draft: 0, closing: 36.6, target: 6, otb: 0 },
          // April: plan 40 + 22 = 62; closing 36.6 + 10 + 6 - 62 = -9.4; otb max(0, 62 + 6 - 36.6 - 10) = 21.4.
          { ...APR, opening: 36.6, plan: 62, actual: 0, po: 10, draft: 6, closing: -9.4, target: 6, otb: 21.4 },
        ],
      },
      {
        groupKey: "S2",
        periods: [
          past(FEB, {}),
          // March: stock 20; remaining 30 - 10 = 20; closing 20 + 4 (draft) - 20 = 4; otb max(0, 20 + 6 - 20 - 0) = 6.
          { ...MAR, opening: 20, plan: 30, actual: 10, po: 0, draft: 4, closing: 4, target: 6, otb: 6 },
          // April: plan 12 + 5; closing 4 + 5 - 17 = -8; otb max(0, 17 + 6 - 4 - 5) = 14.
          { ...APR, opening: 4, plan: 17, actual: 0, po: 5, draft: 0, closing: -8, target: 6, otb: 14 },
        ],
      },
    ]);
  });

  it("a window after today: the projection runs from today through the days before it (period=total)", async () => {
    // Today's period is [18 March, 31 March], not reported: its plan is its 14 days' share of March.
    // S1: A 8.8×14/31 = 3.974, B 6.6×14/31 = 2.981: 6.955 still to sell; the PO of 20 on 25 March;
    // closing 27 + 20 - 6.955 = 40.045. April: 40.045 + 10 + 6 - 62 = -5.955; otb 62 + 6 - 40.045 - 10.
    // S2: C 30×14/31 = 13.548; the draft of 4 on 28 March: 20 + 4 - 13.548 = 10.452. April:
    // 10.452 + 5 - 17 = -1.548; otb 17 + 6 - 10.452 - 5.
    expect(await readBreakdown(p.db, acc, { ...window, fromDate: "2026-04-01", toDate: "2026-04-30", period: Period.TOTAL }, today)).toEqual([
      { groupKey: "S1", periods: [{ ...APR, opening: 40.045, plan: 62, actual: 0, po: 10, draft: 6, closing: -5.955, target: 6, otb: 17.955 }] },
      { groupKey: "S2", periods: [{ ...APR, opening: 10.452, plan: 17, actual: 0, po: 5, draft: 0, closing: -1.548, target: 6, otb: 7.548 }] },
    ]);
  });

  it("by warehouse: plans and actuals split by the last 12 months' shipments, else stock, else none; transfers", async () => {
    const row = (groupKey: string, warehouseId: string, warehouseName: string, periods: PeriodFigures[]) => ({ groupKey, warehouseId, warehouseName, periods });
    expect(await readByWarehouse(p.db, acc, window, today)).toEqual([
      // A's shares: shipped N 3 + 1 = 4, S 3 (of 7); N's piece round(x × 4/7, 3), S the rest:
      // Feb actual 3 = N 1.714 + S 1.286; March plan 8.8 = N 5.029 + S 3.771, actual 3 = 1.714 + 1.286;
      // April plan 62 = N 35.429 + S 26.571. B (no shipments): equally over N and S, which hold its
      // stock: March plan 6.6 = 3.3 + 3.3, actual 2 = 1 + 1.
      // March remaining 10.4 split by N max(0, 8.329 - 2.714) = 5.615 and S 7.071 - 2.286 = 4.785.
      row("S1", N, "North", [
        past(FEB, { actual: 1.714, po: 2 }, true),
        // 18 + 20 - 4 (to S) - 5.615 = 28.385; otb max(0, 5.615 + 4 - 18 - 20) = 0.
        { ...MAR, opening: 18, plan: 8.329, actual: 2.714, po: 20, draft: 0, closing: 28.385, target: 4, otb: 0, in: 0, out: 4 },
        // 28.385 - 35.429 = -7.044; otb max(0, 35.429 + 4 - 28.385) = 11.044.
        { ...APR, opening: 28.385, plan: 35.429, actual: 0, po: 0, draft: 0, closing: -7.044, target: 4, otb: 11.044, in: 0, out: 0 },
      ]),
      row("S1", S, "South", [
        past(FEB, { actual: 1.286 }, true),
        // 9 + 4 (from N) - 4.785 = 8.215; otb max(0, 4.785 + 2 - 9) = 0.
        { ...MAR, opening: 9, plan: 7.071, actual: 2.286, po: 0, draft: 0, closing: 8.215, target: 2, otb: 0, in: 4, out: 0 },
        // 8.215 + 10 + 6 - 26.571 = -2.356; otb max(0, 26.571 + 2 - 8.215 - 10) = 10.356.
        { ...APR, opening: 8.215, plan: 26.571, actual: 0, po: 10, draft: 6, closing: -2.356, target: 2, otb: 10.356, in: 0, out: 0 },
      ]),
      // D: no shipments, no stock: its plan under "". C's draft line without a warehouse too.
      row("S2", "", "", [
        past(FEB, {}, true),
        { ...MAR, opening: 0, plan: 0, actual: 0, po: 0, draft: 4, closing: 4, target: 0, otb: 0, in: 0, out: 0 },
        { ...APR, opening: 4, plan: 5, actual: 0, po: 0, draft: 0, closing: -1, target: 0, otb: 1, in: 0, out: 0 },
      ]),
      // N holds nothing of S2 but receives C's transfer from E in April.
      row("S2", N, "North", [
        past(FEB, {}, true),
        { ...MAR, opening: 0, plan: 0, actual: 0, po: 0, draft: 0, closing: 0, target: 0, otb: 0, in: 0, out: 0 },
        { ...APR, opening: 0, plan: 0, actual: 0, po: 0, draft: 0, closing: 3, target: 0, otb: 0, in: 3, out: 0 },
      ]),
      // C shipped only from E: all its plan and actuals there. March 20 + 0 - 20 = 0; otb 20 + 6 - 20 = 6.
      // April 0 + 5 - 3 - 12 = -10; otb max(0, 12 + 6 - 0 - 5) = 13.
      row("S2", E, "East", [
        past(FEB, {}, true),
        { ...MAR, opening: 20, plan: 30, actual: 10, po: 0, draft: 0, closing: 0, target: 6, otb: 6, in: 0, out: 0 },
        { ...APR, opening: 0, plan: 12, actual: 0, po: 5, draft: 0, closing: -10, target: 6, otb: 13, in: 0, out: 3 },
      ]),
    ]);
  });
});
