import { eventually } from "@analytics/testing";
import { client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";
import { decoded, type GoType } from "./go-client";

/**
 * Planning's later revision over HTTP (CONTRACT "Planning: the later revision"): GET
 * /planning/sales-plans, /planning/breakdown and /planning/breakdown/by-warehouse, fed only by the
 * real producers' routes (products, warehouses, stock, POs, transactions and shipments,
 * distribution orders, stock triggers, stored plans, the account's salesPlanGrowth).
 */
describe("planning's sales plans and breakdowns over HTTP", () => {
  const platform = platformForFile();
  let acme: Awaited<ReturnType<typeof signUp>>;
  const integerIds: Record<string, number> = {};
  const warehouseId: Record<string, string> = {};

  // Periods by month around today (UTC, the account's timezone): P the previous month (ended, so
  // sales and PO figures only), N the current one (the projection's start), X the next one.
  const today = new Date();
  const [year, month] = [today.getUTCFullYear(), today.getUTCMonth()];
  const ymd = (d: Date) => d.toISOString().slice(0, 10);
  const monthOf = (offset: number) => ({ periodStart: ymd(new Date(Date.UTC(year, month + offset, 1))), periodEnd: ymd(new Date(Date.UTC(year, month + offset + 1, 0))) });
  const [P, N, X] = [monthOf(-1), monthOf(0), monthOf(1)];
  /** Noon UTC of a day of the month at `offset`, `yearsBack` years earlier. */
  const dayOf = (offset: number, day: number, yearsBack = 0) => new Date(Date.UTC(year - yearsBack, month + offset, day, 12)).toISOString();
  const window = `fromDate=${P.periodStart}&toDate=${X.periodEnd}`;
  const justNow = () => new Date(Date.now() - 60_000).toISOString();

  const get = (path: string, as = acme) => as.api("GET", `/v2/api/planning/${path}`);
  /** Polls until a route answers `expected` (the services' messages reach planning's replica asynchronously). */
  const until = (path: string, expected: unknown, order: (rows: any[]) => any[] = (rows) => rows, as = acme) => {
    let last: unknown;
    return eventually(
      async () => {
        const res = await get(path, as);
        last = res.body;
        return res.status === 200 && JSON.stringify(order(res.body)) === JSON.stringify(expected) ? res : undefined;
      },
      30_000,
      () => `${path} -> ${JSON.stringify(expected)}; last answer ${JSON.stringify(last)}`,
    );
  };
  const byWarehouse = <T extends { groupKey: string; warehouseId: string }>(rows: T[]) => [...rows].sort((a, b) => a.groupKey.localeCompare(b.groupKey) || a.warehouseId.localeCompare(b.warehouseId));

  // The figures, by hand, from the writes in beforeAll (salesPlanGrowth 0.5):
  // stock: KA 10 @WH1 + 5 @WH2, KB 3 @WH1; stock trigger KA @WH1 min 7.
  // POs: PO-OPEN KA 4 @WH1 in X; PO-DRAFT (draft) KA 8, no warehouse, in X; PO-NOW KB 6 @WH1 in N;
  //   PO-PAST KB 5 @WH1 in P.
  // Sales a year ago: KA ch1 in N's month 12 sold - 2 returned = 10 (and a cancelled 100 that does
  //   not count); KA ch2 in X's month 6; KB ch1 in P's month 4. Baselines: x 1.5.
  // Sales last month (P): KA ch1 3 shipped from WH1, 1 shipped from WH2 -> KA's warehouse shares
  //   3/4, 1/4 (units shipped in the 12 months before today). Sales now (N): KA ch1 3 + 1, unshipped.
  // Stored plan: KA ch1 X 20. Distribution order: KA 2 from WH1 to WH2, delivered in X.
  const sp = (period: object, salesPlanVolume: number, salesActualVolume: number, storedPlanShare: number) => ({ ...period, salesPlanVolume, salesActualVolume, storedPlanShare });
  const salesPlans = [
    { groupKey: "KA", channel: 1, periods: [sp(P, 0, 4, 0), sp(N, 15, 4, 0), sp(X, 20, 0, 1)] },
    { groupKey: "KA", channel: 2, periods: [sp(P, 0, 0, 0), sp(N, 0, 0, 0), sp(X, 9, 0, 0)] },
    { groupKey: "KB", channel: 1, periods: [sp(P, 6, 0, 0), sp(N, 0, 0, 0), sp(X, 0, 0, 0)] },
    // A group with figures in any selected channel has a row for each (zeros included).
    { groupKey: "KB", channel: 2, periods: [sp(P, 0, 0, 0), sp(N, 0, 0, 0), sp(X, 0, 0, 0)] },
  ];
  type Figures = [opening: number | null, plan: number, actual: number, po: number, draft: number, closing: number | null, target: number | null, openToBuy: number | null];
  const bd = (period: object, [openingStockVolume, salesPlanVolume, salesActualVolume, poVolume, draftPOVolume, closingStockVolume, targetStockVolume, openToBuyVolume]: Figures) => ({
    ...period,
    openingStockVolume,
    salesPlanVolume,
    salesActualVolume,
    poVolume,
    draftPOVolume,
    closingStockVolume,
    targetStockVolume,
    openToBuyVolume,
  });
  /** A period that ended before the current one: sales and PO figures only. */
  const past = (period: object, plan: number, actual: number, po: number, draft: number) => bd(period, [null, plan, actual, po, draft, null, null, null]);
  const breakdown = [
    // N: remaining plan max(0, 15 - 4) = 11; closing 15 - 11 = 4; open-to-buy max(0, 11 + 7 - 15 - 0) = 3.
    // X: plan 20 + 9 = 29; closing 4 + 4 + 8 - 29 = -13; open-to-buy max(0, 29 + 7 - 4 - 4) = 28.
    { groupKey: "KA", periods: [past(P, 0, 4, 0, 0), bd(N, [15, 15, 4, 0, 0, 4, 7, 3]), bd(X, [4, 29, 0, 4, 8, -13, 7, 28])] },
    { groupKey: "KB", periods: [past(P, 6, 0, 5, 0), bd(N, [3, 0, 0, 6, 0, 9, 0, 0]), bd(X, [9, 0, 0, 0, 0, 9, 0, 0])] },
  ];
  const wh = (period: object, figures: Figures, transferInVolume: number, transferOutVolume: number) => ({ ...bd(period, figures), transferInVolume, transferOutVolume });
  const pastWh = (period: object, plan: number, actual: number, po: number, draft: number) => wh(period, [null, plan, actual, po, draft, null, null, null], 0, 0);
  const breakdownByWarehouse = () =>
    byWarehouse([
      // KA's draft PO has no warehouse: its own row under "", no plan (KA's plan goes where it shipped).
      { groupKey: "KA", warehouseId: "", warehouseName: "", periods: [pastWh(P, 0, 0, 0, 0), wh(N, [0, 0, 0, 0, 0, 0, 0, 0], 0, 0), wh(X, [0, 0, 0, 0, 8, 8, 0, 0], 0, 0)] },
      // 3/4 of KA's plan and actuals (P: 3 of 4 sold). N: plan 11.25, actual 3, remaining 8.25, closing 1.75, open-to-buy 8.25 + 7 - 10 = 5.25.
      // X: plan 21.75, closing 1.75 + 4 - 21.75 - 2 (transfer out) = -18, open-to-buy 21.75 + 7 - 1.75 - 4 = 23.
      {
        groupKey: "KA",
        warehouseId: warehouseId.WH1,
        warehouseName: "Warehouse 1",
        periods: [pastWh(P, 0, 3, 0, 0), wh(N, [10, 11.25, 3, 0, 0, 1.75, 7, 5.25], 0, 0), wh(X, [1.75, 21.75, 0, 4, 0, -18, 7, 23], 0, 2)],
      },
      // 1/4. N: plan 3.75, actual 1, remaining 2.75, closing 2.25. X: plan 7.25, closing 2.25 - 7.25 + 2 (transfer in) = -3, open-to-buy 7.25 - 2.25 = 5.
      {
        groupKey: "KA",
        warehouseId: warehouseId.WH2,
        warehouseName: "Warehouse 2",
        periods: [pastWh(P, 0, 1, 0, 0), wh(N, [5, 3.75, 1, 0, 0, 2.25, 0, 0], 0, 0), wh(X, [2.25, 7.25, 0, 0, 0, -3, 0, 5], 2, 0)],
      },
      // KB never shipped: its plan goes to the warehouses holding its stock, WH1 alone.
      {
        groupKey: "KB",
        warehouseId: warehouseId.WH1,
        warehouseName: "Warehouse 1",
        periods: [pastWh(P, 6, 0, 5, 0), wh(N, [3, 0, 0, 6, 0, 9, 0, 0], 0, 0), wh(X, [9, 0, 0, 0, 0, 9, 0, 0], 0, 0)],
      },
    ]);

  const order = (no: string, deliveryStatus: number, key: string, quantity: number, deliveryDate: string, externalWarehouseID?: string) => ({
    externalPONo: no,
    orderDate: dayOf(-2, 1),
    deliveryStatus,
    ...(externalWarehouseID ? { externalWarehouseID } : {}),
    items: [{ externalRowID: "1", key, quantity, deliveryDate }],
  });
  const sale = (id: string, channel: number, createdDate: string, items: Record<string, unknown>[], more: Record<string, unknown> = {}) => ({
    externalTransactionID: id,
    channel,
    type: 1,
    createdDate,
    items: items.map((item, i) => ({ externalItemID: String(i + 1), ...item })),
    ...more,
  });
  const statuses = (res: { body: { statusCode: number }[] }) => res.body.map((r) => r.statusCode);

  beforeAll(async () => {
    acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Breakdowns");
    const admin = client(platform.baseUrl, ADMIN_TOKEN);
    expect((await admin("PUT", `/admin/v1/accounts/${acme.accountID}/settings`, { timezone: "UTC", salesPlanGrowth: 0.5 })).status).toBe(200);
    expect(
      (
        await acme.api("POST", "/v2/api/products/batch", [
          { key: "KA", sku: "SA", season: "SS26", productGroupId: "P1" },
          { key: "KB", sku: "SB", season: "SS26", productGroupId: "P1" },
        ])
      ).status,
    ).toBe(201);
    for (const p of (await acme.api("GET", "/v2/api/products?pageSize=100")).body) integerIds[p.key] = p.id;
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "WH1", name: "Warehouse 1" }, { externalId: "WH2", name: "Warehouse 2" }])).status).toBe(201);
    for (const w of (await acme.api("GET", "/v2/api/warehouses")).body) warehouseId[w.externalId] = w.ID ?? w.id;
    const stock = await acme.api("POST", "/v2/api/warehouses/stock", [
      { key: "KA", availableQuantity: 10, physicalQuantity: 10, date: dayOf(-1, 1), externalWarehouseID: "WH1" },
      { key: "KA", availableQuantity: 5, physicalQuantity: 5, date: dayOf(-1, 1), externalWarehouseID: "WH2" },
      { key: "KB", availableQuantity: 3, physicalQuantity: 3, date: dayOf(-1, 1), externalWarehouseID: "WH1" },
    ]);
    expect(statuses(stock)).toEqual([200, 200, 200]);
    expect(statuses(await acme.api("POST", "/v2/api/stocktriggers/batch", [{ key: "KA", warehouseExternalId: "WH1", min: 7 }]))).toEqual([201]);
    const orders = await acme.api("POST", "/v2/api/purchaseorders", [
      order("PO-OPEN", 5, "KA", 4, dayOf(1, 10), "WH1"),
      order("PO-DRAFT", 4, "KA", 8, dayOf(1, 12)),
      order("PO-NOW", 5, "KB", 6, dayOf(0, 15), "WH1"),
      order("PO-PAST", 5, "KB", 5, dayOf(-1, 20), "WH1"),
    ]);
    expect(orders.status).toBe(201);
    const transactions = await acme.api("POST", "/v2/api/transactions", [
      sale("T-LY1", 1, dayOf(0, 5, 1), [{ key: "KA", quantity: 12 }, { key: "KA", quantity: 2, type: 2 }]),
      sale("T-LY-CANCELLED", 1, dayOf(0, 6, 1), [{ key: "KA", quantity: 100 }], { cancelledDate: dayOf(0, 7, 1) }),
      sale("T-LY2", 2, dayOf(1, 5, 1), [{ key: "KA", quantity: 6 }]),
      sale("T-LY3", 1, dayOf(-1, 5, 1), [{ key: "KB", quantity: 4 }]),
      sale("T-P1", 1, dayOf(-1, 10), [{ key: "KA", quantity: 3 }]),
      sale("T-P2", 1, dayOf(-1, 11), [{ key: "KA", quantity: 1 }]),
      sale("T-N1", 1, justNow(), [{ key: "KA", quantity: 3 }]),
      sale("T-N2", 1, justNow(), [{ key: "KA", quantity: 1 }]),
    ]);
    expect(transactions.status).toBe(201);
    for (const [id, quantity, externalWarehouseID] of [
      ["T-P1", 3, "WH1"],
      ["T-P2", 1, "WH2"],
    ] as const) {
      const shipped = await acme.api("POST", `/v2/api/transactions/${id}/items/1/shipments`, { shipmentID: `S-${id}`, quantity, shipmentDate: dayOf(-1, 12), externalWarehouseID });
      expect(shipped.status).toBeLessThan(300);
    }
    const transfer = { externalDOID: "DO-1", externalRowID: "1", key: "KA", quantity: 2, fromWarehouseExternalId: "WH1", toWarehouseExternalId: "WH2", deliveryDate: dayOf(1, 3) };
    expect((await acme.api("POST", "/v2/api/distributionorders", [transfer])).status).toBe(201);
    const month = X.periodStart.slice(0, 7);
    expect(statuses(await acme.api("POST", "/v2/api/planning/sales-plans/batch", [{ key: "KA", channel: 1, month, volume: 20 }]))).toEqual([201]);
  }, 120_000);

  it("GET /planning/sales-plans: a row per group and channel, plan (stored, else last year's net sales x 1.5) and net actuals per month", async () => {
    await until(`sales-plans?${window}&groupBy=skus`, salesPlans);
    // channel narrows to its rows; comma-separated or repeated alike. KB has nothing on channel 2: no row then.
    expect((await get(`sales-plans?${window}&groupBy=skus&channel=2`)).body).toEqual(salesPlans.filter((r) => r.channel === 2 && r.groupKey === "KA"));
    expect((await get(`sales-plans?${window}&groupBy=skus&channel=2,1`)).body).toEqual(salesPlans);
    expect((await get(`sales-plans?${window}&groupBy=skus&channel=1&channel=2&skus=SB`)).body).toEqual(salesPlans.filter((r) => r.groupKey === "KB"));
  });

  it("GET /planning/breakdown: the projection from today's stock, by hand; channel narrows the sales figures only; seasons sum the SKUs", async () => {
    await until(`breakdown?${window}&groupBy=skus`, breakdown);
    // Channel 1 only: KA's X plan is its stored 20 (closing 4 + 4 + 8 - 20 = -4, open-to-buy 20 + 7 - 4 - 4 = 19).
    expect((await get(`breakdown?${window}&groupBy=skus&channel=1&skus=SA`)).body).toEqual([
      { groupKey: "KA", periods: [past(P, 0, 4, 0, 0), bd(N, [15, 15, 4, 0, 0, 4, 7, 3]), bd(X, [4, 20, 0, 4, 8, -4, 7, 19])] },
    ]);
    // Channel 2 only: no plan in N (closing 15), 9 in X (closing 15 + 4 + 8 - 9 = 18, nothing to buy).
    expect((await get(`breakdown?${window}&groupBy=skus&channel=2&skus=SA`)).body).toEqual([
      { groupKey: "KA", periods: [past(P, 0, 0, 0, 0), bd(N, [15, 0, 0, 0, 0, 15, 7, 0]), bd(X, [15, 9, 0, 4, 8, 18, 7, 0])] },
    ]);
    // The season SS26 holds both SKUs: every figure but open-to-buy is their sum.
    const [season] = (await get(`breakdown?${window}`)).body;
    const additive = ["openingStockVolume", "salesPlanVolume", "salesActualVolume", "poVolume", "draftPOVolume", "closingStockVolume", "targetStockVolume"] as const;
    const sum = (i: number, field: (typeof additive)[number]) => {
      const values = breakdown.map((r) => r.periods[i][field]);
      return values.every((v) => v === null) ? null : values.reduce((a: number, v) => a + (v ?? 0), 0);
    };
    expect(season.groupKey).toBe("SS26");
    season.periods.forEach((p: Record<string, unknown>, i: number) => {
      for (const field of additive) expect([field, i, p[field]]).toEqual([field, i, sum(i, field)]);
    });
  });

  it("GET /planning/breakdown/by-warehouse: plan and actuals split by shipments, transfers into closing stock, rows summing to the breakdown", async () => {
    const res = await until(`breakdown/by-warehouse?${window}&groupBy=skus`, breakdownByWarehouse(), byWarehouse);
    // Every volume but open-to-buy sums over a group's warehouses to its breakdown row.
    const fields = ["openingStockVolume", "salesPlanVolume", "salesActualVolume", "poVolume", "draftPOVolume", "closingStockVolume", "targetStockVolume"];
    for (const group of breakdown) {
      const rows = res.body.filter((r: { groupKey: string }) => r.groupKey === group.groupKey);
      group.periods.forEach((period: Record<string, unknown>, i: number) => {
        for (const field of fields) {
          const values = rows.map((r: { periods: Record<string, number | null>[] }) => r.periods[i][field]);
          const total = values.every((v: number | null) => v === null) ? null : values.reduce((a: number, v: number | null) => a + (v ?? 0), 0);
          expect([group.groupKey, i, field, total]).toEqual([group.groupKey, i, field, period[field]]);
        }
      });
    }
  });

  it("period=total: one period, the window; its PO figures and opening stock equal /planning/planned-volumes", async () => {
    await until(`breakdown?${window}&groupBy=skus`, breakdown);
    const total = (await get(`breakdown?${window}&groupBy=skus&period=total`)).body;
    const volumes = (await get(`planned-volumes?${window}&groupBy=skus`)).body;
    expect(total.map((r: any) => r.periods.map((p: any) => [p.periodStart, p.periodEnd]))).toEqual([[[P.periodStart, X.periodEnd]], [[P.periodStart, X.periodEnd]]]);
    expect(total.map((r: any) => ({ groupKey: r.groupKey, stockVolume: r.periods[0].openingStockVolume, poVolume: r.periods[0].poVolume, draftPOVolume: r.periods[0].draftPOVolume }))).toEqual(volumes);
    // Hand-checked too: KA 15 in stock, PO 4, draft 8; KB 3, PO 6 + 5.
    expect(volumes).toEqual([
      { groupKey: "KA", stockVolume: 15, poVolume: 4, draftPOVolume: 8 },
      { groupKey: "KB", stockVolume: 3, poVolume: 11, draftPOVolume: 0 },
    ]);
    // The sales figures of the window are the months' sums.
    expect(total.map((r: any) => [r.periods[0].salesPlanVolume, r.periods[0].salesActualVolume])).toEqual([
      [44, 8],
      [6, 0],
    ]);
    // The by-warehouse total's PO figures equal planned volumes by warehouse.
    const whTotal = (await get(`breakdown/by-warehouse?${window}&groupBy=skus&period=total`)).body;
    const whVolumes = (await get(`planned-volumes/by-warehouse?${window}&groupBy=skus`)).body;
    const poOf = (rows: any[], po: (r: any) => [number, number]) =>
      byWarehouse(rows)
        .map((r: any) => [r.groupKey, r.warehouseId, ...po(r)])
        .filter((r) => r[2] || r[3]);
    expect(poOf(whTotal, (r) => [r.periods[0].poVolume, r.periods[0].draftPOVolume])).toEqual(poOf(whVolumes, (r) => [r.poVolume, r.draftPOVolume]));
  });

  it("weeks: ISO weeks, Monday first, whole at both ends", async () => {
    await until(`breakdown?${window}&groupBy=skus`, breakdown);
    const weeks = (await get(`sales-plans?fromDate=${N.periodStart}&toDate=${N.periodEnd}&groupBy=skus&period=week&channel=1&skus=SA`)).body[0].periods;
    const monday = (date: string) => {
      const d = new Date(`${date}T00:00:00Z`);
      return ymd(new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * 86_400_000));
    };
    expect(weeks[0].periodStart).toBe(monday(N.periodStart));
    expect(weeks.at(-1).periodEnd >= N.periodEnd).toBe(true);
    for (const [i, w] of weeks.entries()) {
      expect(new Date(`${w.periodStart}T00:00:00Z`).getUTCDay()).toBe(1);
      expect((Date.parse(w.periodEnd) - Date.parse(w.periodStart)) / 86_400_000).toBe(6);
      if (i) expect(Date.parse(w.periodStart) - Date.parse(weeks[i - 1].periodEnd)).toBe(86_400_000);
    }
    // The current week's actuals hold this month's KA sales on channel 1 (both made a minute ago).
    const current = weeks.find((w: any) => w.periodStart <= ymd(new Date(justNow())) && ymd(new Date(justNow())) <= w.periodEnd);
    expect(current.salesActualVolume).toBe(4);
    expect(weeks.reduce((a: number, w: any) => a + w.salesActualVolume, 0)).toBe(4);
  });

  it("a Go client reads all three: RFC 3339 dates in the query, integer skuIds, its structs", async () => {
    await until(`breakdown/by-warehouse?${window}&groupBy=skus`, breakdownByWarehouse(), byWarehouse);
    const period = { periodStart: "string", periodEnd: "string" } as const;
    const breakdownPeriod = {
      ...period,
      openingStockVolume: "float",
      salesPlanVolume: "float",
      salesActualVolume: "float",
      poVolume: "float",
      draftPOVolume: "float",
      closingStockVolume: "float",
      targetStockVolume: "float",
      openToBuyVolume: "float",
    } as const;
    const Go: Record<string, GoType> = {
      SalesPlanRow: [{ groupKey: "string", channel: "int", periods: [{ ...period, salesPlanVolume: "float", salesActualVolume: "float", storedPlanShare: "float" }] }],
      BreakdownRow: [{ groupKey: "string", periods: [breakdownPeriod] }],
      BreakdownWarehouseRow: [{ groupKey: "string", warehouseId: "string", warehouseName: "string", periods: [{ ...breakdownPeriod, transferInVolume: "float", transferOutVolume: "float" }] }],
    };
    const goQuery = `fromDate=${P.periodStart}T00:00:00Z&toDate=${X.periodEnd}T00:00:00Z&groupBy=skus&period=month&channel=1&channel=2&skuIds=${integerIds.KA}`;
    const ka = (rows: { groupKey: string }[]) => rows.filter((r) => r.groupKey === "KA");
    expect(decoded(Go.SalesPlanRow, (await get(`sales-plans?${goQuery}`)).body)).toEqual(ka(salesPlans));
    expect(decoded(Go.BreakdownRow, (await get(`breakdown?${goQuery}`)).body)).toEqual(ka(breakdown));
    expect(byWarehouse(decoded(Go.BreakdownWarehouseRow, (await get(`breakdown/by-warehouse?${goQuery}`)).body))).toEqual(ka(breakdownByWarehouse()));
  });

  it("updatedSince: the groups changed after it, by a stored plan and by a sale", async () => {
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Breakdowns since");
    expect((await other.api("POST", "/v2/api/products/batch", [{ key: "KU" }, { key: "KV" }])).status).toBe(201);
    expect((await other.api("POST", "/v2/api/warehouses", [{ externalId: "WH", name: "Warehouse" }])).status).toBe(201);
    const stock = (key: string) => ({ key, availableQuantity: 1, physicalQuantity: 1, date: dayOf(-1, 1), externalWarehouseID: "WH" });
    expect(statuses(await other.api("POST", "/v2/api/warehouses/stock", [stock("KU"), stock("KV")]))).toEqual([200, 200]);
    const oneMonth = `fromDate=${N.periodStart}&toDate=${N.periodEnd}&groupBy=skus&channel=1`;
    const keys = (rows: { groupKey: string }[]) => rows.map((r) => r.groupKey);
    // Both SKUs and their stock reach planning's replica: each has a breakdown row (and no sales-plans row yet).
    await until(`breakdown?${oneMonth}`, ["KU", "KV"], keys, other);
    expect((await get(`sales-plans?${oneMonth}`, other)).body).toEqual([]);
    const afterSetup = new Date().toISOString();
    const planned = await other.api("POST", "/v2/api/planning/sales-plans/batch", [{ key: "KU", channel: 1, month: N.periodStart.slice(0, 7), volume: 5 }]);
    expect(statuses(planned)).toEqual([201]);
    for (const path of ["sales-plans", "breakdown", "breakdown/by-warehouse"]) await until(`${path}?${oneMonth}&updatedSince=${encodeURIComponent(afterSetup)}`, ["KU"], keys, other);
    const afterPlan = new Date().toISOString();
    expect((await other.api("POST", "/v2/api/transactions", [sale("T-1", 1, justNow(), [{ key: "KV", quantity: 2 }])])).status).toBe(201);
    for (const path of ["sales-plans", "breakdown", "breakdown/by-warehouse"]) await until(`${path}?${oneMonth}&updatedSince=${encodeURIComponent(afterPlan)}`, ["KV"], keys, other);
    expect((await get(`breakdown?${oneMonth}`, other)).body.map((r: any) => [r.groupKey, r.periods[0].salesActualVolume])).toEqual([
      ["KU", 0],
      ["KV", 2],
    ]);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await get(`breakdown?${oneMonth}&updatedSince=${encodeURIComponent(later)}`, other)).body).toEqual([]);
  });

  it("a sale naming its product by EAN alone (a POS scan) counts toward the product with that EAN", async () => {
    const pos = await signUp(platform.baseUrl, ADMIN_TOKEN, "Scans");
    expect((await pos.api("POST", "/v2/api/products/batch", [{ key: "KE", ean: "4006381333931" }, { key: "KF", ean: "4006381333948" }])).status).toBe(201);
    const sold = [{ ean: "4006381333931", quantity: 3 }, { ean: "4006381333948", quantity: 2 }, { ean: "4006381333948", quantity: 1, type: 2 }];
    expect((await pos.api("POST", "/v2/api/transactions", [sale("T-E", 1, justNow(), sold)])).status).toBe(201);
    const actuals = (rows: { groupKey: string; periods: { salesActualVolume: number }[] }[]) => rows.map((r) => [r.groupKey, r.periods[0].salesActualVolume]);
    await until(`breakdown?fromDate=${N.periodStart}&toDate=${N.periodEnd}&groupBy=skus`, [["KE", 3], ["KF", 1]], actuals, pos);
  });

  it("answers 400 naming the parameter: period, channel, a window of more than 106 periods, and every planned-volumes 400", async () => {
    const bad = async (query: string, parameter: string) => {
      for (const path of ["sales-plans", "breakdown", "breakdown/by-warehouse"]) {
        const res = await get(`${path}?${query}`);
        expect({ path, query, status: res.status, error: res.body.error }).toEqual({ path, query, status: 400, error: "Bad Request" });
        expect({ path, query, message: res.body.message, named: res.body.details?.[0]?.path?.startsWith(parameter) }).toEqual({
          path,
          query,
          message: expect.stringContaining(parameter),
          named: true,
        });
      }
    };
    const w = "fromDate=2026-01-05&toDate=2026-03-31";
    await bad(`${w}&period=day`, "period");
    await bad(`${w}&period=`, "period");
    await bad(`${w}&channel=3`, "channel");
    await bad(`${w}&channel=0`, "channel");
    await bad(`${w}&channel=x`, "channel");
    await bad(`${w}&channel=1,3`, "channel");
    await bad(`${w}&channel=1&channel=1.5`, "channel");
    // 107 ISO weeks: Monday 2026-01-05 to Monday 2028-01-17; 107 months; what 106 of either is not.
    await bad("fromDate=2026-01-05&toDate=2028-01-17&period=week", "toDate");
    await bad("fromDate=2026-01-31&toDate=2034-11-01", "toDate");
    await bad("fromDate=2026-01-31&toDate=2034-11-01&period=month", "toDate");
    await bad("toDate=2026-03-31", "fromDate");
    await bad("fromDate=2026-03-01", "toDate");
    await bad("fromDate=2026-04-01&toDate=2026-03-01", "toDate");
    await bad("fromDate=2026-3-1&toDate=2026-03-31", "fromDate");
    await bad(`${w}&groupBy=weeks`, "groupBy");
    await bad(`${w}&skuStatus=8`, "skuStatus");
    await bad(`${w}&activePlanning=yes`, "activePlanning");
    await bad(`${w}&updatedSince=last-week`, "updatedSince");
    await bad(`${w}&skuIds=not-a-uuid`, "skuIds");
    await bad(`${w}&channels=1`, "channels");
    // The bound itself, and total over any window, are answered.
    for (const path of ["sales-plans", "breakdown", "breakdown/by-warehouse"]) {
      expect((await get(`${path}?fromDate=2026-01-05&toDate=2028-01-16&period=week`)).status).toBe(200);
      expect((await get(`${path}?fromDate=2026-01-31&toDate=2034-10-01`)).status).toBe(200);
      expect((await get(`${path}?fromDate=2000-01-01&toDate=2099-12-31&period=total`)).status).toBe(200);
      expect((await client(platform.baseUrl)("GET", `/v2/api/planning/${path}?${w}`)).status).toBe(401);
    }
  });

  it("is in the OpenAPI document, the planned-volumes endpoints marked deprecated", async () => {
    const doc = (await client(platform.baseUrl)("GET", "/v2/api/openapi.json")).body;
    for (const path of ["sales-plans", "breakdown", "breakdown/by-warehouse"]) {
      const operation = doc.paths[`/v2/api/planning/${path}`].get;
      expect(operation.deprecated).toBeUndefined();
      expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["fromDate", "toDate", "groupBy", "skuIds", "updatedSince", "period", "channel"]));
      expect(operation.responses["200"].content["application/json"].example[0]).toEqual(expect.objectContaining({ groupKey: expect.any(String), periods: expect.any(Array) }));
    }
    expect(doc.paths["/v2/api/planning/planned-volumes"].get.deprecated).toBe(true);
    expect(doc.paths["/v2/api/planning/planned-volumes/by-warehouse"].get.deprecated).toBe(true);
  });

  it("answers the planned-volumes endpoints with Deprecation, Sunset and the successor's Link, as the document declares", async () => {
    const doc = (await client(platform.baseUrl)("GET", "/v2/api/openapi.json")).body;
    for (const [path, successor] of [
      ["planned-volumes", "/v2/api/planning/breakdown"],
      ["planned-volumes/by-warehouse", "/v2/api/planning/breakdown/by-warehouse"],
    ]) {
      const answer = await get(`${path}?${window}&groupBy=skus`);
      expect(answer.status).toBe(200);
      // RFC 9745: deprecated on 2026-11-27 (@Unix seconds); RFC 8594: removed after 2027-06-30, six months and more ahead.
      expect([answer.headers.get("deprecation"), answer.headers.get("sunset"), answer.headers.get("link")]).toEqual([
        `@${Date.UTC(2026, 10, 27) / 1000}`,
        "Wed, 30 Jun 2027 00:00:00 GMT",
        `<${successor}>; rel="successor-version"`,
      ]);
      expect(Object.keys(doc.paths[`/v2/api/planning/${path}`].get.responses["200"].headers)).toEqual(expect.arrayContaining(["Deprecation", "Sunset", "Link"]));
      // A 304 (the client's copy is current) says so too.
      const again = await acme.api("GET", `/v2/api/planning/${path}?${window}&groupBy=skus`, undefined, { "if-none-match": answer.headers.get("etag")! });
      expect([again.status, again.headers.get("deprecation"), again.headers.get("sunset")]).toEqual([304, `@${Date.UTC(2026, 10, 27) / 1000}`, "Wed, 30 Jun 2027 00:00:00 GMT"]);
    }
    const current = await get(`breakdown?${window}&groupBy=skus`);
    expect([current.headers.get("deprecation"), current.headers.get("sunset")]).toEqual([null, null]);
  });

  /**
   * Pages and CSV (CONTRACT "Pages and CSV"), on an account of its own on the same platform: six
   * SKUs, the second's key holding a comma, quotes and a newline, each with stock in two
   * warehouses and a stored plan.
   */
  describe("pages and CSV", () => {
    let pages: Awaited<ReturnType<typeof signUp>>;
    const ODD = 'B,"b"\nb';
    const keys = ["A", ODD, "C", "D", "E", "F"];
    const at = (path: string, headers: Record<string, string> = {}) => pages.api("GET", `/v2/api/planning/${path}`, undefined, headers);
    const routes = ["sales-plans", "breakdown", "breakdown/by-warehouse", "planned-volumes", "planned-volumes/by-warehouse"];
    /** The relative URL of a Link header's rel="next", if any. */
    const nextOf = (link: string | null) => link?.match(/<([^>]*)>; rel="next"/)?.[1];
    /** Follows rel="next" from `first` to the end: each page's rows, and the number of pages. */
    const walk = async (first: string) => {
      const rows: unknown[] = [];
      let pagesSeen = 0;
      for (let url: string | undefined = first; url; ) {
        const res = await pages.api("GET", url);
        expect(res.status).toBe(200);
        rows.push(...res.body);
        pagesSeen++;
        url = nextOf(res.headers.get("link"));
      }
      return { rows, pagesSeen };
    };
    /** RFC 4180 records of a CSV text (quoted fields, doubled quotes, CRLF). */
    const records = (text: string) => {
      const out: string[][] = [];
      let field = "";
      let record: string[] = [];
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
          for (i++; i < text.length && !(text[i] === '"' && text[i + 1] !== '"'); i++) field += text[i] === '"' ? text[++i] : text[i];
        } else if (c === ",") {
          record.push(field);
          field = "";
        } else if (c === "\r" && text[i + 1] === "\n") {
          record.push(field);
          out.push(record);
          [field, record] = ["", []];
          i++;
        } else field += c;
      }
      expect(field + record.join("")).toBe(""); // the text ends with CRLF
      return out;
    };
    /** The CSV records a JSON answer makes: the row's keys, then each period's fields (null empty); a row without periods, its fields. */
    const csvOfJson = (rows: Record<string, any>[], rowKeys: string[]) => {
      const cell = (v: unknown) => (v === null ? "" : String(v));
      return rows.flatMap((r) => (r.periods ? r.periods.map((p: object) => [...rowKeys.map((k) => cell(r[k])), ...Object.values(p).map(cell)]) : [Object.values(r).map(cell)]));
    };

    beforeAll(async () => {
      pages = await signUp(platform.baseUrl, ADMIN_TOKEN, "Pages");
      expect((await pages.api("POST", "/v2/api/products/batch", keys.map((key, i) => ({ key, sku: `S${i}`, season: "SS26" })))).status).toBe(201);
      expect((await pages.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "North, \"main\"" }, { externalId: "W2", name: "South" }])).status).toBe(201);
      const stock = keys.flatMap((key, i) => ["W1", "W2"].map((w) => ({ key, availableQuantity: i + 1, physicalQuantity: i + 1, date: dayOf(-1, 1), externalWarehouseID: w })));
      expect(statuses(await pages.api("POST", "/v2/api/warehouses/stock", stock))).toEqual(stock.map(() => 200));
      const plans = keys.map((key, i) => ({ key, channel: 1, month: X.periodStart.slice(0, 7), volume: i + 0.5 }));
      expect(statuses(await pages.api("POST", "/v2/api/planning/sales-plans/batch", plans))).toEqual(plans.map(() => 201));
      // Every answer holds every SKU once planning's replica has them all.
      for (const route of routes) {
        await eventually(
          async () => {
            const res = await at(`${route}?${window}&groupBy=skus`);
            return res.status === 200 && new Set(res.body.map((r: { groupKey: string }) => r.groupKey)).size === keys.length && (!route.includes("by-warehouse") || res.body.length === 2 * keys.length);
          },
          30_000,
          `${route} with all six SKUs`,
        );
      }
    }, 120_000);

    it("pages of 2 groups across 3 pages equal the whole answer; rel=next while groups remain, none after the last page", async () => {
      for (const route of routes) {
        const whole = (await at(`${route}?${window}&groupBy=skus`)).body;
        const first = await at(`${route}?${window}&groupBy=skus&pageSize=2`);
        // The first page's last group holds the comma, quotes and newline: the link carries it encoded.
        expect([route, nextOf(first.headers.get("link"))]).toEqual([route, `/v2/api/planning/${route}?${window}&groupBy=skus&pageSize=2&after=B%2C%22b%22%0Ab`]);
        expect(first.body.every((r: { groupKey: string }) => ["A", ODD].includes(r.groupKey))).toBe(true);
        const { rows, pagesSeen } = await walk(`/v2/api/planning/${route}?${window}&groupBy=skus&pageSize=2`);
        expect([route, pagesSeen, rows]).toEqual([route, 3, whole]);
        // A page of the whole answer and more: no next link.
        const all = await at(`${route}?${window}&groupBy=skus&pageSize=6`);
        expect([all.body, all.headers.get("link") ?? ""]).toEqual([whole, route.startsWith("planned") ? expect.stringMatching(/^<[^>]*>; rel="successor-version"$/) : ""]);
      }
    });

    it("a group's warehouse or channel rows stay on one page; after past the end is an empty page without next", async () => {
      const one = await at(`breakdown/by-warehouse?${window}&groupBy=skus&pageSize=1`);
      expect(one.body.map((r: { groupKey: string; warehouseName: string }) => [r.groupKey, r.warehouseName]).sort()).toEqual([
        ["A", 'North, "main"'],
        ["A", "South"],
      ]);
      expect(nextOf(one.headers.get("link"))).toContain("after=A");
      const plans = await at(`sales-plans?${window}&groupBy=skus&pageSize=1&after=A`);
      expect(plans.body.map((r: { groupKey: string; channel: number }) => [r.groupKey, r.channel])).toEqual([
        [ODD, 1],
        [ODD, 2],
      ]);
      for (const route of routes) {
        const past = await at(`${route}?${window}&groupBy=skus&pageSize=10&after=ZZZ`);
        expect([route, past.status, past.body, nextOf(past.headers.get("link"))]).toEqual([route, 200, [], undefined]);
      }
      // The deprecated endpoints' Link carries both the next page and the successor.
      const deprecated = await at(`planned-volumes?${window}&groupBy=skus&pageSize=1`);
      expect(deprecated.headers.get("link")).toBe(`</v2/api/planning/breakdown>; rel="successor-version", </v2/api/planning/planned-volumes?${window}&groupBy=skus&pageSize=1&after=A>; rel="next"`);
      expect(deprecated.headers.get("deprecation")).toBe(`@${Date.UTC(2026, 10, 27) / 1000}`);
    });

    it("Accept: text/csv: a header row, one line per row and period with the row's keys first, RFC 4180 quoting, as an attachment", async () => {
      const expected: Record<string, { header: string; keys: string[] }> = {
        "sales-plans": { header: "groupKey,channel,periodStart,periodEnd,salesPlanVolume,salesActualVolume,storedPlanShare", keys: ["groupKey", "channel"] },
        breakdown: {
          header: "groupKey,periodStart,periodEnd,openingStockVolume,salesPlanVolume,salesActualVolume,poVolume,draftPOVolume,closingStockVolume,targetStockVolume,openToBuyVolume",
          keys: ["groupKey"],
        },
        "breakdown/by-warehouse": {
          header:
            "groupKey,warehouseId,warehouseName,periodStart,periodEnd,openingStockVolume,salesPlanVolume,salesActualVolume,poVolume,draftPOVolume,closingStockVolume,targetStockVolume,openToBuyVolume,transferInVolume,transferOutVolume",
          keys: ["groupKey", "warehouseId", "warehouseName"],
        },
        "planned-volumes": { header: "groupKey,stockVolume,poVolume,draftPOVolume", keys: ["groupKey"] },
        "planned-volumes/by-warehouse": { header: "groupKey,warehouseId,warehouseName,stockVolume,poVolume,draftPOVolume", keys: ["groupKey", "warehouseId", "warehouseName"] },
      };
      for (const route of routes) {
        const json = (await at(`${route}?${window}&groupBy=skus`)).body;
        const csv = await at(`${route}?${window}&groupBy=skus`, { accept: "text/csv" });
        expect([route, csv.status, csv.headers.get("content-type"), csv.headers.get("content-disposition")]).toEqual([
          route,
          200,
          "text/csv; charset=utf-8; header=present",
          `attachment; filename="${route.replace("/", "-")}.csv"`,
        ]);
        const [header, ...lines] = records(csv.body);
        expect([route, header.join(",")]).toEqual([route, expected[route].header]);
        expect([route, lines]).toEqual([route, csvOfJson(json, expected[route].keys)]);
        // The odd key quoted, its quotes doubled; a warehouse name with a comma and quotes too.
        expect(csv.body).toContain(`"B,""b""\nb",`);
        if (route.includes("by-warehouse")) expect(csv.body).toContain(`,"North, ""main""",`);
        // A page of CSV: the same lines as the JSON page, and the same next link.
        const page = await at(`${route}?${window}&groupBy=skus&pageSize=2&after=C`, { accept: "text/csv;q=0.9, application/json;q=0.5" });
        const jsonPage = await at(`${route}?${window}&groupBy=skus&pageSize=2&after=C`);
        expect([route, records(page.body).slice(1), page.headers.get("link")]).toEqual([route, csvOfJson(jsonPage.body, expected[route].keys), jsonPage.headers.get("link")]);
      }
      // The document declares both, with examples: pageSize and after, and the CSV beside the JSON.
      const doc = (await client(platform.baseUrl)("GET", "/v2/api/openapi.json")).body;
      for (const route of routes) {
        const operation = doc.paths[`/v2/api/planning/${route}`].get;
        expect([route, ...operation.parameters.filter((p: { name: string }) => ["pageSize", "after"].includes(p.name)).map((p: { name: string }) => p.name)]).toEqual([route, "pageSize", "after"]);
        expect([route, operation.responses["200"].content["text/csv"].example.split("\r\n")[0]]).toEqual([route, expected[route].header]);
        expect([route, operation.responses["406"]]).toEqual([route, expect.anything()]);
      }
      // Null is an empty field: the previous month's stock figures.
      const breakdownCsv = records((await at(`breakdown?${window}&groupBy=skus&pageSize=1`, { accept: "text/csv" })).body);
      expect(breakdownCsv[1]).toEqual(["A", P.periodStart, P.periodEnd, "", "0", "0", "0", "0", "", "", ""]);
    });

    it("an Accept that excludes JSON and CSV is a 406; a bad pageSize or after is a 400 naming it", async () => {
      for (const route of routes) {
        for (const accept of ["application/xml", "text/csv;q=0, application/json;q=0", "text/html, application/*;q=0"]) {
          const res = await at(`${route}?${window}&groupBy=skus`, { accept });
          expect([route, accept, res.status]).toEqual([route, accept, 406]);
        }
        expect((await at(`${route}?${window}&groupBy=skus`, { accept: "text/html, */*;q=0.1" })).headers.get("content-type")).toContain("application/json");
        for (const bad of ["0", "10001", "abc", "1.5", "-1", ""]) {
          const res = await at(`${route}?${window}&groupBy=skus&pageSize=${bad}`);
          expect([route, bad, res.status, res.body.details?.[0]?.path]).toEqual([route, bad, 400, "pageSize"]);
        }
        const long = await at(`${route}?${window}&groupBy=skus&pageSize=1&after=${"x".repeat(501)}`);
        expect([route, long.status, long.body.details?.[0]?.path]).toEqual([route, 400, "after"]);
        expect((await at(`${route}?${window}&groupBy=skus&pageSize=10000&after=${"x".repeat(500)}`)).status).toBe(200);
        const alone = await at(`${route}?${window}&groupBy=skus&after=A`);
        expect([route, alone.status, alone.body.details?.[0]?.path]).toEqual([route, 400, "after"]);
      }
    });

    it("each page and each format has its own weak ETag: a page's tag is a 304 for that page only", async () => {
      for (const route of routes) {
        const url = `${route}?${window}&groupBy=skus&pageSize=2`;
        const first = await at(url);
        const tag = first.headers.get("etag")!;
        expect(tag).toMatch(/^W\//);
        expect([route, (await at(url, { "if-none-match": tag })).status]).toEqual([route, 304]);
        const second = await at(`${url}&after=${encodeURIComponent(ODD)}`, { "if-none-match": tag });
        expect([route, second.status, second.body.length > 0]).toEqual([route, 200, true]);
        const csv = await at(url, { "if-none-match": tag, accept: "text/csv" });
        expect([route, csv.status]).toEqual([route, 200]);
        expect((await at(url, { "if-none-match": csv.headers.get("etag")!, accept: "text/csv" })).status).toBe(304);
        expect(csv.headers.get("vary")).toMatch(/accept(,|$)/i);
      }
    });
  });
});
