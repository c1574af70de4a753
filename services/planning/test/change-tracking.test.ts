import { randomUUID } from "node:crypto";
import type { Knex } from "knex";
import { planningV1 } from "@analytics/contracts";
import { compactChangedGroups, recordMovedDistributionOrders, recordRegroupedSkus, storedSkuPlaces } from "../src/repository";
import { planningService } from "../src/service";
import { planningUnderTest, purchaseOrder, settings, sku, stock, transaction, warehouse } from "./fixtures";

const { GroupBy } = planningV1;

/**
 * What the replica records as it writes, so that the breakdowns' updatedSince finds every group
 * whose inputs changed: when a stock row's figures and an account's settings last changed, and in
 * changed_groups what leaves no row behind (sales lines a transaction's update drops, SKUs that
 * move between groups). Replays and older versions move nothing.
 */
describe("change tracking on write", () => {
  const p = planningUnderTest();

  const stockChangedAt = async (acc: string) => (await p.db("stock").where({ account_id: acc }).first("changed_at"))?.changed_at as Date;
  const accountChangedAt = async (acc: string) => (await p.db("accounts").where({ account_id: acc }).first("changed_at"))?.changed_at as Date;
  /** The account's changed_groups rows, plain and sorted. */
  const changed = async (acc: string) =>
    (
      await p.db.raw(
        `SELECT key, season, external_warehouse_id AS warehouse, warehouse_id, po_volume, changed_at FROM changed_groups WHERE account_id = ?
         ORDER BY key, season, external_warehouse_id, po_volume`,
        [acc],
      )
    ).rows.map((r: { key: string; season: string; warehouse: string; warehouse_id: string | null; po_volume: boolean; changed_at: Date }) => ({ ...r, changed_at: r.changed_at.toISOString() }));

  it("stock: changed_at is when a newer version changed its figures; replays and older versions leave it", async () => {
    const [acc, w, s] = [randomUUID(), randomUUID(), randomUUID()];
    const before = new Date();
    await p.apply([stock(acc, w, s, 2, 5)]);
    const first = await stockChangedAt(acc);
    expect(first.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    // The same version again, an older one with other figures, a newer one with the same figures.
    await p.apply([{ ...stock(acc, w, s, 2, 5), id: randomUUID() }]);
    await p.apply([stock(acc, w, s, 1, 9)]);
    await p.apply([stock(acc, w, s, 3, 5, false, 40)]);
    expect(await stockChangedAt(acc)).toEqual(first);
    // A newer version with other figures, and a deletion.
    await p.apply([stock(acc, w, s, 4, 6)]);
    const second = await stockChangedAt(acc);
    expect(second.getTime()).toBeGreaterThan(first.getTime());
    await p.apply([stock(acc, w, s, 5, 6, true)]);
    expect((await stockChangedAt(acc)).getTime()).toBeGreaterThan(second.getTime());
  });

  it("accounts: changed_at moves when a newer version changes the timezone or the growth, not otherwise", async () => {
    const acc = randomUUID();
    await p.apply([settings(acc, 2, "UTC", "0.1")]);
    const first = await accountChangedAt(acc);
    expect(first).toBeInstanceOf(Date);
    await p.apply([{ ...settings(acc, 2, "UTC", "0.1"), id: randomUUID() }]);
    await p.apply([settings(acc, 1, "Europe/Stockholm", "0.5")]);
    await p.apply([settings(acc, 3, "UTC", "0.10")]);
    expect(await accountChangedAt(acc)).toEqual(first);
    await p.apply([settings(acc, 4, "UTC", "0.2")]);
    const second = await accountChangedAt(acc);
    expect(second.getTime()).toBeGreaterThan(first.getTime());
    await p.apply([settings(acc, 5, "Europe/Stockholm", "0.2")]);
    expect((await accountChangedAt(acc)).getTime()).toBeGreaterThan(second.getTime());
  });

  it("transactions: the groups of sales lines an update removes, moves or cancels, at the source's updatedAt, once", async () => {
    const [acc, A, B, t] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await p.apply([sku(acc, A, 1, { key: "KA", season: "S1" }), sku(acc, B, 1, { key: "KB", season: "S2" })]);
    const at = (day: number) => new Date(`2026-02-${String(day).padStart(2, "0")}T10:00:00Z`);
    const items = [{ key: "KA", quantity: 3, shipments: [{ quantity: 2, warehouse: "WN" }] }, { key: "KB", quantity: 1, externalItemId: "b" }];
    await p.apply([transaction(acc, t, 1, { createdDate: "2026-02-01T12:00:00Z", items }, at(1))]);
    // A new transaction leaves its lines, nothing more.
    expect(await changed(acc)).toEqual([]);
    // v2: KB's item removed, KA's shipped units moved from WN to WS.
    const v2 = transaction(acc, t, 2, { createdDate: "2026-02-01T12:00:00Z", items: [{ key: "KA", quantity: 3, shipments: [{ quantity: 2, warehouse: "WS" }] }] }, at(2));
    await p.apply([v2]);
    const row = (key: string, season: string, warehouse: string, day: number) => ({ key, season, warehouse, warehouse_id: null, po_volume: false, changed_at: at(day).toISOString() });
    const afterV2 = [row("KA", "S1", "WN", 2), row("KB", "S2", "", 2)];
    expect(await changed(acc)).toEqual(afterV2);
    // A redelivery and an older version record nothing.
    await p.apply([{ ...v2, id: randomUUID() }]);
    await p.apply([transaction(acc, t, 1, { createdDate: "2026-02-01T12:00:00Z", items }, at(5))]);
    expect(await changed(acc)).toEqual(afterV2);
    // v3 cancels it: every line it had.
    await p.apply([transaction(acc, t, 3, { createdDate: "2026-02-01T12:00:00Z", cancelledDate: "2026-02-03T00:00:00Z", items: v2Items() }, at(3))]);
    expect(await changed(acc)).toEqual([...afterV2, row("KA", "S1", "", 3), row("KA", "S1", "WS", 3)].sort((a, b) => a.key.localeCompare(b.key) || a.warehouse.localeCompare(b.warehouse)));
    // Planned volumes read only what changed PO volume: the cancelled sales are not theirs.
    expect(await p.volumes(acc, { groupBy: GroupBy.SEASONS, updatedSince: "2026-01-01T00:00:00Z" })).toEqual([]);
  });
  const v2Items = () => [{ key: "KA", quantity: 3, shipments: [{ quantity: 2, warehouse: "WS" }] }];

  it("a SKU that changes group: both groups for every warehouse when it has any input; PO lines' warehouses for planned volumes", async () => {
    const acc = randomUUID();
    const [bare, stocked, sold, ordered, w, po] = Array.from({ length: 6 }, () => randomUUID());
    await p.apply([
      sku(acc, bare, 1, { key: "K0", season: "S1" }),
      sku(acc, stocked, 1, { key: "K1", season: "S1" }),
      sku(acc, sold, 1, { key: "K2", season: "S1" }),
      sku(acc, ordered, 1, { key: "K3", season: "S1" }),
      warehouse(acc, w, 1, "WN", "North"),
      stock(acc, w, stocked, 1, 4),
      transaction(acc, randomUUID(), 1, { createdDate: "2026-02-01T12:00:00Z", items: [{ key: "K2", quantity: 1 }] }),
      purchaseOrder(acc, po, 1, 0, [{ skuId: ordered, warehouse: "WN", date: "2026-03-10", quantity: 5 }]),
    ]);
    const justBefore = new Date(Date.now() - 1000).toISOString();
    await p.apply([0, 1, 2, 3].map((i) => sku(acc, [bare, stocked, sold, ordered][i], 2, { key: `K${i}`, season: "S2" })));
    const rows = (await changed(acc)).map(({ changed_at: _at, ...r }: { changed_at: string }) => r);
    const every = (key: string, season: string) => ({ key, season, warehouse: "", warehouse_id: null, po_volume: false });
    expect(rows).toEqual([
      every("K1", "S1"), every("K1", "S2"),
      every("K2", "S1"), every("K2", "S2"),
      every("K3", "S1"), every("K3", "S2"),
      { key: "K3", season: "S1", warehouse: "WN", warehouse_id: null, po_volume: true },
      { key: "K3", season: "S2", warehouse: "WN", warehouse_id: null, po_volume: true },
    ].sort((a, b) => a.key.localeCompare(b.key) || a.season.localeCompare(b.season) || a.warehouse.localeCompare(b.warehouse)));
    // Planned volumes: as before, only the groups the SKU with PO lines left and joined.
    expect(await p.volumes(acc, { groupBy: GroupBy.SEASONS, updatedSince: justBefore })).toEqual([
      { groupKey: "S1", stock: 0, po: 0, draft: 0 },
      { groupKey: "S2", stock: 4, po: 5, draft: 0 },
    ]);
    // A replayed SKU version records nothing more.
    await p.apply([sku(acc, stocked, 2, { key: "K1", season: "S2" })]);
    expect((await changed(acc)).length).toBe(rows.length);
  });

  it("compacting keeps only each group's latest change: every updatedSince answers the same, with fewer rows", async () => {
    const [acc, other] = [randomUUID(), randomUUID()];
    const [ordered, w, po] = [randomUUID(), randomUUID(), randomUUID()];
    await p.apply([
      sku(acc, ordered, 1, { key: "K1", season: "S1" }),
      warehouse(acc, w, 1, "WN", "North"),
      stock(acc, w, ordered, 1, 4),
      purchaseOrder(acc, po, 1, 0, [{ skuId: ordered, warehouse: "WN", date: "2026-03-10", quantity: 5 }]),
      sku(other, randomUUID(), 1, { key: "K1", season: "S1" }),
    ]);
    // Moments on the database's clock around each change: the SKU moves S1 -> S2 -> S1 -> S2 -> S3.
    const now = async () => ((await p.db.raw("SELECT clock_timestamp() AS at")).rows[0].at as Date).toISOString();
    const moments = [await now()];
    for (const [version, season] of [[2, "S2"], [3, "S1"], [4, "S2"], [5, "S3"]] as const) {
      await p.apply([sku(acc, ordered, version, { key: "K1", season })]);
      moments.push(await now());
    }
    // The PO line goes (its group's PO volume changed), then a sale's shipment leaves WN (its sales
    // did): one group and warehouse, once for PO volume and once not, kept apart.
    await p.apply([purchaseOrder(acc, po, 2, 0, [])]);
    moments.push(await now());
    const t = randomUUID();
    const sale = (version: number, warehouse: string) =>
      transaction(acc, t, version, { createdDate: "2026-03-01T12:00:00Z", items: [{ key: "K1", quantity: 1, shipments: [{ quantity: 1, warehouse }] }] }, new Date());
    await p.apply([sale(1, "WN")]);
    await p.apply([sale(2, "WS")]);
    moments.push(await now());
    const answers = async () => {
      const out = [];
      for (const at of moments) {
        const groups = await p.db.raw(
          `SELECT DISTINCT key, season, external_warehouse_id, warehouse_id, po_volume FROM changed_groups WHERE account_id = ? AND changed_at > ? ORDER BY 1, 2, 3, 5`,
          [acc, at],
        );
        out.push({ at, groups: groups.rows, volumes: await p.volumes(acc, { groupBy: GroupBy.SEASONS, updatedSince: at }), byWarehouse: await p.byWarehouse(acc, { groupBy: GroupBy.SEASONS, updatedSince: at }) });
      }
      return out;
    };
    const before = await answers();
    const rowsBefore = (await changed(acc)).length;
    // S1 and S2 were left and joined twice: their older rows go, S3's one row stays.
    // Through the service's hourly pruning (libs/rpc runs ServiceDefinition.prune).
    expect(await planningService.prune!(p.db)).toBeGreaterThan(0);
    expect((await changed(acc)).length).toBeLessThan(rowsBefore);
    expect(await answers()).toEqual(before);
    expect(before[0].volumes.map((v) => v.groupKey)).toEqual(["S1", "S2", "S3"]);
    expect(before[3].volumes.map((v) => v.groupKey)).toEqual(["S2", "S3"]);
    // Nothing left to compact.
    expect(await compactChangedGroups(p.db)).toBe(0);
  });

  it("compacting skips an account another replica is compacting (its lock), and takes it the next time", async () => {
    const [acc, s] = [randomUUID(), randomUUID()];
    await p.apply([sku(acc, s, 1, { key: "K1", season: "S1" }), stock(acc, randomUUID(), s, 1, 4)]);
    for (const [version, season] of [[2, "S2"], [3, "S1"]] as const) await p.apply([sku(acc, s, version, { key: "K1", season })]);
    const rows = (await changed(acc)).length;
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const other = p.db.transaction(async (tx) => {
      await tx.raw("SELECT pg_advisory_xact_lock(hashtextextended('planning.compact-changed-groups:' || ?, 0))", [acc]);
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    try {
      await holding;
      await compactChangedGroups(p.db);
      expect((await changed(acc)).length).toBe(rows);
    } finally {
      release();
      await other;
    }
    await compactChangedGroups(p.db);
    expect((await changed(acc)).length).toBeLessThan(rows);
  });

  it("a SKU with only a stored plan, a distribution order (by key, else sku) or a stock trigger changes both groups too", async () => {
    const acc = randomUUID();
    const [planned, moved, movedBySku, triggered] = Array.from({ length: 4 }, () => randomUUID());
    const skus = [planned, moved, movedBySku, triggered];
    await p.apply(skus.map((id, i) => sku(acc, id, 1, { key: `K${i}`, season: "S1", sku: `SKU${i}` })));
    // Written as the plan upload and planning's appliers keep them.
    await p.db("sales_plans").insert({ account_id: acc, sku_id: planned, channel: 1, month: "2026-03-01", volume: 5, updated_at: new Date() });
    await p.db("distribution_orders").insert({ account_id: acc, distribution_order_id: randomUUID(), version: 1, key: "K1", open_quantity: 2 });
    await p.db("distribution_orders").insert({ account_id: acc, distribution_order_id: randomUUID(), version: 1, sku: "SKU2", open_quantity: 2 });
    await p.db("stock_trigger_minimums").insert({ account_id: acc, stock_trigger_id: 7, version: 1, sku_id: triggered, warehouse_id: randomUUID(), min: 3 });
    await p.apply(skus.map((id, i) => sku(acc, id, 2, { key: `K${i}`, season: "S2", sku: `SKU${i}` })));
    expect((await changed(acc)).map((r: { key: string; season: string; warehouse: string; po_volume: boolean }) => `${r.key}/${r.season}/${r.warehouse}/${r.po_volume}`)).toEqual(
      ["K0", "K1", "K2", "K3"].flatMap((k) => [`${k}/S1//false`, `${k}/S2//false`]),
    );
  });

  it("a SKU whose sku changes, in its group, changes the group when sales or distribution orders name it by sku alone", async () => {
    const acc = randomUUID();
    const [sold, moved, neither] = [randomUUID(), randomUUID(), randomUUID()];
    await p.apply([sku(acc, sold, 1, { key: "KS", season: "S1", sku: "SKU-S" }), sku(acc, moved, 1, { key: "KM", season: "S2", sku: "SKU-M" }), sku(acc, neither, 1, { key: "KN", season: "S3", sku: "SKU-N" })]);
    await p.apply([transaction(acc, randomUUID(), 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ sku: "SKU-S2", quantity: 1 }] })]);
    await p.db("distribution_orders").insert({ account_id: acc, distribution_order_id: randomUUID(), version: 1, sku: "SKU-M", open_quantity: 2 });
    await p.db("changed_groups").where({ account_id: acc }).delete();
    // The sale names the new sku (it counts from now on); the transfer the old one (it stops counting).
    await p.apply([sku(acc, sold, 2, { key: "KS", season: "S1", sku: "SKU-S2" }), sku(acc, moved, 2, { key: "KM", season: "S2", sku: "SKU-M2" }), sku(acc, neither, 2, { key: "KN", season: "S3", sku: "SKU-N2" })]);
    expect((await changed(acc)).map((r: { key: string; season: string }) => `${r.key}/${r.season}`)).toEqual(["KM/S2", "KS/S1"]);
    // A replay of the older version changes nothing.
    await p.db("changed_groups").where({ account_id: acc }).delete();
    await p.apply([sku(acc, sold, 1, { key: "KS", season: "S1", sku: "SKU-S" })]);
    expect(await changed(acc)).toEqual([]);
  });

  it("a distribution order moved to another SKU or warehouse: the group and warehouses it left (for the applier to call)", async () => {
    const acc = randomUUID();
    const [a, b, o] = [randomUUID(), randomUUID(), randomUUID()];
    await p.apply([sku(acc, a, 1, { key: "KA", season: "S1" }), sku(acc, b, 1, { key: "KB", season: "S2" })]);
    await p.db("distribution_orders").insert({ account_id: acc, distribution_order_id: o, version: 2, key: "KA", from_external_warehouse_id: "WC", to_external_warehouse_id: "WN", open_quantity: 5 });
    const row = (version: number, key: string, to: string) => ({ account_id: acc, distribution_order_id: o, version: BigInt(version), key, sku: null, from_external_warehouse_id: "WC", to_external_warehouse_id: to, changed_at: "2026-02-03T00:00:00Z" });
    const record = (r: ReturnType<typeof row>) => p.db.transaction((tx) => recordMovedDistributionOrders(tx, [r]));
    // An older version, and a newer one with the same SKU and warehouses, record nothing.
    await record(row(1, "KB", "WS"));
    await record(row(3, "KA", "WN"));
    expect(await changed(acc)).toEqual([]);
    // Another destination: the warehouse it left.
    await record(row(3, "KA", "WS"));
    const at = "2026-02-03T00:00:00.000Z";
    expect(await changed(acc)).toEqual([{ key: "KA", season: "S1", warehouse: "WN", warehouse_id: null, po_volume: false, changed_at: at }]);
    // Another SKU: its old group in both warehouses.
    await p.db("changed_groups").where({ account_id: acc }).delete();
    await record(row(3, "KB", "WN"));
    expect(await changed(acc)).toEqual(["WC", "WN"].map((warehouse) => ({ key: "KA", season: "S1", warehouse, warehouse_id: null, po_volume: false, changed_at: at })));
  });

  it("a SKU new to the replica whose sales or stock came first: the group it joins; without inputs, or replayed, nothing", async () => {
    const acc = randomUUID();
    const [sold, stocked, bare, w] = Array.from({ length: 4 }, () => randomUUID());
    await p.apply([
      transaction(acc, randomUUID(), 1, { createdDate: "2026-02-01T12:00:00Z", items: [{ key: "K1", quantity: 1 }] }),
      stock(acc, w, stocked, 1, 4),
    ]);
    const created = [sku(acc, sold, 1, { key: "K1", season: "S1" }), sku(acc, stocked, 1, { key: "K2", season: "S2" }), sku(acc, bare, 1, { key: "K3", season: "S3" })];
    await p.apply(created);
    const rows = async () => (await changed(acc)).map((r: { key: string; season: string; warehouse: string; po_volume: boolean }) => `${r.key}/${r.season}/${r.warehouse}/${r.po_volume}`);
    expect(await rows()).toEqual(["K1/S1//false", "K2/S2//false"]);
    await p.apply(created.map((m) => ({ ...m, id: randomUUID() })));
    expect(await rows()).toEqual(["K1/S1//false", "K2/S2//false"]);
  });

  it("a batch's SKUs are looked up in the replica by probes, never by reading every stored SKU (which grew with the replica)", async () => {
    const acc = randomUUID();
    // A replica the size at which a plain join hashed the whole table (analyzed: it is no stale guess).
    await p.db.raw(
      `INSERT INTO skus (account_id, sku_id, version, key, sku, season, status, active_planning)
       SELECT ?, gen_random_uuid(), 1, 'K-' || g, 'K-' || g, 'S1', 1, true FROM generate_series(1, 20000) AS g`,
      [acc],
    );
    await p.db.raw("ANALYZE skus");
    const batch = Array.from({ length: 500 }, (_, i) => ({ account_id: acc, sku_id: randomUUID(), version: 1n, season: "S1", product_group_id: null, variant_group_id: null, key: `N-${i}`, sku: `N-${i}`, ean: null }));
    // The connection's scans of skus so far (its counts not yet flushed to the shared statistics included).
    const scansOf = async (tx: Knex.Transaction) => {
      const { seq_scan, idx_scan } = (await tx.raw("SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables WHERE relname = 'skus' AND schemaname = current_schema()")).rows[0];
      return { seq: Number(seq_scan), probes: Number(idx_scan) };
    };
    const scans = await p.db.transaction(async (tx) => {
      const before = await scansOf(tx);
      await recordRegroupedSkus(tx, batch);
      await storedSkuPlaces(tx, batch);
      const after = await scansOf(tx);
      return { seq: after.seq - before.seq, probes: after.probes - before.probes };
    });
    // Two statements of recordRegroupedSkus and one of storedSkuPlaces, a probe per SKU each.
    expect(scans).toEqual({ seq: 0, probes: 1500 });
  });
});
