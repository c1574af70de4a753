import { randomUUID } from "node:crypto";
import { distributionOrder, planningUnderTest, stockTrigger } from "./fixtures";

/** The breakdowns' replica inputs (migration 006): distribution orders and stock-trigger minimums. */
describe("breakdown inputs: distribution orders and stock-trigger minimums", () => {
  const p = planningUnderTest();

  const orders = async (accountId: string) =>
    (
      await p.db.raw(
        `SELECT key, from_external_warehouse_id AS "from", to_external_warehouse_id AS "to", to_char(delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS at, open_quantity AS open, version::int AS version
         FROM distribution_orders WHERE account_id = ? ORDER BY key`,
        [accountId],
      )
    ).rows;

  it("a distribution order's open quantity: quantity minus delivered, at least 0, none once completed or cancelled", async () => {
    const acc = randomUUID();
    await p.apply([
      distributionOrder(acc, randomUUID(), 1, { key: "A", from: "WN", to: "WS", deliveryDate: "2026-03-10T08:00:00Z", quantity: 10, deliveredQuantity: 3, status: "IN TRANSIT" }),
      distributionOrder(acc, randomUUID(), 1, { key: "B", from: "WN", to: "WS", deliveryDate: "2026-03-10T08:00:00Z", quantity: 10, deliveredQuantity: 12, status: "PROCESSING" }),
      distributionOrder(acc, randomUUID(), 1, { key: "C", from: "WN", to: "WS", quantity: 10, deliveredQuantity: 10 }),
      distributionOrder(acc, randomUUID(), 1, { key: "D", from: "WN", quantity: 10, status: "CANCELLED", cancelledDate: "2026-03-01T00:00:00Z" }),
      distributionOrder(acc, randomUUID(), 1, { key: "E", to: "WS", quantity: 10, cancelledDate: "2026-03-01T00:00:00Z", status: "PROCESSING" }),
    ]);
    expect(await orders(acc)).toEqual([
      { key: "A", from: "WN", to: "WS", at: "2026-03-10T08:00", open: 7, version: 1 },
      { key: "B", from: "WN", to: "WS", at: "2026-03-10T08:00", open: 0, version: 1 },
      { key: "C", from: "WN", to: "WS", at: null, open: 0, version: 1 },
      { key: "D", from: "WN", to: "", at: null, open: 0, version: 1 },
      { key: "E", from: "", to: "WS", at: null, open: 0, version: 1 },
    ]);
  });

  it("a distribution order is replaced only by a newer version, its change time the source's updatedAt", async () => {
    const acc = randomUUID();
    const id = randomUUID();
    const v2 = distributionOrder(acc, id, 2, { key: "A", from: "WN", to: "WS", deliveryDate: "2026-03-12T08:00:00Z", quantity: 4 }, new Date("2026-02-02T00:00:00Z"));
    const v1 = distributionOrder(acc, id, 1, { key: "A", from: "WN", to: "WS", deliveryDate: "2026-03-10T08:00:00Z", quantity: 9 }, new Date("2026-02-01T00:00:00Z"));
    await p.apply([v2]);
    await p.apply([v1]);
    expect(await orders(acc)).toEqual([{ key: "A", from: "WN", to: "WS", at: "2026-03-12T08:00", open: 4, version: 2 }]);
    expect((await p.db("distribution_orders").where({ account_id: acc }).first("changed_at")).changed_at.toISOString()).toBe("2026-02-02T00:00:00.000Z");
  });

  it("a stock trigger's min, by version; its change time moves only when its SKU, warehouse or min changes", async () => {
    const acc = randomUUID();
    const [sku, wh] = [randomUUID(), randomUUID()];
    const stored = async () => p.db("stock_trigger_minimums").where({ account_id: acc }).first("sku_id", "warehouse_id", "min", "version", "changed_at");
    await p.apply([stockTrigger(acc, 7, 1, { skuId: sku, warehouseId: wh, min: 5 })]);
    const first = await stored();
    expect(first).toMatchObject({ sku_id: sku, warehouse_id: wh, min: 5, version: 1 });
    await p.apply([stockTrigger(acc, 7, 2, { skuId: sku, warehouseId: wh, min: 5, key: "other field" })]);
    expect(await stored()).toMatchObject({ version: 2, changed_at: first.changed_at });
    await p.apply([stockTrigger(acc, 7, 3, { skuId: sku, warehouseId: wh, min: 8 })]);
    await p.apply([stockTrigger(acc, 7, 1, { skuId: sku, warehouseId: wh, min: 1 })]);
    const third = await stored();
    expect(third).toMatchObject({ min: 8, version: 3 });
    expect(third.changed_at.getTime()).toBeGreaterThan(first.changed_at.getTime());
    // No min: NULL (counted as 0); no warehouse id: NULL.
    await p.apply([stockTrigger(acc, 7, 4, { skuId: sku, warehouseId: "" })]);
    expect(await stored()).toMatchObject({ min: null, warehouse_id: null });
  });
});
