import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import pino from "pino";
import { callerHeaders } from "@analytics/auth";
import { inventoryV1, ordersV1 } from "@analytics/contracts";
import { createServiceClient, type RunningService } from "@analytics/rpc";
import { databaseAndStreamForFile, eventually } from "@analytics/testing";
import { startInventoryService } from "@analytics/inventory-service";
import { startOrdersService } from "@analytics/orders-service";
import { startPlanningService } from "@analytics/planning-service";

const internalToken = "d".repeat(40);

/**
 * The drift check over the breakdowns' replica tables: distribution orders (version, open
 * quantity) against orders.distribution_orders and stock-trigger minimums (version, min) against
 * inventory.stock_triggers. The sources are written through the services and reach planning over
 * the bus; planning's rows are then drifted one way each.
 */
describe("planning-drift.mjs: distribution orders, stock triggers and sales rollups", () => {
  const files = databaseAndStreamForFile();
  const services: RunningService[] = [];
  const account = randomUUID();
  const as = { headers: callerHeaders(internalToken, { accountId: account, apiKeyId: randomUUID() }) };
  const check = () => {
    const run = spawnSync(process.execPath, [join(__dirname, "..", "planning-drift.mjs"), files.url], { encoding: "utf8" });
    return { status: run.status, report: JSON.parse(run.stdout) };
  };

  beforeAll(async () => {
    const deps = { databaseUrl: files.url, bus: files.stream.bus, logger: pino({ level: "silent" }), internalToken, port: 0 };
    for (const start of [startOrdersService, startInventoryService, startPlanningService]) services.push(await start(deps));
  });
  afterAll(async () => {
    for (const s of services) await s.close();
  });

  it("finds none when planning holds what the sources hold, then each kind of drift", async () => {
    const orders = createServiceClient(ordersV1.OrdersService, services[0].url);
    const inventory = createServiceClient(inventoryV1.InventoryService, services[1].url);
    // Open, partly delivered, over-delivered, completed and cancelled rows.
    const rows = [
      { externalRowId: "1", quantity: 10 },
      { externalRowId: "2", quantity: 10, deliveredQuantity: 4 },
      { externalRowId: "3", quantity: 10, deliveredQuantity: 4, cancelledDate: { seconds: 1_770_000_000n } },
      { externalRowId: "4", quantity: 5, deliveredQuantity: 5 },
    ];
    await orders.writeDistributionOrders({ distributionOrders: rows.map((r) => ({ externalDoid: "DO-1", key: "K1", ...r })), mode: ordersV1.WriteMode.UPSERT }, as);
    await orders.writeDistributionOrders({ distributionOrders: [{ externalDoid: "DO-1", externalRowId: "1", key: "K1", quantity: 12 }], mode: ordersV1.WriteMode.UPSERT }, as);
    await inventory.upsertWarehouses({ warehouses: [{ externalId: "W1", name: "W1" }] }, as);
    await inventory.upsertStockTriggers({ triggers: ["K1", "K2"].map((key, i) => ({ trigger: { warehouseExternalId: "W1", key, skuId: randomUUID(), min: i ? 7 : undefined }, skuFound: true })) }, as);

    const planning = files.openDb("planning");
    // Warehouses, distribution orders and triggers reach planning over the bus: then nothing has drifted.
    // (Each check is a process of its own, a second or two on a busy machine: a few tries.)
    const clean = await eventually(
      async () => {
        const c = check();
        return c.status === 0 && c;
      },
      60_000,
      () => `no drift; last report ${JSON.stringify(check().report)}`,
    );
    expect(clean.report).toMatchObject({ distributionOrders: [], stockTriggers: [], drift: false });
    expect(clean.report.notChecked).not.toContain("distributionOrders");
    expect(clean.report.notChecked).not.toContain("stockTriggers");

    const doId = async (row: string) => (await planning.raw("SELECT id FROM orders.distribution_orders WHERE external_row_id = ?", [row])).rows[0].id;
    await planning("distribution_orders").where({ distribution_order_id: await doId("1") }).update({ version: planning.raw("version - 1") });
    await planning("distribution_orders").where({ distribution_order_id: await doId("2") }).update({ open_quantity: 5 });
    await planning("distribution_orders").where({ distribution_order_id: await doId("3") }).delete();
    await planning("distribution_orders").insert({ account_id: account, distribution_order_id: randomUUID(), version: 1, open_quantity: 1 });
    const [t1, t2] = (await planning.raw("SELECT id FROM inventory.stock_triggers ORDER BY id")).rows.map((r: { id: string }) => r.id);
    await planning("stock_trigger_minimums").where({ stock_trigger_id: t1 }).update({ min: 0 });
    await planning("stock_trigger_minimums").where({ stock_trigger_id: t2 }).delete();

    const drifted = check();
    const counts = (entries: Record<string, unknown>[]) => entries.map(({ sample: _s, ...c }) => c);
    expect(drifted.status).toBe(1);
    expect(drifted.report.drift).toBe(true);
    expect(counts(drifted.report.distributionOrders)).toEqual([{ account_id: account, missing: 1, stale: 1, extra: 1, differing: 1 }]);
    // The unset min that became 0 differs; the deleted row is missing.
    expect(counts(drifted.report.stockTriggers)).toEqual([{ account_id: account, missing: 1, stale: 0, extra: 0, differing: 1 }]);
    expect(drifted.report.stockTriggers[0].sample.sort()).toEqual([`differing ${t1}`, `missing ${t2}`]);
  });

  it("the sales rollups against planning's own sale lines: none, then each kind of drift", async () => {
    const orders = createServiceClient(ordersV1.OrdersService, services[0].url);
    const other = randomUUID();
    const asOther = { headers: callerHeaders(internalToken, { accountId: other, apiKeyId: randomUUID() }) };
    const planning = files.openDb("planning");
    // Planning knows the two SKUs the sales name (straight into its replica): their per-SKU cells follow.
    await planning("skus").insert(["K0", "K1"].map((key) => ({ account_id: other, sku_id: randomUUID(), version: 1, key, status: 1, active_planning: true })));
    await orders.writeTransactions(
      {
        transactions: ["T1", "T2", "T3"].map((ext, i) => ({ externalTransactionId: ext, channel: 1 + (i % 2), type: 1, items: [{ externalItemId: "i1", key: `K${i % 2}`, quantity: 2 + i }] })),
        mode: ordersV1.WriteMode.UPSERT,
      },
      asOther,
    );
    // (The test before leaves drift of its own account behind: only this account's entries count.)
    const mine = (entries: { account_id: string }[]) => entries.filter((e) => e.account_id === other);
    const clean = await eventually(
      async () => {
        const c = check();
        const lines = (await planning("sales_lines").where({ account_id: other }).count({ n: "*" }))[0].n;
        return Number(lines) === 3 && !mine(c.report.transactions).length && c;
      },
      60_000,
      () => `the three transactions in planning; last report ${JSON.stringify(check().report)}`,
    );
    expect([mine(clean.report.salesDays), mine(clean.report.salesMonths), mine(clean.report.skuMonths), mine(clean.report.groupMonths)]).toEqual([[], [], [], []]);
    expect(clean.report.notChecked).not.toContain("salesDays");

    const day = (await planning("sales_days").where({ account_id: other, ref: "K0" }).first("day")).day;
    await planning("sales_days").where({ account_id: other, ref: "K0" }).update({ units: planning.raw("units + 1") });
    await planning("sales_days").where({ account_id: other, ref: "K1" }).update({ units: 0, shipped: 0, lines: 0 });
    await planning("sales_days").insert({ account_id: other, day, ref_kind: 2, ref: "S9", channel: 1, external_warehouse_id: "", units: 1, shipped: 1, lines: 1 });
    await planning("sales_months").where({ account_id: other, ref: "K1" }).delete();
    // A per-SKU cell off by one unit (K0's SKU, its month of sales).
    const k0 = (await planning("skus").where({ account_id: other, key: "K0" }).first("sku_id")).sku_id;
    await planning("sku_months").where({ account_id: other, sku_id: k0 }).where("lines", ">", 0).update({ units: planning.raw("units + 1") });

    const drifted = check();
    const counts = (entries: Record<string, unknown>[]) => entries.map(({ sample: _s, ...c }) => c);
    expect(drifted.status).toBe(1);
    expect(counts(mine(drifted.report.salesDays))).toEqual([{ account_id: other, missing: 1, stale: 0, extra: 1, differing: 1 }]);
    expect(counts(mine(drifted.report.salesMonths))).toEqual([{ account_id: other, missing: 1, stale: 0, extra: 0, differing: 0 }]);
    // K1's cells (its month, and the baseline a year later) no longer follow from sales_months: extra.
    expect(counts(mine(drifted.report.skuMonths))).toEqual([{ account_id: other, missing: 0, stale: 0, extra: 2, differing: 1 }]);
    // The group months still hold K0's unit as sold: its month differs (by season: '').
    expect(counts(mine(drifted.report.groupMonths))).toEqual([{ account_id: other, missing: 0, stale: 0, extra: 0, differing: 1 }]);
  });
});
