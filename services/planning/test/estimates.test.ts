import { randomUUID } from "node:crypto";
import { migrate } from "@analytics/db";
import { databaseForFile } from "@analytics/testing";
import { migrations } from "../src/migrations";
import { plannedVolumes, volumesStatement, withHashJoins } from "../src/repository";
import type { VolumeQuery } from "../src/validation";

const noFilters: VolumeQuery["filters"] = {
  seasons: [],
  variants: [],
  products: [],
  skus: [],
  skuIds: [],
  brands: [],
  categories: [],
  sizes: [],
  skuStatus: [2, 3, 4, 5, 6, 7],
  activePlanning: true,
  departments: [],
  genders: [],
  collections: [],
  colors: [],
  subcategories: [],
  productTypes: [],
  merchandiseTypes: [],
  pimCustom: [],
};

/** Every plan node type of an EXPLAIN (FORMAT JSON) answer. */
function nodeTypes(plan: { "Node Type": string; Plans?: unknown[] }): string[] {
  return [plan["Node Type"], ...((plan.Plans ?? []) as (typeof plan)[]).flatMap(nodeTypes)];
}

/**
 * An account written after the last ANALYZE (or whose counters a crash reset, so autovacuum does
 * not analyze it) is one the planner takes for a row or two: it chose a nested loop that read the
 * account's SKUs once per order line (8 s for 10,000 lines). Volumes are read with hash joins.
 */
describe("planned volumes when the statistics do not know the account (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("planning");
  beforeAll(async () => {
    await db.raw('CREATE SCHEMA IF NOT EXISTS "planning"');
    await migrate(db, "planning", migrations);
  });

  const seed = async (account: string, skus: number, lines: number) => {
    await db.raw(
      `INSERT INTO skus (account_id, sku_id, version, key, status, active_planning, season)
       SELECT ?, gen_random_uuid(), 1, 'K' || g, 2, true, 'SS' || (g % 4) FROM generate_series(1, ?) g`,
      [account, skus],
    );
    await db.raw(
      `INSERT INTO purchase_order_lines (account_id, purchase_order_id, item_id, sku_id, external_warehouse_id, delivery_date, open_quantity, kind, changed_at)
       SELECT ?, gen_random_uuid(), '1', s.sku_id, 'W1', date '2026-03-01' + (g % 200), 5, 'po', now()
       FROM generate_series(1, ?) g JOIN (SELECT sku_id, row_number() OVER () - 1 AS n FROM skus WHERE account_id = ?) s ON s.n = g % ?`,
      [account, lines, account, skus],
    );
  };

  it("joins an account's lines and SKUs with hash joins, never a nested loop, and sums them right", async () => {
    await seed(randomUUID(), 300, 1000);
    await db.raw("ANALYZE");
    const account = randomUUID();
    await seed(account, 3000, 10_000);
    const query: VolumeQuery = { groupBy: "seasons", fromDate: "2026-01-01", toDate: "2026-12-31", filters: noFilters };
    for (const byWarehouse of [false, true]) {
      const { sql, bindings } = volumesStatement(account, query, byWarehouse);
      const explained = await withHashJoins(db, async (tx) => (await tx.raw(`EXPLAIN (FORMAT JSON) ${sql}`, bindings)).rows[0]["QUERY PLAN"][0].Plan);
      expect(nodeTypes(explained)).not.toContain("Nested Loop");
    }
    const rows = await plannedVolumes(db, account, query, false);
    expect(rows.map((r) => r.groupKey)).toEqual(["SS0", "SS1", "SS2", "SS3"]);
    expect(rows.reduce((sum, r) => sum + Number(r.poVolume), 0)).toBe(10_000 * 5);
  });
});
