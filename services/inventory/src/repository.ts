import { randomUUID } from "node:crypto";
import type { Db, Tx } from "@analytics/db";
import { pageOfIds } from "@analytics/db";

/**
 * The inventory's SQL. Every statement is scoped by account_id, and every batch is a fixed handful
 * of statements whatever its size: rows travel as one jsonb parameter expanded with
 * jsonb_to_recordset.
 */

export interface Page {
  page: number;
  pageSize: number;
}

const asJson = (rows: unknown) => JSON.stringify(rows);

// ---------------------------------------------------------------------------------------------
// Warehouses

export interface WarehouseRow {
  id: string;
  external_id: string;
  name: string;
  central_warehouse: boolean;
  version: string | number;
  created_at: Date;
  updated_at: Date;
}

export interface WarehouseInput {
  external_id: string;
  name: string;
  central_warehouse: boolean;
}

const WAREHOUSE_COLUMNS = ["id", "external_id", "name", "central_warehouse", "version", "created_at", "updated_at"];

/** Creates or updates warehouses by (account, external_id) in one statement; `created` per row. */
export async function upsertWarehouses(tx: Tx, accountId: string, items: WarehouseInput[]): Promise<(WarehouseRow & { created: boolean })[]> {
  const rows = items.map((w) => ({ id: randomUUID(), account_id: accountId, ...w }));
  const result: { rows: (WarehouseRow & { created: boolean })[] } = await tx.raw(
    `INSERT INTO warehouses (id, account_id, external_id, name, central_warehouse)
     SELECT id, account_id, external_id, name, central_warehouse
     FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, account_id uuid, external_id text, name text, central_warehouse boolean)
     ON CONFLICT (account_id, external_id) DO UPDATE SET name = EXCLUDED.name, central_warehouse = EXCLUDED.central_warehouse,
       version = warehouses.version + 1, updated_at = now()
     RETURNING ${WAREHOUSE_COLUMNS.join(", ")}, (xmax = 0) AS created`,
    [asJson(rows)],
  );
  return result.rows;
}

export async function findWarehouse(db: Db | Tx, accountId: string, externalId: string, lock = false): Promise<WarehouseRow | undefined> {
  const q = db("warehouses").select(WAREHOUSE_COLUMNS).where({ account_id: accountId, external_id: externalId }).first();
  return lock ? q.forUpdate() : q;
}

/** Warehouses by external id (one unique-index probe per id). */
export async function warehousesByExternalId(db: Db | Tx, accountId: string, externalIds: string[]): Promise<Map<string, WarehouseRow>> {
  if (!externalIds.length) return new Map();
  const rows: WarehouseRow[] = await db("warehouses")
    .select(WAREHOUSE_COLUMNS)
    .where({ account_id: accountId })
    .whereRaw("external_id = ANY(?::text[])", [[...new Set(externalIds)]]);
  return new Map(rows.map((r) => [r.external_id, r]));
}

