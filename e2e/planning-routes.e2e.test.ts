import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createTestDatabase, uniqueName } from "@analytics/testing";
import { checkoutRoot, E2E_ADMIN_TOKEN as ADMIN_TOKEN, signUp, startOnTestServices, startPlatform } from "./harness";
import { plannedVolumes, row, sorted, warehouseRow } from "./planned-volumes";

interface Running {
  baseUrl: string;
  databaseUrl: string;
  close(): Promise<void>;
}

/** The platform on JetStream, and on the in-process bus of the embedded default. */
const busModes: [string, () => Promise<Running>][] = [
  ["JetStream", startOnTestServices],
  [
    "the in-process bus",
    async () => {
      const database = await createTestDatabase();
      const dataDir = join(tmpdir(), uniqueName("planning"));
      const platform = await startPlatform({ DATABASE_URL: database.url, NATS_URL: undefined, ADMIN_TOKEN, DATA_DIR: dataDir });
      return {
        baseUrl: platform.baseUrl,
        databaseUrl: database.url,
        close: async () => {
          await platform.stop();
          await database.drop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  ],
];

/**
 * Planning fed by the real producers only: products through the catalogue's routes, warehouses
 * and stock through inventory's, purchase orders through orders' – each service publishes through
 * its outbox, planning keeps its replica from those messages. (e2e/planning.e2e.test.ts covers the
 * filters and the timezone reading of dates with orders dated in the past, which no route can write.)
 */
describe.each(busModes)("planning over HTTP through the real services on %s: products -> warehouse stock -> POs -> planned volumes", (_mode, start) => {
  let platform: Running;
  let acme: Awaited<ReturnType<typeof signUp>>;
  const warehouseId: Record<string, string> = {};
  const poId: Record<string, string> = {};
  const window = "fromDate=2026-03-01&toDate=2026-03-31";

  const { get, until } = plannedVolumes(() => acme, 20_000);
  /** A by-warehouse row of warehouse `W<letter>` ("" for none). */
  const whRows = (groupKey: string, warehouse: string, stockVolume: number, poVolume: number, draftPOVolume: number) =>
    warehouseRow(groupKey, warehouse ? warehouseId[warehouse] : "", warehouse ? `Warehouse ${warehouse}` : "", stockVolume, poVolume, draftPOVolume);
  const line = (row: string, key: string, quantity: number, deliveryDay: string, more: Record<string, unknown> = {}) => ({
    externalRowID: row,
    key,
    quantity,
    deliveryDate: `2026-${deliveryDay}T12:00:00Z`,
    ...more,
  });
  const order = (no: string, deliveryStatus: number, items: unknown[], externalWarehouseID?: string) => ({
    externalPONo: no,
    orderDate: "2026-02-01T00:00:00Z",
    deliveryStatus,
    ...(externalWarehouseID ? { externalWarehouseID } : {}),
    items,
  });

  // The expected figures, worked out by hand from the writes in beforeAll (window March 2026):
  // stock (available): KA 10 @WH1 + 5 @WH2, KB 3 @WH1, KC 20 @WH2;
  // PO-OPEN (open): KA 4 @WH1, KB 6 @WH2 (its row overrides the order's WH1);
  // PO-DRAFT (draft, no warehouse): KA 8; PO-CANCELLED: KC 50, none counts;
  // PO-DELIVERED (fully delivered): KB 5 of 5 delivered, open 0;
  // PO-APRIL (open): KA 7 delivered in April, outside the window;
  // PO-PARTIAL (partially delivered): KC 10, 6 delivered, open 4 @WH2.
  const seasons = [row("AW26", 20, 4, 0), row("SS26", 18, 10, 8)];

  beforeAll(async () => {
    platform = await start();
    acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Planning via services");
    const created = await acme.api("POST", "/v2/api/products/batch", [
      { key: "KA", sku: "SA", season: "SS26", productGroupId: "P1", variantGroupId: "V1" },
      { key: "KB", sku: "SB", season: "SS26", productGroupId: "P1", variantGroupId: "V2" },
      { key: "KC", sku: "SC", season: "AW26", productGroupId: "P2", variantGroupId: "V3" },
    ]);
    expect(created.status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "WH1", name: "Warehouse WH1" }, { externalId: "WH2", name: "Warehouse WH2" }])).status).toBe(201);
    for (const w of (await acme.api("GET", "/v2/api/warehouses")).body) warehouseId[w.externalId] = w.ID ?? w.id;
    const stock = await acme.api("POST", "/v2/api/warehouses/stock", [
      { key: "KA", availableQuantity: 10, physicalQuantity: 11, date: "2026-02-01T00:00:00Z", externalWarehouseID: "WH1" },
      { key: "KA", availableQuantity: 5, physicalQuantity: 5, date: "2026-02-01T00:00:00Z", externalWarehouseID: "WH2" },
      { key: "KB", availableQuantity: 3, physicalQuantity: 3, date: "2026-02-01T00:00:00Z", externalWarehouseID: "WH1" },
      { key: "KC", availableQuantity: 20, physicalQuantity: 25, date: "2026-02-01T00:00:00Z", externalWarehouseID: "WH2" },
    ]);
    expect(stock.body.map((r: { statusCode: number }) => r.statusCode)).toEqual([200, 200, 200, 200]);
    const orders = await acme.api("POST", "/v2/api/purchaseorders", [
      order("PO-OPEN", 5, [line("1", "KA", 4, "03-10"), line("2", "KB", 6, "03-12", { externalWarehouseID: "WH2" })], "WH1"),
      order("PO-DRAFT", 4, [line("1", "KA", 8, "03-15")]),
      order("PO-CANCELLED", 3, [line("1", "KC", 50, "03-15")], "WH2"),
      order("PO-DELIVERED", 2, [line("1", "KB", 5, "03-05", { deliveries: [{ deliveryID: "D1", quantity: 5 }] })], "WH1"),
      order("PO-APRIL", 5, [line("1", "KA", 7, "04-02")], "WH1"),
      order("PO-PARTIAL", 1, [line("1", "KC", 10, "03-20", { deliveries: [{ deliveryID: "D1", quantity: 2 }, { deliveryID: "D2", quantity: 4 }] })], "WH2"),
    ]);
    expect(orders.status).toBe(201);
    for (const po of orders.body) poId[po.externalPONo] = po.uuid;
  }, 90_000);
  afterAll(async () => {
    await platform?.close();
  });

  it("answers exact volumes for every groupBy (open, draft, cancelled, delivered, partial, outside the window)", async () => {
    const res = await until(`?${window}`, seasons);
    expect(res.status).toBe(200);
    expect((await get(`?${window}&groupBy=seasons`)).body).toEqual(seasons);
    expect((await get(`?${window}&groupBy=products`)).body).toEqual([row("P1", 18, 10, 8), row("P2", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=variants`)).body).toEqual([row("V1", 15, 4, 8), row("V2", 3, 6, 0), row("V3", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=skus`)).body).toEqual([row("KA", 15, 4, 8), row("KB", 3, 6, 0), row("KC", 20, 4, 0)]);
    expect((await get(`?fromDate=2026-04-01&toDate=2026-04-30&groupBy=skus&skus=SA`)).body).toEqual([row("KA", 15, 7, 0)]);
  });

  it("by warehouse: stock and POs per warehouse, draft volume without a warehouse under \"\"", async () => {
    await until(`?${window}`, seasons);
    const res = await get(`/by-warehouse?${window}&groupBy=skus`);
    expect(res.status).toBe(200);
    expect(sorted(res.body)).toEqual(
      sorted([
        whRows("KA", "", 0, 0, 8),
        whRows("KA", "WH1", 10, 4, 0),
        whRows("KA", "WH2", 5, 0, 0),
        whRows("KB", "WH1", 3, 0, 0),
        whRows("KB", "WH2", 0, 6, 0),
        whRows("KC", "WH2", 20, 4, 0),
      ]),
    );
  });

  it("follows stock and order changes, and updatedSince shows only the groups whose PO or draft-PO volume changed after it, those that lost it included", async () => {
    await until(`?${window}`, seasons);
    const before = new Date().toISOString();
    // A newer stock snapshot counts; an older one for the same row is ignored.
    const stock = await acme.api("POST", "/v2/api/warehouses/stock", [
      { key: "KB", availableQuantity: 7, physicalQuantity: 7, date: "2026-02-02T00:00:00Z", externalWarehouseID: "WH1" },
      { key: "KC", availableQuantity: 99, physicalQuantity: 99, date: "2026-01-01T00:00:00Z", externalWarehouseID: "WH2" },
    ]);
    expect(stock.status).toBe(200);
    // The draft leaves draft into WH2 (PUT by id), and the partly delivered order gets its last
    // delivery (the batch, by externalPONo).
    const replaced = await acme.api("PUT", "/v2/api/purchaseorders/", [{ ...order("PO-DRAFT", 5, [line("1", "KA", 8, "03-15")], "WH2"), id: poId["PO-DRAFT"] }]);
    expect(replaced.status).toBe(200);
    const lastDelivery = [{ deliveryID: "D1", quantity: 2 }, { deliveryID: "D2", quantity: 4 }, { deliveryID: "D3", quantity: 4 }];
    const batch = await acme.api("POST", "/v2/api/purchaseorders/batch", [order("PO-PARTIAL", 2, [line("1", "KC", 10, "03-20", { deliveries: lastDelivery })], "WH2")]);
    expect(batch.body.map((r: { statusCode: number; message: string }) => [r.statusCode, r.message])).toEqual([[200, "updated"]]);
    await until(`?${window}&groupBy=skus`, [row("KA", 15, 12, 0), row("KB", 7, 6, 0), row("KC", 20, 0, 0)]);
    expect((await get(`?${window}`)).body).toEqual([row("AW26", 20, 0, 0), row("SS26", 22, 18, 0)]);

    // KB's change was stock only: updatedSince follows PO and draft-PO data.
    expect((await get(`?${window}&groupBy=skus&updatedSince=${encodeURIComponent(before)}`)).body).toEqual([row("KA", 15, 12, 0), row("KC", 20, 0, 0)]);
    const byWarehouse = (await get(`/by-warehouse?${window}&groupBy=skus&updatedSince=${encodeURIComponent(before)}`)).body;
    // The draft line left the no-warehouse group for WH2: that group comes back with zeros (a
    // client syncing incrementally would otherwise keep its 8); KC's order changed in WH2.
    expect(sorted(byWarehouse)).toEqual([whRows("KA", "", 0, 0, 0), whRows("KA", "WH2", 5, 8, 0), whRows("KC", "WH2", 20, 0, 0)]);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await get(`?${window}&groupBy=skus&updatedSince=${encodeURIComponent(later)}`)).body).toEqual([]);
  });

  it("the drift check finds the replica equal to its sources, then reports each kind of drift", async () => {
    await until(`?${window}&groupBy=skus`, [row("KA", 15, 12, 0), row("KB", 7, 6, 0), row("KC", 20, 0, 0)]);
    const check = () => spawnSync(process.execPath, ["deploy/local/planning-drift.mjs", platform.databaseUrl], { cwd: checkoutRoot, encoding: "utf8" });
    const clean = check();
    expect({ status: clean.status, report: JSON.parse(clean.stdout) }).toEqual({
      status: 0,
      report: { notChecked: [], skus: [], warehouses: [], stock: [], purchaseOrders: [], transactions: [], distributionOrders: [], stockTriggers: [], purchaseOrderLines: [], salesDays: [], salesMonths: [], skuMonths: [], groupMonths: [], groupStock: [], groupPoMonths: [], drift: false },
    });
    const sql = new pg.Client({ connectionString: platform.databaseUrl });
    await sql.connect();
    try {
      const a = acme.accountID;
      await sql.query("DELETE FROM planning.skus WHERE account_id = $1 AND key = 'KC'", [a]);
      await sql.query("UPDATE planning.warehouses SET version = version - 1 WHERE account_id = $1 AND external_id = 'WH1'", [a]);
      await sql.query("DELETE FROM planning.stock WHERE account_id = $1 AND warehouse_id = $2", [a, warehouseId.WH2]);
      await sql.query("UPDATE planning.stock SET available_quantity = available_quantity + 1 WHERE account_id = $1 AND warehouse_id = $2", [a, warehouseId.WH1]);
      await sql.query("UPDATE planning.warehouses SET name = 'Renamed' WHERE account_id = $1 AND external_id = 'WH2'", [a]);
      await sql.query("UPDATE planning.purchase_orders SET version = version - 1 WHERE account_id = $1 AND purchase_order_id = $2", [a, poId["PO-OPEN"]]);
      await sql.query("UPDATE planning.purchase_order_lines SET open_quantity = open_quantity + 1 WHERE account_id = $1 AND purchase_order_id = $2", [a, poId["PO-APRIL"]]);
      await sql.query("DELETE FROM planning.purchase_order_lines WHERE account_id = $1 AND purchase_order_id = $2", [a, poId["PO-CANCELLED"]]);
    } finally {
      await sql.end();
    }
    const drifted = check();
    const report = JSON.parse(drifted.stdout);
    const counts = (entries: Record<string, unknown>[]) => entries.map(({ sample: _s, ...c }) => c);
    const a = acme.accountID;
    expect({ status: drifted.status, drift: report.drift, notChecked: report.notChecked }).toEqual({ status: 1, drift: true, notChecked: [] });
    expect(counts(report.skus)).toEqual([{ account_id: a, missing: 1, stale: 0, extra: 0, differing: 0 }]);
    expect(counts(report.warehouses)).toEqual([{ account_id: a, missing: 0, stale: 1, extra: 0, differing: 1 }]);
    // WH2's two rows (KA, KC) are gone; WH1's two (KA, KB) show another available quantity.
    expect(counts(report.stock)).toEqual([{ account_id: a, missing: 2, stale: 0, extra: 0, differing: 2 }]);
    expect(counts(report.purchaseOrders)).toEqual([{ account_id: a, missing: 0, stale: 1, extra: 0, differing: 0 }]);
    // PO-OPEN's two lines are stale with their order, PO-APRIL's line differs, PO-CANCELLED's is gone.
    expect(counts(report.purchaseOrderLines)).toEqual([{ account_id: a, missing: 1, stale: 2, extra: 0, differing: 1 }]);
    expect(report.purchaseOrderLines[0].sample).toEqual(expect.arrayContaining([expect.stringContaining(`differing ${poId["PO-APRIL"]}:`)]));
    expect(report.stock[0].sample.map((k: string) => k.split(" ")[0]).sort()).toEqual(["differing", "differing", "missing", "missing"]);
    expect(report.warehouses[0].sample).toEqual(expect.arrayContaining([`differing ${warehouseId.WH2}`, `stale ${warehouseId.WH1}`]));
  });
});
