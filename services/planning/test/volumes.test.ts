import { randomUUID } from "node:crypto";
import { planningV1 } from "@analytics/contracts";
import { byKeyThenWarehouse, planningUnderTest, purchaseOrder, settings, sku, stock, warehouse, type Query } from "./fixtures";

const { GroupBy } = planningV1;

/**
 * Every parameter and volume rule on hand-computed figures. The account's data (window March 2026):
 *
 * | SKU | season | product / variant | status, activePlanning | stock WH1, WH2 |
 * | A   | SS26   | P1 / V1           | 2, true                | 10, 5          |
 * | B   | SS26   | P1 / V2           | 3, true                | 3, -           |
 * | C   | AW26   | P2 / V3           | 1 (inactive), true     | 100, -         |
 * | D   | AW26   | P2 / V4           | 2, false               | 50, -          |
 * | E   | EE     | P3 / V5           | 2, true                | -              |
 *
 * Orders: p1 open: A WH1 03-01 4 (first day), B WH2 03-31 6 (last day); p2 not delivered: A WH2
 * 04-01 7 (day after); p3 partially delivered: A WH1 03-15 10 with 3 open; p4 cancelled: A WH1
 * 03-15 50; p5 draft: A (no warehouse) 03-20 8; p5b draft: B WH1 03-20 2; p6 fully delivered: B
 * WH1 03-10 5, 0 open; p7 open: C WH1 9; p8 open: D WH1 11; p10 open: A in an unknown warehouse
 * WHX 03-11 1; p11 cancelled: E WH1 03-10 3. p4 and p11 changed 2026-02-10T12:00Z, p5
 * 2026-02-10T03:00Z (02-09 22:00 in New York), everything else 2026-02-01.
 */
