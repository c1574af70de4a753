import { randomUUID } from "node:crypto";
import type { BusMessage } from "@analytics/bus";
import { planningV1 } from "@analytics/contracts";
import { addDays } from "../src/periods";
import { distributionOrder, planningUnderTest, purchaseOrder, settings, sku, stock, stockTrigger, transaction, warehouse } from "./fixtures";
import { readBreakdown, readByWarehouse, readPlans, type BreakdownInit, type PeriodFigures } from "./breakdown-helpers";

const { GroupBy, Period } = planningV1;

/** A small seeded generator (mulberry32): the same seed, the same account. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]) => xs[int(0, xs.length - 1)];
  const day = (from: string, days: number) => addDays(from, int(0, days));
  return { next, int, pick, day };
}

/** Figures as integer thousandths, so that sums are exact. */
const m = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round(x * 1000));

/**
 * Properties of the breakdowns on generated accounts: the stock balance rolls from period to
 * period, warehouse rows sum to the group row (every volume but open-to-buy), transfers net to
 * zero, sales-plan rows per channel sum to the breakdown, and with period=total the PO figures
 * are planned volumes'.
 */
describe("breakdown properties on generated accounts", () => {
  const p = planningUnderTest();
  // What the generated queries exercised: rows, and periods holding today.
  const seen = { rows: 0, current: 0, warehouseRows: 0 };
  afterAll(() => {
    expect(seen.current).toBeGreaterThan(2);
    expect(seen.warehouseRows).toBeGreaterThan(seen.rows);
  });

  async function generated(seed: number) {
    const r = random(seed);
    const acc = randomUUID();
    const whs = Array.from({ length: 3 }, (_, i) => ({ id: randomUUID(), ext: `W${i}` }));
    // External ids a line may name: the known ones, an unknown one, none.
    const exts = [...whs.map((w) => w.ext), "WX", ""];
    const skus = Array.from({ length: r.int(5, 9) }, (_, i) => ({ id: randomUUID(), key: `K${i}`, season: r.pick(["S1", "S2", "S3"]) }));
    const messages: BusMessage[] = [
      settings(acc, 1, r.pick(["UTC", "Europe/Stockholm", "America/New_York"]), r.pick(["0", "0.1", "-0.25", "0.333"])),
      ...whs.map((w, i) => warehouse(acc, w.id, 1, w.ext, `Warehouse ${i}`)),
      ...skus.map((s) => sku(acc, s.id, 1, { key: s.key, season: s.season, productGroupId: `P${s.key}` })),
    ];
    for (const s of skus) {
      for (const w of whs) if (r.next() < 0.6) messages.push(stock(acc, w.id, s.id, 1, r.int(0, 40)));
      for (const w of whs) if (r.next() < 0.4) messages.push(stockTrigger(acc, r.int(1, 1e9), 1, { skuId: s.id, warehouseId: w.id, min: r.int(0, 15) }));
    }
    for (let t = 0; t < 60; t++) {
      const items = Array.from({ length: r.int(1, 3) }, (_, i) => {
        const quantity = r.int(1, 9);
        const shipped = r.int(0, quantity);
        return {
          key: r.pick(skus).key,
          quantity,
          type: r.next() < 0.15 ? 2 : undefined,
          externalItemId: `i${i}`,
          shipments: shipped ? [{ quantity: shipped, warehouse: r.pick(exts) || undefined }] : [],
        };
      });
      const createdDate = `${r.day("2025-01-01", 540)}T${String(r.int(0, 23)).padStart(2, "0")}:30:00Z`;
      messages.push(transaction(acc, randomUUID(), 1, { channel: r.pick([0, 1, 2]), createdDate, cancelledDate: r.next() < 0.1 ? createdDate : undefined, items }));
    }
    for (let o = 0; o < 12; o++) {
      const lines = Array.from({ length: r.int(1, 4) }, (_, i) => {
        const quantity = r.int(1, 30);
        return { skuId: r.pick(skus).id, warehouse: r.pick(exts), date: r.day("2026-01-01", 240), quantity, open: r.int(0, quantity), itemId: `l${i}` };
      });
      messages.push(purchaseOrder(acc, randomUUID(), 1, r.pick([0, 1, 2, 3, 4, 5]), lines));
    }
    for (let o = 0; o < 15; o++) {
      const quantity = r.int(1, 20);
      messages.push(
        distributionOrder(acc, randomUUID(), 1, {
          key: r.pick(skus).key,
          from: r.pick(exts) || undefined,
          to: r.pick(exts) || undefined,
          deliveryDate: `${r.day("2026-01-01", 240)}T${String(r.int(0, 23)).padStart(2, "0")}:00:00Z`,
          quantity,
          deliveredQuantity: r.int(0, quantity),
          status: r.pick(["PROCESSING", "IN TRANSIT", "CANCELLED"]),
        }),
      );
    }
    await p.apply(messages);
    const plans = skus.flatMap((s) =>
      ["2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06"].flatMap((month) =>
        [1, 2].flatMap((channel) => (r.next() < 0.3 ? [{ key: s.key, skuFound: true, skuId: s.id, channel, month, volume: { value: String(r.int(0, 5000) / 100) } }] : [])),
      ),
    );
    if (plans.length) await p.client.upsertSalesPlans({ plans }, p.as(acc));
    return { acc, r };
  }

  const sumBy = (rows: { groupKey: string; periods: PeriodFigures[] }[], field: keyof PeriodFigures) => {
    const sums = new Map<string, number>();
    for (const row of rows) row.periods.forEach((f, i) => sums.set(`${row.groupKey}/${i}`, (sums.get(`${row.groupKey}/${i}`) ?? 0) + (m(f[field] as number) ?? 0)));
    return sums;
  };

  function checkBalance(rows: { periods: PeriodFigures[] }[], byWarehouse: boolean, currentIndex: number) {
    for (const row of rows) {
      row.periods.forEach((f, i) => {
        if (f.opening === null) {
          expect([f.closing, f.target, f.otb]).toEqual([null, null, null]);
          return;
        }
        const flows = m(f.po)! + m(f.draft)! + (byWarehouse ? m(f.in)! - m(f.out)! : 0);
        // Every period after the current one consumes its whole plan; the current one (group rows)
        // what is left of it.
        if (i !== currentIndex) expect(m(f.closing)).toBe(m(f.opening)! + flows - m(f.plan)!);
        else if (!byWarehouse) expect(m(f.closing)).toBe(m(f.opening)! + flows - Math.max(0, m(f.plan)! - m(f.actual)!));
        const rem = m(f.opening)! + flows - m(f.closing)!;
        expect(m(f.otb)).toBe(Math.max(0, rem + m(f.target)! - m(f.opening)! - m(f.po)!));
        const next = row.periods[i + 1];
        if (next) expect(m(next.opening)).toBe(m(f.closing));
      });
    }
  }

  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: balances, warehouse sums, transfers, channels, and planned volumes`, async () => {
      const { acc, r } = await generated(seed);
      const today = r.day("2026-01-10", 150);
      for (const period of [Period.MONTH, Period.WEEK, Period.TOTAL]) {
        const fromDate = r.day("2025-12-01", 200);
        const q: BreakdownInit = { groupBy: r.pick([GroupBy.SEASONS, GroupBy.SKUS, GroupBy.PRODUCTS]), fromDate, toDate: r.day(fromDate, 120), period };
        const groups = await readBreakdown(p.db, acc, q, today);
        const byWarehouse = await readByWarehouse(p.db, acc, q, today);
        const plans = await readPlans(p.db, acc, q, today);
        // The current period's index among the reported ones (-1: before or after them).
        const currentIndex = (groups[0]?.periods ?? []).findIndex((f, i, all) => f.opening !== null && (i === 0 || all[i - 1].opening === null) && f.start <= today && today <= f.end);
        seen.rows += groups.length;
        seen.warehouseRows += byWarehouse.length;
        if (currentIndex >= 0 && groups.length) seen.current++;
        checkBalance(groups, false, currentIndex);
        checkBalance(byWarehouse, true, currentIndex);
        // Warehouse rows sum to the group row, every volume but open-to-buy.
        expect([...new Set(byWarehouse.map((w) => w.groupKey))]).toEqual(groups.map((g) => g.groupKey));
        for (const field of ["opening", "plan", "actual", "po", "draft", "closing", "target"] as const) {
          const fromGroups = sumBy(groups, field);
          expect([field, sumBy(byWarehouse, field)]).toEqual([field, fromGroups]);
        }
        // Transfers net to zero across a group's warehouses.
        expect(sumBy(byWarehouse, "in")).toEqual(sumBy(byWarehouse, "out"));
        // Sales plans per channel sum to the breakdown's plan and actuals.
        const planSums = new Map<string, number>();
        const actualSums = new Map<string, number>();
        for (const row of plans)
          row.periods.forEach((f, i) => {
            planSums.set(`${row.groupKey}/${i}`, (planSums.get(`${row.groupKey}/${i}`) ?? 0) + m(f.plan)!);
            actualSums.set(`${row.groupKey}/${i}`, (actualSums.get(`${row.groupKey}/${i}`) ?? 0) + m(f.actual)!);
          });
        for (const [k, v] of sumBy(groups, "plan")) expect([k, planSums.get(k) ?? 0]).toEqual([k, v]);
        for (const [k, v] of sumBy(groups, "actual")) expect([k, actualSums.get(k) ?? 0]).toEqual([k, v]);
        if (period === Period.TOTAL) {
          // With period=total the PO figures are planned volumes' for the same query.
          const { period: _, ...volumesQuery } = q;
          const volumes = await p.volumes(acc, volumesQuery);
          const ours = new Map(groups.map((g) => [g.groupKey, [g.periods[0].po, g.periods[0].draft]]));
          for (const v of volumes) expect([v.groupKey, ours.get(v.groupKey) ?? [0, 0]]).toEqual([v.groupKey, [v.po, v.draft]]);
          const theirs = new Map(volumes.map((v) => [v.groupKey, [v.po, v.draft]]));
          for (const g of groups) expect([g.groupKey, theirs.get(g.groupKey) ?? [0, 0]]).toEqual([g.groupKey, [g.periods[0].po, g.periods[0].draft]]);
          const whVolumes = await p.byWarehouse(acc, volumesQuery);
          const whOurs = new Map(byWarehouse.map((w) => [`${w.groupKey}/${w.warehouseId}`, [w.periods[0].po, w.periods[0].draft]]));
          for (const v of whVolumes) if (v.po || v.draft) expect([v.groupKey, v.warehouseId, whOurs.get(`${v.groupKey}/${v.warehouseId}`)]).toEqual([v.groupKey, v.warehouseId, [v.po, v.draft]]);
          // Today inside the window: the opening is planned volumes' stock.
          if (fromDate <= today && today <= q.toDate!) {
            const stockOf = new Map(volumes.map((v) => [v.groupKey, v.stock]));
            for (const g of groups) expect([g.groupKey, g.periods[0].opening]).toEqual([g.groupKey, stockOf.get(g.groupKey) ?? 0]);
          }
        }
      }
    });
  }
});
