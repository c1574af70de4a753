import { randomUUID } from "node:crypto";
import { planningV1, topics } from "@analytics/contracts";
import { planningUnderTest, settings, sku, transaction } from "./fixtures";
import { readBreakdown } from "./breakdown-helpers";

const { GroupBy } = planningV1;

/**
 * Sales items that name their SKU by EAN alone (a POS scan: no key, no sku) count toward the SKU
 * with that EAN (planning migration 010); key, else sku, still win over it. SKUs replicated before
 * the replica kept EANs get theirs from the catalogue's re-announcement at the version held.
 */
describe("sales matched by EAN", () => {
  const p = planningUnderTest();
  const q = { groupBy: GroupBy.SEASONS, fromDate: "2026-03-01", toDate: "2026-03-31", period: planningV1.Period.TOTAL };
  const today = "2026-03-18";
  /** Each group's sales actual over March. */
  const actuals = async (accountId: string, updatedSince?: string) =>
    Object.fromEntries((await readBreakdown(p.db, accountId, { ...q, updatedSince }, today)).map((r) => [r.groupKey, r.periods[0].actual]));

  it("an item with an EAN alone counts toward the SKU with that EAN; an item's key, else sku, wins over it", async () => {
    const acc = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    await p.apply([
      settings(acc, 1, "UTC"),
      sku(acc, a, 1, { key: "KA", sku: "SA", ean: "EA", season: "SA-season" }),
      sku(acc, b, 1, { key: "KB", sku: "SB", ean: "EB", season: "SB-season" }),
      transaction(acc, randomUUID(), 1, {
        createdDate: "2026-03-10T12:00:00Z",
        items: [
          { ean: "EA", quantity: 3, externalItemId: "1" },
          { key: "KB", ean: "EA", quantity: 2, externalItemId: "2" },
          { sku: "SA", ean: "EB", quantity: 1, externalItemId: "3" },
          { ean: "EB", quantity: 1, type: 2, externalItemId: "4" },
          { ean: "nobody's", quantity: 9, externalItemId: "5" },
        ],
      }),
    ]);
    expect(await actuals(acc)).toEqual({ "SA-season": 4, "SB-season": 1 });
  });

  it("a SKU replicated without its EAN takes it from the catalogue's re-announcement of the same version; its group counts as changed", async () => {
    const acc = randomUUID();
    const a = randomUUID();
    await p.apply([settings(acc, 1, "UTC"), sku(acc, a, 4, { key: "KA", season: "S1" })]);
    await p.apply([transaction(acc, randomUUID(), 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ ean: "EA", quantity: 5 }] }, new Date("2026-02-01T00:00:00Z"))]);
    // What was written stands for what was written before the re-announcement.
    await p.db.raw("UPDATE sales_lines SET changed_at = '2026-02-01' WHERE account_id = ?", [acc]);
    await p.db.raw("UPDATE accounts SET changed_at = '2026-02-01' WHERE account_id = ?", [acc]);
    await p.db("changed_groups").where({ account_id: acc }).delete();
    const since = "2026-02-05T00:00:00Z";
    // A group with no figures at all has no row.
    expect(await actuals(acc)).toEqual({});
    expect(await actuals(acc, since)).toEqual({});

    await p.apply([sku(acc, a, 4, { key: "KA", season: "S1", ean: "EA" }, topics.catalogueSkuBackfilled)]);
    expect(await actuals(acc)).toEqual({ S1: 5 });
    expect(await actuals(acc, since)).toEqual({ S1: 5 });
    expect(await p.db("skus").where({ account_id: acc, sku_id: a }).first("version", "ean", "key")).toEqual({ version: 4, ean: "EA", key: "KA" });

    // An older version, with another EAN, changes nothing; a newer one moves the sales away.
    await p.apply([sku(acc, a, 3, { key: "KA", season: "S1", ean: "E-old" })]);
    expect(await actuals(acc)).toEqual({ S1: 5 });
    await p.apply([sku(acc, a, 5, { key: "KA", season: "S1", ean: "E-new" })]);
    expect(await actuals(acc)).toEqual({});
  });

  it("a new EAN-only sale changes its SKU's group; so does a SKU new to the replica whose EAN earlier sales named", async () => {
    const acc = randomUUID();
    const since = "2026-02-05T00:00:00Z";
    await p.apply([settings(acc, 1, "UTC"), sku(acc, randomUUID(), 1, { key: "KA", ean: "EA", season: "S1" })]);
    await p.db.raw("UPDATE accounts SET changed_at = '2026-02-01' WHERE account_id = ?", [acc]);
    await p.db("changed_groups").where({ account_id: acc }).delete();
    await p.apply([transaction(acc, randomUUID(), 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ ean: "EA", quantity: 2 }, { ean: "EB", quantity: 3, externalItemId: "b" }] })]);
    expect(await actuals(acc, since)).toEqual({ S1: 2 });

    // The sales stand for older ones; then the SKU they name by EAN arrives.
    await p.db.raw("UPDATE sales_lines SET changed_at = '2026-02-01' WHERE account_id = ?", [acc]);
    expect(await actuals(acc, since)).toEqual({});
    await p.apply([sku(acc, randomUUID(), 1, { key: "KB", ean: "EB", season: "S2" })]);
    expect(await actuals(acc, since)).toEqual({ S2: 3 });
  });

  it("a transaction whose EAN-only item goes away changes its SKU's group", async () => {
    const acc = randomUUID();
    const t = randomUUID();
    await p.apply([
      settings(acc, 1, "UTC"),
      sku(acc, randomUUID(), 1, { key: "KA", ean: "EA", season: "S1" }),
      sku(acc, randomUUID(), 1, { key: "KB", ean: "EB", season: "S2" }),
      transaction(acc, t, 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ ean: "EA", quantity: 2 }] }, new Date("2026-02-01T00:00:00Z")),
    ]);
    await p.db.raw("UPDATE sales_lines SET changed_at = '2026-02-01' WHERE account_id = ?", [acc]);
    await p.db.raw("UPDATE accounts SET changed_at = '2026-02-01' WHERE account_id = ?", [acc]);
    await p.db("changed_groups").where({ account_id: acc }).delete();
    expect(await actuals(acc, "2026-02-05T00:00:00Z")).toEqual({});
    await p.apply([transaction(acc, t, 2, { createdDate: "2026-03-10T12:00:00Z", cancelledDate: "2026-03-11T00:00:00Z", items: [{ ean: "EA", quantity: 2 }] }, new Date("2026-02-10T00:00:00Z"))]);
    expect(await actuals(acc, "2026-02-05T00:00:00Z")).toEqual({ S1: 0 });
  });
});