describe("planned volumes: parameters and rules on hand-computed figures", () => {
  const p = planningUnderTest();
  const acc = randomUUID();
  const [A, B, C, D, E, W1, W2] = Array.from({ length: 7 }, () => randomUUID());
  const row = (groupKey: string, stock: number, po: number, draft: number) => ({ groupKey, stock, po, draft });
  const whRow = (groupKey: string, warehouseId: string, warehouseName: string, stock: number, po: number, draft: number) => ({
    groupKey,
    warehouseId,
    warehouseName,
    stock,
    po,
    draft,
  });
  const volumes = (q: Query = {}, accountId = acc) => p.volumes(accountId, q);
  const byWarehouse = (q: Query = {}, accountId = acc) => p.byWarehouse(accountId, q);

  beforeAll(async () => {
    const old = new Date("2026-02-01T00:00:00Z");
    const late = new Date("2026-02-10T12:00:00Z");
    const po = (status: number, lines: Parameters<typeof purchaseOrder>[4], at = old) => purchaseOrder(acc, randomUUID(), 1, status, lines, at);
    await p.apply([
      sku(acc, A, 1, {
        key: "KA",
        sku: "SA",
        season: "SS26",
        productGroupId: "P1",
        variantGroupId: "V1",
        status: 2,
        brandName: "Nike",
        categoryName: "Shoes",
        size: "M",
        department: "D1",
        gender: "G1",
        collection: "C1",
        color: "Red",
        subCategory: "Sub1",
        productType: "T1",
        merchandiseType: "M1",
        pimCustom3: "X",
      }),
      sku(acc, B, 1, {
        key: "KB",
        sku: "SB",
        season: "SS26",
        productGroupId: "P1",
        variantGroupId: "V2",
        status: 3,
        brandName: "Adidas",
        categoryName: "Shirts",
        size: "L",
        department: "D2",
        gender: "G2",
        collection: "C2",
        color: "Blue",
        subCategory: "Sub2",
        productType: "T2",
        merchandiseType: "M2",
        pimCustom3: "Y",
      }),
      sku(acc, C, 1, { key: "KC", season: "AW26", productGroupId: "P2", variantGroupId: "V3", status: 1 }),
      sku(acc, D, 1, { key: "KD", season: "AW26", productGroupId: "P2", variantGroupId: "V4", status: 2, activePlanning: false }),
      sku(acc, E, 1, { key: "KE", season: "EE", productGroupId: "P3", variantGroupId: "V5" }),
      warehouse(acc, W1, 1, "WH1", "Main"),
      warehouse(acc, W2, 1, "WH2", "Second"),
      stock(acc, W1, A, 1, 10),
      stock(acc, W2, A, 1, 5),
      stock(acc, W1, B, 1, 3),
      stock(acc, W1, C, 1, 100),
      stock(acc, W1, D, 1, 50),
      po(5, [
        { skuId: A, warehouse: "WH1", date: "2026-03-01", quantity: 4 },
        { skuId: B, warehouse: "WH2", date: "2026-03-31", quantity: 6 },
      ]),
      po(0, [{ skuId: A, warehouse: "WH2", date: "2026-04-01", quantity: 7 }]),
      po(1, [{ skuId: A, warehouse: "WH1", date: "2026-03-15", quantity: 10, open: 3 }]),
      po(3, [{ skuId: A, warehouse: "WH1", date: "2026-03-15", quantity: 50 }], late),
      po(4, [{ skuId: A, date: "2026-03-20", quantity: 8 }], new Date("2026-02-10T03:00:00Z")),
      po(4, [{ skuId: B, warehouse: "WH1", date: "2026-03-20", quantity: 2 }]),
      po(2, [{ skuId: B, warehouse: "WH1", date: "2026-03-10", quantity: 5, open: 0 }]),
      po(5, [{ skuId: C, warehouse: "WH1", date: "2026-03-10", quantity: 9 }]),
      po(5, [{ skuId: D, warehouse: "WH1", date: "2026-03-10", quantity: 11 }]),
      po(5, [{ skuId: A, warehouse: "WHX", date: "2026-03-11", quantity: 1 }]),
      po(3, [{ skuId: E, warehouse: "WH1", date: "2026-03-10", quantity: 3 }], late),
      settings(acc, 1, "America/New_York"),
    ]);
  });

  it("groups by season by default: stock is available quantity, PO the open quantity in the window, draft apart", async () => {
    // SS26: stock 10+5+3; PO 4 (first day) + 3 (open of 10) + 1 (unknown warehouse) + 6 (last day)
    // + 0 (fully delivered); draft 8 + 2. Outside the window, cancelled, inactive and
    // non-planning SKUs count nothing; AW26 and EE have no row.
    expect(await volumes()).toEqual([row("SS26", 18, 14, 10)]);
    expect(await volumes({ groupBy: GroupBy.SEASONS })).toEqual([row("SS26", 18, 14, 10)]);
  });

  it("groups by product group, variant group and SKU key", async () => {
    expect(await volumes({ groupBy: GroupBy.PRODUCTS })).toEqual([row("P1", 18, 14, 10)]);
    expect(await volumes({ groupBy: GroupBy.VARIANTS })).toEqual([row("V1", 15, 8, 8), row("V2", 3, 6, 2)]);
    expect(await volumes({ groupBy: GroupBy.SKUS })).toEqual([row("KA", 15, 8, 8), row("KB", 3, 6, 2)]);
  });

  it("the window is inclusive at both ends and moves with fromDate/toDate", async () => {
    expect(await volumes({ groupBy: GroupBy.SKUS, fromDate: "2026-03-02", toDate: "2026-03-30" })).toEqual([row("KA", 15, 4, 8), row("KB", 3, 0, 2)]);
    expect(await volumes({ groupBy: GroupBy.SKUS, fromDate: "2026-04-01", toDate: "2026-04-01" })).toEqual([row("KA", 15, 7, 0), row("KB", 3, 0, 0)]);
  });

  it("skuStatus defaults to every status but inactive; activePlanning defaults to true", async () => {
    expect(await volumes({ skuStatus: [1] })).toEqual([row("AW26", 100, 9, 0)]);
    expect(await volumes({ skuStatus: [1, 2, 3] })).toEqual([row("AW26", 100, 9, 0), row("SS26", 18, 14, 10)]);
    expect(await volumes({ skuStatus: [3], groupBy: GroupBy.SKUS })).toEqual([row("KB", 3, 6, 2)]);
    expect(await volumes({ activePlanning: false })).toEqual([row("AW26", 50, 11, 0)]);
    expect(await volumes({ activePlanning: true })).toEqual([row("SS26", 18, 14, 10)]);
  });

  it("applies each product filter", async () => {
    const onlyA = [row("KA", 15, 8, 8)];
    const onlyB = [row("KB", 3, 6, 2)];
    const skus = (q: Query) => volumes({ groupBy: GroupBy.SKUS, ...q });
    expect(await skus({ seasons: ["SS26"] })).toEqual([...onlyA, ...onlyB]);
    expect(await skus({ seasons: ["AW26"] })).toEqual([]);
    expect(await skus({ variants: ["V1"] })).toEqual(onlyA);
    expect(await skus({ products: ["P1"] })).toEqual([...onlyA, ...onlyB]);
    expect(await skus({ products: ["P2"] })).toEqual([]);
    expect(await skus({ skus: ["SB"] })).toEqual(onlyB);
    expect(await skus({ skuIds: [A] })).toEqual(onlyA);
    expect(await skus({ brands: ["nike"] })).toEqual(onlyA);
    expect(await skus({ categories: ["Shirts"] })).toEqual(onlyB);
    expect(await skus({ sizes: ["M"] })).toEqual(onlyA);
    expect(await skus({ departments: ["D2"] })).toEqual(onlyB);
    expect(await skus({ genders: ["G1"] })).toEqual(onlyA);
    expect(await skus({ collections: ["C2"] })).toEqual(onlyB);
    expect(await skus({ colors: ["Red", "Green"] })).toEqual(onlyA);
    expect(await skus({ subcategories: ["Sub2"] })).toEqual(onlyB);
    expect(await skus({ productTypes: ["T1"] })).toEqual(onlyA);
    expect(await skus({ merchandiseTypes: ["M2"] })).toEqual(onlyB);
    expect(await skus({ pimCustom: [{ index: 3, values: ["X"] }] })).toEqual(onlyA);
    expect(await skus({ pimCustom: [{ index: 4, values: ["X"] }] })).toEqual([]);
    // Filters combine with AND.
    expect(await skus({ colors: ["Red"], sizes: ["L"] })).toEqual([]);
  });

  it("by warehouse: stock per warehouse, PO per the line's warehouse, \"\" for none or an unknown one", async () => {
    expect(await byWarehouse()).toEqual(
      [whRow("SS26", "", "", 0, 1, 8), whRow("SS26", W1, "Main", 13, 7, 2), whRow("SS26", W2, "Second", 5, 6, 0)].sort(byKeyThenWarehouse),
    );
    expect(await byWarehouse({ groupBy: GroupBy.SKUS, skuIds: [B] })).toEqual(
      [whRow("KB", W1, "Main", 3, 0, 2), whRow("KB", W2, "Second", 0, 6, 0)].sort(byKeyThenWarehouse),
    );
  });

  it("updatedSince keeps only groups whose PO data changed after it, cancelled orders included", async () => {
    expect(await volumes({ groupBy: GroupBy.SKUS, updatedSince: "2026-02-05T00:00:00Z" })).toEqual([row("KA", 15, 8, 8), row("KE", 0, 0, 0)]);
    expect(await volumes({ groupBy: GroupBy.SKUS, updatedSince: "2026-02-10T12:00:00Z" })).toEqual([]);
    expect(await volumes({ groupBy: GroupBy.SKUS, updatedSince: "2026-02-10T13:00:00+02:00" })).toEqual([row("KA", 15, 8, 8), row("KE", 0, 0, 0)]);
    // Per row for by-warehouse: p5 (draft, no warehouse) and p4 (cancelled, WH1) changed.
    expect(await byWarehouse({ groupBy: GroupBy.SKUS, skuIds: [A], updatedSince: "2026-02-10T00:00:00Z" })).toEqual(
      [whRow("KA", "", "", 0, 1, 8), whRow("KA", W1, "Main", 10, 7, 0)].sort(byKeyThenWarehouse),
    );
  });

  it("reads a date-only updatedSince as midnight in the account's timezone", async () => {
    // 2026-02-10 in New York is 05:00Z: p5 (03:00Z) is before it, p4 (12:00Z) after.
    expect(await byWarehouse({ groupBy: GroupBy.SKUS, skuIds: [A], updatedSince: "2026-02-10" })).toEqual([whRow("KA", W1, "Main", 10, 7, 0)]);
    // Without settings the day starts at midnight UTC.
    const other = randomUUID();
    const s = randomUUID();
    await p.apply([
      sku(other, s, 1, { key: "K", season: "S" }),
      purchaseOrder(other, randomUUID(), 1, 4, [{ skuId: s, date: "2026-03-20", quantity: 8 }], new Date("2026-02-10T03:00:00Z")),
    ]);
    expect(await volumes({ updatedSince: "2026-02-10" }, other)).toEqual([row("S", 0, 0, 8)]);
  });

  it("isolates accounts: another account sees nothing of this one, even by its SKU ids", async () => {
    const stranger = randomUUID();
    expect(await volumes({}, stranger)).toEqual([]);
    expect(await volumes({ skuIds: [A, B] }, stranger)).toEqual([]);
    expect(await byWarehouse({ skuStatus: [1, 2, 3, 4, 5, 6, 7] }, stranger)).toEqual([]);
  });
});