export async function listWarehouses(db: Db, accountId: string, ids: string[], page: Page): Promise<{ rows: WarehouseRow[]; total: number }> {
  const filtered = () => {
    const q = db("warehouses").where({ account_id: accountId });
    return ids.length ? q.whereRaw("id = ANY(?::uuid[])", [ids]) : q;
  };
  const [rows, [{ count }]] = await Promise.all([
    db("warehouses").select(WAREHOUSE_COLUMNS).whereIn("id", pageOfIds(filtered(), page)).orderBy(["seq", "id"]) as Promise<WarehouseRow[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

export async function updateWarehouse(tx: Tx, accountId: string, id: string, w: Omit<WarehouseInput, "external_id">): Promise<WarehouseRow> {
  const [row] = (await tx("warehouses")
    .where({ account_id: accountId, id })
    .update({ name: w.name, central_warehouse: w.central_warehouse, version: tx.raw("version + 1"), updated_at: tx.fn.now() })
    .returning(WAREHOUSE_COLUMNS)) as WarehouseRow[];
  return row;
}

/** What still refers to a warehouse: its stock rows (and, once they exist, its stock triggers). */
export async function warehouseHoldings(tx: Tx, accountId: string, id: string): Promise<{ stock: boolean }> {
  const r: { rows: { stock: boolean }[] } = await tx.raw(
    "SELECT EXISTS (SELECT 1 FROM stock WHERE account_id = ? AND warehouse_id = ?) AS stock",
    [accountId, id],
  );
  return r.rows[0];
}

export async function deleteWarehouse(tx: Tx, accountId: string, id: string): Promise<void> {
  await tx("warehouses").where({ account_id: accountId, id }).delete();
}

// ---------------------------------------------------------------------------------------------
// Stock

export interface StockRowDb {
  id: string;
  warehouse_id: string;
  external_warehouse_id: string;
  sku_id: string;
  key: string;
  sku: string | null;
  ean: string | null;
  supplier: string | null;
  available_quantity: number;
  physical_quantity: number;
  date: Date;
  version: string | number;
  updated_at: Date;
}

export interface StockInput {
  ord: number;
  warehouse_id: string;
  sku_id: string;
  key: string;
  sku: string | null;
  ean: string | null;
  supplier: string | null;
  available_quantity: number;
  physical_quantity: number;
  date: string;
}

/**
 * Applies snapshots in one statement: a row is written when there is none for its (warehouse, SKU)
 * or when its date is not older than the stored one; an older one changes nothing. The stored row
 * is locked by the upsert, so two writers of the same pair serialise and the newest date wins
 * whatever the order. Within one batch only the newest snapshot of a pair is offered (the caller
 * picks it). Returns the rows written (with `ord`).
 */
export async function applyStock(tx: Tx, accountId: string, items: StockInput[]): Promise<(StockRowDb & { ord: number })[]> {
  if (!items.length) return [];
  const rows = items.map((r) => ({ id: randomUUID(), account_id: accountId, ...r }));
  const result: { rows: (StockRowDb & { ord: number })[] } = await tx.raw(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(ord int, id uuid, account_id uuid, warehouse_id uuid, sku_id uuid, key text,
         sku text, ean text, supplier text, available_quantity int, physical_quantity int, date timestamptz)
     ), written AS (
       INSERT INTO stock AS s (id, account_id, warehouse_id, sku_id, key, sku, ean, supplier, available_quantity, physical_quantity, date)
       SELECT id, account_id, warehouse_id, sku_id, key, sku, ean, supplier, available_quantity, physical_quantity, date
       FROM input ORDER BY warehouse_id, sku_id
       ON CONFLICT (account_id, warehouse_id, sku_id) DO UPDATE SET key = EXCLUDED.key, sku = EXCLUDED.sku, ean = EXCLUDED.ean,
         supplier = EXCLUDED.supplier, available_quantity = EXCLUDED.available_quantity,
         physical_quantity = EXCLUDED.physical_quantity, date = EXCLUDED.date, version = s.version + 1, updated_at = now()
       WHERE EXCLUDED.date >= s.date
       RETURNING s.*
     )
     SELECT i.ord, w.id, w.warehouse_id, wh.external_id AS external_warehouse_id, w.sku_id, w.key, w.sku, w.ean, w.supplier,
            w.available_quantity, w.physical_quantity, w.date, w.version, w.updated_at
     FROM written w
     JOIN input i ON i.warehouse_id = w.warehouse_id AND i.sku_id = w.sku_id
     JOIN warehouses wh ON wh.account_id = ? AND wh.id = w.warehouse_id`,
    [asJson(rows), accountId],
  );
  return result.rows;
}

export interface StockFilter {
  warehouseId?: string;
  keys: string[];
  skus: string[];
  eans: string[];
}

export async function listStock(db: Db, accountId: string, filter: StockFilter, page: Page): Promise<{ rows: StockRowDb[]; total: number }> {
  const filtered = () => {
    const q = db("stock").where({ account_id: accountId });
    if (filter.warehouseId) q.where({ warehouse_id: filter.warehouseId });
    if (filter.keys.length) q.whereRaw("key = ANY(?::text[])", [filter.keys]);
    if (filter.skus.length) q.whereRaw("sku = ANY(?::text[])", [filter.skus]);
    if (filter.eans.length) q.whereRaw("ean = ANY(?::text[])", [filter.eans]);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    db("stock as s")
      .join("warehouses as wh", function () {
        this.on("wh.id", "s.warehouse_id").andOn("wh.account_id", "s.account_id");
      })
      .select("s.*", "wh.external_id as external_warehouse_id")
      .whereIn("s.id", pageOfIds(filtered(), page))
      .orderBy(["s.seq", "s.id"]) as Promise<StockRowDb[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}
