import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { planningV1 } from "@analytics/contracts";
import { distributionOrder, planningUnderTest, purchaseOrder, settings, sku, stock, stockTrigger, transaction, warehouse } from "./fixtures";
import { queryOf, readBreakdown, readByWarehouse, readPlans } from "./breakdown-helpers";
import { breakdown, breakdownByWarehouse, salesPlans } from "../src/breakdown";
import { plannedVolumes } from "../src/repository";
import { volumeQueryOf } from "../src/validation";

const { GroupBy } = planningV1;

/**
 * updatedSince on the breakdowns: exactly the groups (by warehouse: rows) an input of which
 * changed after it. One season per kind of input; S7 changes nothing. Stock rows' and the
 * account's change times are written by the replica's appliers of those inputs (another step):
 * here they are set directly, as those appliers will.
 */
describe("breakdown updatedSince: the groups whose inputs changed", () => {
  const p = planningUnderTest();
  const acc = randomUUID();
  const N = "00000000-0000-4000-8000-000000000001";
  const S = "00000000-0000-4000-8000-000000000002";
  const skus = Array.from({ length: 7 }, (_, i) => ({ id: randomUUID(), key: `K${i + 1}`, season: `S${i + 1}` }));
  const [A, B, C, , E, F, G] = skus.map((s) => s.id);
  const old = new Date("2026-02-01T00:00:00Z");
  const recent = new Date("2026-02-10T00:00:00Z");
  const since = "2026-02-05T00:00:00Z";
  const q = { groupBy: GroupBy.SEASONS, fromDate: "2026-03-01", toDate: "2026-03-31" };
  const today = "2026-03-18";

  beforeAll(async () => {
    await p.apply([
      settings(acc, 1, "UTC"),
      warehouse(acc, N, 1, "WN", "North"),
      warehouse(acc, S, 1, "WS", "South"),
      ...skus.map((s) => sku(acc, s.id, 1, { key: s.key, season: s.season })),
      ...skus.map((s) => stock(acc, N, s.id, 1, 5)),
      ...skus.map((s, i) => stockTrigger(acc, i + 1, 1, { skuId: s.id, warehouseId: N, min: 1 })),
      ...skus.map((s) => transaction(acc, randomUUID(), 1, { createdDate: "2026-03-02T12:00:00Z", items: [{ key: s.key, quantity: 1 }] }, old)),
      ...skus.map((s) => purchaseOrder(acc, randomUUID(), 1, 0, [{ skuId: s.id, warehouse: "WN", date: "2026-03-20", quantity: 3 }], old)),
      ...skus.map((s) => distributionOrder(acc, randomUUID(), 1, { key: s.key, from: "WN", to: "WS", deliveryDate: "2026-03-21T12:00:00Z", quantity: 2 }, old)),
    ]);
    await p.client.upsertSalesPlans({ plans: skus.map((s) => ({ key: s.key, skuFound: true, skuId: s.id, channel: 1, month: "2026-03", volume: { value: "4" } })) }, p.as(acc));
    // What was written now stands for what was written before `since`.
    await p.db.raw("UPDATE stock SET changed_at = ? WHERE account_id = ?", [old, acc]);
    await p.db.raw("UPDATE stock_trigger_minimums SET changed_at = ? WHERE account_id = ?", [old, acc]);
    await p.db.raw("UPDATE sales_plans SET updated_at = ? WHERE account_id = ?", [old, acc]);
    await p.db.raw("UPDATE accounts SET changed_at = ? WHERE account_id = ?", [old, acc]);

    // After `since`: S1 a sale, S2 a plan upload, S3 a stock change (N), S4 a distribution order
    // (N to S), S5 a stock trigger (S), S6 a PO line (S); S8 a removal recorded in changed_groups (N).
    await p.apply([
      transaction(acc, randomUUID(), 1, { createdDate: "2026-03-03T12:00:00Z", items: [{ key: "K1", quantity: 2 }] }, recent),
      distributionOrder(acc, randomUUID(), 1, { key: "K4", from: "WN", to: "WS", deliveryDate: "2026-03-22T12:00:00Z", quantity: 1 }, recent),
      stockTrigger(acc, 100, 1, { skuId: E, warehouseId: S, min: 2 }),
      purchaseOrder(acc, randomUUID(), 1, 0, [{ skuId: F, warehouse: "WS", date: "2026-03-25", quantity: 7 }], recent),
    ]);
    await p.client.upsertSalesPlans({ plans: [{ key: "K2", skuFound: true, skuId: B, channel: 1, month: "2026-03", volume: { value: "9" } }] }, p.as(acc));
    await p.db.raw("UPDATE stock SET changed_at = ? WHERE account_id = ? AND sku_id = ?", [recent, acc, C]);
    await p.db("changed_groups").insert({ account_id: acc, sku_id: G, external_warehouse_id: "", warehouse_id: N, season: "S8", key: "K7", changed_at: recent });
  });

  it("the breakdown and sales plans: the groups of every kind of input changed, zeros where nothing is left", async () => {
    const groups = ["S1", "S2", "S3", "S4", "S5", "S6", "S8"];
    expect((await readBreakdown(p.db, acc, { ...q, updatedSince: since }, today)).map((r) => r.groupKey)).toEqual(groups);
    expect([...new Set((await readPlans(p.db, acc, { ...q, updatedSince: since }, today)).map((r) => r.groupKey))]).toEqual(groups);
    // S8 left nothing: its row is zeros.
    const s8 = (await readBreakdown(p.db, acc, { ...q, updatedSince: since }, today)).find((r) => r.groupKey === "S8")!;
    expect(s8.periods[0]).toMatchObject({ opening: 0, plan: 0, actual: 0, po: 0, draft: 0, closing: 0, target: 0, otb: 0 });
    // Nothing changed after the last change; everything after an earlier time.
    expect(await readBreakdown(p.db, acc, { ...q, updatedSince: new Date(Date.now() + 60_000).toISOString() }, today)).toEqual([]);
    expect((await readBreakdown(p.db, acc, { ...q, updatedSince: "2026-01-01" }, today)).map((r) => r.groupKey)).toEqual([...groups.slice(0, 6), "S7", "S8"]);
  });

  it("by warehouse: the rows the changes touched (a sale or a plan: every row of its group)", async () => {
    const rows = (await readByWarehouse(p.db, acc, { ...q, updatedSince: since }, today)).map((r) => `${r.groupKey}/${r.warehouseName}`);
    expect(rows).toEqual(["S1/North", "S1/South", "S2/North", "S2/South", "S3/North", "S4/North", "S4/South", "S5/South", "S6/South", "S8/North"]);
  });

  it("a settings change changes every group", async () => {
    const other = randomUUID();
    await p.apply([settings(other, 1, "UTC"), warehouse(other, N, 1, "WN", "North"), sku(other, A, 1, { key: "KA", season: "X1" }), sku(other, B, 1, { key: "KB", season: "X2" }), stock(other, N, A, 1, 1), stock(other, N, B, 1, 1)]);
    await p.db.raw("UPDATE stock SET changed_at = ? WHERE account_id = ?", [old, other]);
    await p.db.raw("UPDATE accounts SET changed_at = ? WHERE account_id = ?", [old, other]);
    expect(await readBreakdown(p.db, other, { ...q, updatedSince: since }, today)).toEqual([]);
    await p.db.raw("UPDATE accounts SET changed_at = ? WHERE account_id = ?", [recent, other]);
    expect((await readBreakdown(p.db, other, { ...q, updatedSince: since }, today)).map((r) => r.groupKey)).toEqual(["X1", "X2"]);
  });

  it("pages: the first pageSize groups after `after` (a group SKUs left too, only when after it), and the page's last key while groups follow", async () => {
    // K7's SKU (now in S7) also left S0: a group before `after` that the SKUs after it name.
    await p.db("changed_groups").insert({ account_id: acc, sku_id: G, external_warehouse_id: "", warehouse_id: N, season: "S0", key: "K7", changed_at: recent });
    for (const read of [breakdown, salesPlans, breakdownByWarehouse]) {
      const page = async (pageSize: number, after?: string) => {
        const rows: { groupKey: string }[] = [];
        const nextAfter: (string | undefined)[] = [];
        for await (const chunk of read(p.db, acc, queryOf({ ...q, updatedSince: since, pageSize, after }), { today })) {
          rows.push(...chunk);
          nextAfter.push(chunk.nextAfter);
        }
        return { groups: [...new Set(rows.map((r) => r.groupKey))], nextAfter: [...new Set(nextAfter)] };
      };
      expect([read.name, await page(3)]).toEqual([read.name, { groups: ["S0", "S1", "S2"], nextAfter: ["S2"] }]);
      expect([read.name, await page(3, "S2")]).toEqual([read.name, { groups: ["S3", "S4", "S5"], nextAfter: ["S5"] }]);
      expect([read.name, await page(2, "S5")]).toEqual([read.name, { groups: ["S6", "S8"], nextAfter: [undefined] }]);
      expect([read.name, await page(10, "S8")]).toEqual([read.name, { groups: [], nextAfter: [] }]);
    }
    const volumes = async (pageSize: number, after?: string) => {
      const rows = await plannedVolumes(p.db, acc, volumeQueryOf(create(planningV1.PlannedVolumesQuerySchema, { ...q, pageSize, after })), true);
      return { groups: [...new Set(rows.map((r) => r.groupKey))], nextAfter: rows.nextAfter };
    };
    expect(await volumes(3, "S2")).toEqual({ groups: ["S3", "S4", "S5"], nextAfter: "S5" });
    expect(await volumes(3, "S5")).toEqual({ groups: ["S6", "S7"], nextAfter: undefined });
  });
});
