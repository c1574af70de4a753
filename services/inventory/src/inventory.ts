import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { inventoryV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { conflict, invalid, notFound, type FieldViolation } from "@analytics/errors";
import { enqueue } from "@analytics/outbox";
import { atRevision, commit, itemOutcome as outcome, refuseDuplicates, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import { stockUpdated, warehouseChanged } from "./changes";
import * as repo from "./repository";
import { changeable, stockTable, warehousesTable } from "./resources";
import { checkText } from "./validation";


// ---------------------------------------------------------------------------------------------
// Warehouses

function warehouseInput(w: inventoryV1.Warehouse, path: string): repo.WarehouseInput {
  const violations = warehousesTable.violations(w, path);
  if (violations.length) throw invalid(`${violations[0].path}: ${violations[0].message}`, violations);
  // The id is the service's to choose (a new warehouse's) or keep.
  const { id: _id, ...row } = warehousesTable.rowOf(w);
  return row as repo.WarehouseInput;
}

/** What a write of a stored warehouse may change (its name and centralWarehouse). */
const WAREHOUSE_CHANGEABLE = changeable(warehousesTable, ["external_id"]) as (keyof repo.WarehouseInput)[];

/** POST /warehouses: all or nothing (the contract answers 201 with the array of warehouses). */
export async function upsertWarehouses(ctx: ServiceContext, accountId: string, items: inventoryV1.Warehouse[]) {
  const inputs = items.map((w, i) => warehouseInput(w, `[${i}]`));
  refuseDuplicates(inputs, [], (w) => w.external_id, (_, i, first) => {
    throw invalid(`[${i}].externalId: repeats item ${first}`, [{ path: `[${i}].externalId`, message: `repeats item ${first}` }]);
  });
  return commit(ctx, async (tx) => {
    const rows = await repo.upsertWarehouses(tx, accountId, inputs);
    await enqueue(tx, rows.filter((r) => r.changed).map((r) => warehouseChanged(accountId, r)));
    const byExternal = new Map(rows.map((r) => [r.external_id, r]));
    return inputs.map((w) => byExternal.get(w.external_id)!);
  });
}

export const listWarehouses = repo.listWarehouses;

/** The warehouses of these external ids that exist; an id that cannot be stored names none. */
export async function resolveWarehouses(db: Db, accountId: string, externalIds: string[]) {
  if (externalIds.length > 100_000) throw invalid("at most 100000 external ids", [{ path: "externalIds", message: "at most 100000" }]);
  const usable = externalIds.filter((id) => !checkText("externalId", id, true).length);
  return [...(await repo.warehousesByExternalId(db, accountId, usable)).values()];
}

export async function getWarehouse(db: Db, accountId: string, externalId: string) {
  const row = await repo.findWarehouse(db, accountId, externalId);
  if (!row) throw notFound(`warehouse ${externalId} not found`);
  return row;
}

/** PUT; `ifRevision` (If-Match): the revision the client read, checked under the row's lock. */
export async function updateWarehouse(ctx: ServiceContext, accountId: string, externalId: string, w: inventoryV1.Warehouse, ifRevision?: string) {
  if (w.externalId && w.externalId !== externalId) {
    throw invalid("externalId: must equal the path's externalWarehouseID", [{ path: "externalId", message: "must equal the path's externalWarehouseID" }]);
  }
  const input = warehouseInput({ ...w, externalId }, "body");
  return commit(ctx, async (tx) => {
    const current = atRevision(`warehouse ${externalId}`, await repo.findWarehouse(tx, accountId, externalId, true), ifRevision);
    // Sent as stored: no change, nothing announced.
    if (WAREHOUSE_CHANGEABLE.every((c) => current[c] === input[c])) return current;
    const row = await repo.updateWarehouse(tx, accountId, current.id, input);
    await enqueue(tx, [warehouseChanged(accountId, row)]);
    return row;
  });
}

/** DELETE: a warehouse that still holds stock (or stock triggers) is a conflict; delete those first. */
export async function deleteWarehouse(ctx: ServiceContext, accountId: string, externalId: string, ifRevision?: string): Promise<void> {
  await commit(ctx, async (tx) => {
    const current = atRevision(`warehouse ${externalId}`, await repo.findWarehouse(tx, accountId, externalId, true), ifRevision);
    const holds = await repo.warehouseHoldings(tx, accountId, current.id);
    if (holds.stock || holds.triggers) {
      const what = [holds.stock && "stock rows", holds.triggers && "stock triggers"].filter(Boolean).join(" and ");
      throw conflict(`warehouse ${externalId} still holds ${what}; delete those first`);
    }
    await repo.deleteWarehouse(tx, accountId, current.id);
    await enqueue(tx, [warehouseChanged(accountId, { ...current, version: BigInt(current.version) + 1n } as unknown as repo.WarehouseRow, true)]);
  });
}

// ---------------------------------------------------------------------------------------------
// Stock

const STOCK_REF = "key";

/** How far ahead of this clock a snapshot's date may be (clocks and time zones of tills differ). */
const FUTURE_TOLERANCE_MS = 24 * 60 * 60 * 1000;

/**
 * POST stock rows: each row is checked alone (400), its warehouse and SKU looked up (404), and
 * the rest applied as snapshots in one statement; a row older than the stored snapshot is
 * answered 200 "ignored". `pathWarehouse` is the path's externalWarehouseID (rows may omit theirs).
 */
export async function upsertStock(ctx: ServiceContext, accountId: string, writes: inventoryV1.StockWrite[], pathWarehouse?: string): Promise<ItemOutcome[]> {
  const outcomes: (ItemOutcome | undefined)[] = [];
  const candidates: { i: number; row: inventoryV1.StockRow; warehouse: string; date: Date }[] = [];
  writes.forEach((w, i) => {
    const row = w.row;
    const reference = row?.key ?? "";
    const violations: FieldViolation[] = [];
    if (!row) violations.push({ path: `[${i}]`, message: "is required" });
    else {
      violations.push(...stockTable.violations(row, `[${i}]`));
      if (pathWarehouse && row.externalWarehouseId && row.externalWarehouseId !== pathWarehouse) {
        violations.push({ path: `[${i}].externalWarehouseID`, message: "must equal the path's externalWarehouseID" });
      }
      if (!pathWarehouse && !row.externalWarehouseId) violations.push({ path: `[${i}].externalWarehouseID`, message: "is required" });
      // A snapshot from a wrong clock, dated ahead, would make every real one until then "older".
      // (A missing date is the rules' "is required" above.)
      if (row.date && timestampDate(row.date).getTime() > Date.now() + FUTURE_TOLERANCE_MS) violations.push({ path: `[${i}].date`, message: "must not lie more than a day in the future" });
    }
    if (violations.length) {
      outcomes[i] = outcome(400, reference, STOCK_REF, `${violations[0].path}: ${violations[0].message}`, violations);
      return;
    }
    if (!w.skuFound) {
      outcomes[i] = outcome(404, reference, STOCK_REF, `SKU ${reference} not found`);
      return;
    }
    candidates.push({ i, row: row!, warehouse: pathWarehouse ?? row!.externalWarehouseId, date: timestampDate(row!.date!) });
  });

  if (candidates.length) {
    await commit(ctx, async (tx) => {
      const warehouses = await repo.warehousesByExternalId(tx, accountId, candidates.map((c) => c.warehouse));
      // Within one batch the newest snapshot of a (warehouse, SKU) is the one offered; the others are older.
      const newest = new Map<string, (typeof candidates)[number]>();
      for (const c of candidates) {
        const wh = warehouses.get(c.warehouse);
        if (!wh) {
          outcomes[c.i] = outcome(404, c.row.key, STOCK_REF, `warehouse ${c.warehouse} not found`);
          continue;
        }
        const pair = `${wh.id}:${c.row.skuId}`;
        const held = newest.get(pair);
        if (!held || c.date >= held.date) newest.set(pair, c);
      }
      const offered = [...newest.values()];
      const written = await repo.applyStock(
        tx,
        accountId,
        offered.map((c) => ({
          ord: c.i,
          ...(stockTable.rowOf({ ...c.row, warehouseId: warehouses.get(c.warehouse)!.id, date: timestampFromDate(c.date) }) as { warehouse_id: string; sku_id: string }),
        })),
      );
      await enqueue(tx, written.map((r) => stockUpdated(accountId, r)));
      const applied = new Set(written.map((r) => r.ord));
      const pairOf = (c: (typeof candidates)[number]) => ({ warehouse_id: warehouses.get(c.warehouse)!.id, sku_id: c.row.skuId });
      const notApplied = candidates.filter((c) => !outcomes[c.i] && !applied.has(c.i));
      const stored = await repo.storedStockDates(tx, accountId, notApplied.map(pairOf));
      for (const c of candidates) {
        if (outcomes[c.i]) continue;
        const pair = pairOf(c);
        const storedDate = stored.get(`${pair.warehouse_id}:${pair.sku_id}`);
        outcomes[c.i] = applied.has(c.i)
          ? outcome(200, c.row.key, STOCK_REF, "stock updated")
          : storedDate && storedDate.getTime() === c.date.getTime() && newest.get(`${pair.warehouse_id}:${pair.sku_id}`) === c
            ? outcome(200, c.row.key, STOCK_REF, "unchanged: the same snapshot is stored")
            : outcome(200, c.row.key, STOCK_REF, "ignored: older than the stored snapshot");
      }
    });
  }
  return outcomes.map((o) => o ?? outcome(500, "", "", "item not answered"));
}

export async function listStock(db: Db, accountId: string, req: inventoryV1.ListStockRequest, page: repo.Page) {
  let warehouseId: string | undefined;
  if (req.externalWarehouseId) {
    warehouseId = (await getWarehouse(db, accountId, req.externalWarehouseId)).id;
  }
  return repo.listStock(db, accountId, { warehouseId, keys: req.keys, skus: req.skus, eans: req.eans }, page);
}
