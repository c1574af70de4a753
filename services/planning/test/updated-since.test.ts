import { randomUUID } from "node:crypto";
import { planningV1 } from "@analytics/contracts";
import { byKeyThenWarehouse, planningUnderTest, purchaseOrder, sku, warehouse } from "./fixtures";

const { GroupBy } = planningV1;

/**
 * updatedSince returns every group whose PO or draft-PO volume changed after it, in either
 * direction: also the groups a line left (moved to another warehouse, removed by a replace) and
 * the groups a SKU left when its season changed, with their new volumes, zeros included.
 */
describe("updatedSince: groups that lost volume come back with zeros", () => {
  const p = planningUnderTest();
  const acc = randomUUID();
  const [A, B, N, S, PO] = Array.from({ length: 5 }, () => randomUUID());
  const before = new Date("2026-02-01T00:00:00Z");
  const moved = new Date("2026-02-10T00:00:00Z");
  const row = (groupKey: string, po: number) => ({ groupKey, stock: 0, po, draft: 0 });
  const whRow = (groupKey: string, warehouseId: string, warehouseName: string, po: number) => ({ groupKey, warehouseId, warehouseName, stock: 0, po, draft: 0 });

  beforeAll(async () => {
    await p.apply([
      sku(acc, A, 1, { key: "KA", season: "S1", productGroupId: "P1" }),
      sku(acc, B, 1, { key: "KB", season: "S2", productGroupId: "P2" }),
      warehouse(acc, N, 1, "WN", "North"),
      warehouse(acc, S, 1, "WS", "South"),
      purchaseOrder(acc, PO, 1, 0, [
        { skuId: A, warehouse: "WN", date: "2026-03-10", quantity: 13, itemId: "1" },
        { skuId: B, warehouse: "WN", date: "2026-03-10", quantity: 5, itemId: "2" },
      ], before),
    ]);
    // The line of A moves from North to South; the line of B is dropped by the replace.
    await p.apply([purchaseOrder(acc, PO, 2, 0, [{ skuId: A, warehouse: "WS", date: "2026-03-10", quantity: 13, itemId: "1" }], moved)]);
  });

  it("by warehouse: the warehouse a line left and the group of a removed line, for every groupBy", async () => {
    const since = "2026-02-05T00:00:00Z";
    expect(await p.byWarehouse(acc, { groupBy: GroupBy.SKUS, updatedSince: since })).toEqual(
      [whRow("KA", N, "North", 0), whRow("KA", S, "South", 13), whRow("KB", N, "North", 0)].sort(byKeyThenWarehouse),
    );
    expect(await p.byWarehouse(acc, { groupBy: GroupBy.SEASONS, updatedSince: since })).toEqual(
      [whRow("S1", N, "North", 0), whRow("S1", S, "South", 13), whRow("S2", N, "North", 0)].sort(byKeyThenWarehouse),
    );
    expect(await p.byWarehouse(acc, { groupBy: GroupBy.PRODUCTS, updatedSince: since })).toEqual(
      [whRow("P1", N, "North", 0), whRow("P1", S, "South", 13), whRow("P2", N, "North", 0)].sort(byKeyThenWarehouse),
    );
    // Nothing changed after the move.
    expect(await p.byWarehouse(acc, { groupBy: GroupBy.SKUS, updatedSince: "2026-02-11T00:00:00Z" })).toEqual([]);
  });

  it("without warehouses: the group whose only line was removed is there with zeros", async () => {
    expect(await p.volumes(acc, { groupBy: GroupBy.SEASONS, updatedSince: "2026-02-05T00:00:00Z" })).toEqual([row("S1", 13), row("S2", 0)]);
  });

  it("a SKU that changes season: the season it left and the one it joined", async () => {
    const justBefore = new Date(Date.now() - 1000).toISOString();
    await p.apply([sku(acc, A, 2, { key: "KA", season: "S3", productGroupId: "P1" })]);
    expect(await p.volumes(acc, { groupBy: GroupBy.SEASONS, updatedSince: justBefore })).toEqual([row("S1", 0), row("S3", 13)]);
    // A SKU update that leaves its groups as they were changes no group.
    const later = new Date().toISOString();
    await p.apply([sku(acc, A, 3, { key: "KA", season: "S3", productGroupId: "P1", brandName: "Acme" })]);
    expect(await p.volumes(acc, { groupBy: GroupBy.SEASONS, updatedSince: later })).toEqual([]);
  });
});
