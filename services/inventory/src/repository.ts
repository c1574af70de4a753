import { randomUUID } from "node:crypto";
import type { DescMessage } from "@bufbuild/protobuf";
import type { Db, Row, TableSpec, Tx } from "@analytics/db";
import { isIntegerId, isUuid, pageOfIds, REVISION_COLUMN } from "@analytics/db";
import type { Page } from "@analytics/rpc";
import { changeable, returned, stockTable, storesTable, trafficTable, triggersTable, warehousesTable } from "./resources";
import type { WarehouseRow, WarehouseInput, StockRowDb, StockInput, StoreInput, StoreRow, TrafficInput, TrafficRow, TriggerInput, TriggerRow } from "./resources";

/**
 * The inventory's SQL. Every statement is scoped by account_id, and every batch is a fixed handful
 * of statements whatever its size: rows travel as one jsonb parameter expanded with
 * jsonb_to_recordset.
 */

export type { Page };
export type { WarehouseRow, WarehouseInput, StockRowDb, StockInput, StoreInput, StoreRow, TrafficInput, TrafficRow, TriggerInput, TriggerRow };

const asJson = (rows: unknown) => JSON.stringify(rows);

// ---------------------------------------------------------------------------------------------
// Warehouses

const WAREHOUSE_COLUMNS = returned(warehousesTable);

/**
 * Creates or updates warehouses by (account, external_id) in one statement; `created` and
 * `changed` per row (a warehouse sent as stored is left alone: same version and `updated_at`).
 */
export async function upsertWarehouses(tx: Tx, accountId: string, items: WarehouseInput[]): Promise<(WarehouseRow & { created: boolean; changed: boolean })[]> {
  return upsertAnsweringEach(tx, warehousesTable, "external_id", accountId, items);
}

/**
 * Creates or updates rows of a table spec by (account_id, key) in one statement and answers every
 * sent row: the ones it wrote with `created` and `changed`, the ones sent as stored (left alone:
 * same version and `updated_at`) with both false. The columns set and compared are the spec's
 * changeable ones, so a field added to the message is written and compared without an edit here.
 */
async function upsertAnsweringEach<R>(tx: Tx, spec: TableSpec<DescMessage>, key: string, accountId: string, items: Row[]): Promise<(R & { created: boolean; changed: boolean })[]> {
  const { table } = spec;
  const written = changeable(spec, [key]);
  const answered = returned(spec);
  const input = `SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, ${spec.recordType})`;
  const rows = items.map((item) => ({ ...item, id: randomUUID(), account_id: accountId }));
  const result: { rows: (R & { created: boolean; changed: boolean })[] } = await tx.raw(
    `WITH input AS (${input}), written AS (
       INSERT INTO ${table} AS t (id, account_id, ${key}, ${written.join(", ")})
       SELECT id, account_id, ${key}, ${written.join(", ")} FROM input
       ON CONFLICT (account_id, ${key}) DO UPDATE SET ${written.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, version = t.version + 1, updated_at = now()
       WHERE (${written.map((c) => `t.${c}`).join(", ")}) IS DISTINCT FROM (${written.map((c) => `EXCLUDED.${c}`).join(", ")})
       RETURNING ${answered.join(", ")}, (xmax = 0) AS created
     )
     SELECT *, true AS changed FROM written
     UNION ALL
     SELECT ${answered.map((c) => `t.${c}`).join(", ")}, false, false FROM ${table} t JOIN input i USING (account_id, ${key})
     WHERE NOT EXISTS (SELECT 1 FROM written x WHERE x.${key} = i.${key})`,
    [asJson(rows)],
  );
  // A row another transaction created meanwhile, with the same content, is neither written nor
  // seen by the statement's snapshot: read it in a statement of its own (a fresh snapshot).
  const answeredKeys = new Set(result.rows.map((r) => (r as Row)[key]));
  const unseen = items.map((i) => i[key]).filter((k) => !answeredKeys.has(k));
  if (!unseen.length) return result.rows;
  const late: R[] = await tx(table).select(answered).where("account_id", accountId).whereIn(key, unseen as string[]);
  return [...result.rows, ...late.map((r) => ({ ...r, created: false, changed: false }))];
}

/** A warehouse and its revision (If-Match). */
export async function findWarehouse(db: Db | Tx, accountId: string, externalId: string, lock = false): Promise<(WarehouseRow & { revision: string }) | undefined> {
  const q = db("warehouses").select([...WAREHOUSE_COLUMNS, db.raw(REVISION_COLUMN)]).where({ account_id: accountId, external_id: externalId }).first();
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
  const set = Object.fromEntries(changeable(warehousesTable, ["external_id"]).map((c) => [c, w[c]]));
  const [row] = (await tx("warehouses")
    .where({ account_id: accountId, id })
    .update({ ...set, version: tx.raw("version + 1"), updated_at: tx.fn.now() })
    .returning(WAREHOUSE_COLUMNS)) as WarehouseRow[];
  return row;
}

/** What still refers to a warehouse: its stock rows and its stock triggers. */
export async function warehouseHoldings(tx: Tx, accountId: string, id: string): Promise<{ stock: boolean; triggers: boolean }> {
  const r: { rows: { stock: boolean; triggers: boolean }[] } = await tx.raw(
    `SELECT EXISTS (SELECT 1 FROM stock WHERE account_id = :a AND warehouse_id = :w) AS stock,
            EXISTS (SELECT 1 FROM stock_triggers WHERE account_id = :a AND warehouse_id = :w) AS triggers`,
    { a: accountId, w: id },
  );
  return r.rows[0];
}

export async function deleteWarehouse(tx: Tx, accountId: string, id: string): Promise<void> {
  await tx("warehouses").where({ account_id: accountId, id }).delete();
}

// ---------------------------------------------------------------------------------------------
// Stock


const STOCK_KEY = ["warehouse_id", "sku_id"];
/** What a snapshot of the same date must differ in to be a correction (everything written but the date). */
const STOCK_VALUES = changeable(stockTable, [...STOCK_KEY, "date"]);

/**
 * Applies snapshots in one statement: a row is written when there is none for its (warehouse, SKU),
 * when its date is newer than the stored one, or when it has the same date and different values
 * (a correction); an older one, or the same snapshot again (a replay), changes nothing. The stored row
 * is locked by the upsert, so two writers of the same pair serialise and the newest date wins
 * whatever the order. Within one batch only the newest snapshot of a pair is offered (the caller
 * picks it). Returns the rows written (with `ord`).
 */
export async function applyStock(tx: Tx, accountId: string, items: StockInput[]): Promise<(StockRowDb & { ord: number })[]> {
  if (!items.length) return [];
  const rows = items.map((r) => ({ ...r, id: randomUUID(), account_id: accountId }));
  const columns = stockTable.columns.join(", ");
  const set = changeable(stockTable, STOCK_KEY);
  const result: { rows: (StockRowDb & { ord: number })[] } = await tx.raw(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(ord int, account_id uuid, ${stockTable.recordType})
     ), written AS (
       INSERT INTO stock AS s (account_id, ${columns})
       SELECT account_id, ${columns}
       FROM input ORDER BY warehouse_id, sku_id
       ON CONFLICT (account_id, warehouse_id, sku_id) DO UPDATE SET ${set.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, version = s.version + 1, updated_at = now()
       WHERE EXCLUDED.date > s.date
          OR (EXCLUDED.date = s.date AND (${STOCK_VALUES.map((c) => `EXCLUDED.${c}`).join(", ")})
              IS DISTINCT FROM (${STOCK_VALUES.map((c) => `s.${c}`).join(", ")}))
       RETURNING s.*
     )
     SELECT i.ord, w.id, ${stockTable.select("w")}, wh.external_id AS external_warehouse_id, w.version
     FROM written w
     JOIN input i ON i.warehouse_id = w.warehouse_id AND i.sku_id = w.sku_id
     JOIN warehouses wh ON wh.account_id = ? AND wh.id = w.warehouse_id`,
    [asJson(rows), accountId],
  );
  return result.rows;
}

/** The stored snapshot dates of (warehouse, SKU) pairs, keyed `warehouse:sku`. */
export async function storedStockDates(tx: Tx, accountId: string, pairs: { warehouse_id: string; sku_id: string }[]): Promise<Map<string, Date>> {
  if (!pairs.length) return new Map();
  const result: { rows: { warehouse_id: string; sku_id: string; date: Date }[] } = await tx.raw(
    `SELECT s.warehouse_id, s.sku_id, s.date FROM jsonb_to_recordset(?::jsonb) AS p(warehouse_id uuid, sku_id uuid)
     JOIN stock s ON s.account_id = ? AND s.warehouse_id = p.warehouse_id AND s.sku_id = p.sku_id`,
    [asJson(pairs), accountId],
  );
  return new Map(result.rows.map((r) => [`${r.warehouse_id}:${r.sku_id}`, new Date(r.date)]));
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
      .select(db.raw(`s.id, ${stockTable.select("s")}, s.version, wh.external_id AS external_warehouse_id`))
      .whereIn("s.id", pageOfIds(filtered(), page))
      .orderBy(["s.seq", "s.id"]) as Promise<StockRowDb[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

// ---------------------------------------------------------------------------------------------
// Stores

const STORE_COLUMNS = returned(storesTable);

/**
 * Creates or replaces stores by (account, external_store_id) in one statement; `changed` per row
 * (a store sent as stored is left alone: same version and `updated_at`).
 */
export async function upsertStores(tx: Tx, accountId: string, items: StoreInput[]): Promise<(StoreRow & { created: boolean; changed: boolean })[]> {
  return upsertAnsweringEach(tx, storesTable, "external_store_id", accountId, items);
}

/** A store and its revision (If-Match). */
export async function findStore(db: Db | Tx, accountId: string, externalStoreId: string, lock = false): Promise<(StoreRow & { revision: string }) | undefined> {
  const q = db("stores").select([...STORE_COLUMNS, db.raw(REVISION_COLUMN)]).where({ account_id: accountId, external_store_id: externalStoreId }).first();
  return lock ? q.forUpdate() : q;
}

export async function listStores(db: Db, accountId: string, page: Page): Promise<{ rows: StoreRow[]; total: number }> {
  const filtered = () => db("stores").where({ account_id: accountId });
  const [rows, [{ count }]] = await Promise.all([
    db("stores").select(STORE_COLUMNS).whereIn("id", pageOfIds(filtered(), page)).orderBy(["seq", "id"]) as Promise<StoreRow[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

export async function deleteStore(tx: Tx, accountId: string, id: string): Promise<void> {
  await tx("stores").where({ account_id: accountId, id }).delete();
}

// ---------------------------------------------------------------------------------------------
// Store traffic

/** What an event recorded again sets and compares: every column but (counter, time). */
const TRAFFIC_WRITTEN = changeable(trafficTable, ["counter_id", "event_time"]);

/**
 * Records traffic events in one statement; a (counter, event_time) already stored is overwritten,
 * unless it is stored as sent. Returns what was written (created or changed).
 */
export async function recordTraffic(tx: Tx, accountId: string, items: TrafficInput[]): Promise<{ counter_id: string; event_time: Date; created: boolean }[]> {
  const columns = trafficTable.columns.join(", ");
  const result: { rows: { counter_id: string; event_time: Date; created: boolean }[] } = await tx.raw(
    `INSERT INTO store_traffic AS t (account_id, ${columns})
     SELECT ?::uuid, ${columns}
     FROM jsonb_to_recordset(?::jsonb) AS x(${trafficTable.recordType})
     ORDER BY counter_id, event_time
     ON CONFLICT (account_id, counter_id, event_time) DO UPDATE SET ${TRAFFIC_WRITTEN.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, updated_at = now()
     WHERE (${TRAFFIC_WRITTEN.map((c) => `t.${c}`).join(", ")}) IS DISTINCT FROM (${TRAFFIC_WRITTEN.map((c) => `EXCLUDED.${c}`).join(", ")})
     RETURNING t.counter_id, t.event_time, (xmax = 0) AS created`,
    [accountId, asJson(items)],
  );
  return result.rows;
}

export interface TrafficFilter {
  counterId?: string;
  from?: Date;
  to?: Date;
}

export async function listTraffic(db: Db, accountId: string, filter: TrafficFilter, page: Page): Promise<{ rows: TrafficRow[]; total: number }> {
  const filtered = () => {
    const q = db("store_traffic").where({ account_id: accountId });
    if (filter.counterId) q.where({ counter_id: filter.counterId });
    if (filter.from) q.where("event_time", ">=", filter.from);
    if (filter.to) q.where("event_time", "<", filter.to);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    db("store_traffic")
      .select(db.raw(trafficTable.select()))
      .whereIn("seq", pageOfIds(filtered(), page, "seq", "seq"))
      .orderBy("seq") as Promise<TrafficRow[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

// ---------------------------------------------------------------------------------------------
// Stock triggers


/** What a write of a stored (warehouse, SKU) sets and compares: every written column but the key. */
const TRIGGER_WRITTEN = changeable(triggersTable, ["warehouse_id", "sku_id"]);

/**
 * Creates or fully replaces triggers by (account, warehouse, SKU) in one statement; returns (ord,
 * id, created, changed). A trigger sent as it is stored is left alone (`changed` false): no new
 * version, `updated_at` kept, so nothing is announced for it.
 */
export async function upsertTriggers(tx: Tx, accountId: string, items: TriggerInput[]): Promise<{ ord: number; id: string; created: boolean; changed: boolean }[]> {
  if (!items.length) return [];
  const cols = triggersTable.columns;
  const result: { rows: { ord: number; id: string; created: boolean; changed: boolean }[] } = await tx.raw(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(ord int, ${triggersTable.recordType})
     ), written AS (
       INSERT INTO stock_triggers AS s (account_id, ${cols.join(", ")})
       SELECT ?::uuid, ${cols.join(", ")} FROM input ORDER BY warehouse_id, sku_id
       ON CONFLICT (account_id, warehouse_id, sku_id) DO UPDATE SET ${TRIGGER_WRITTEN.map((c) => `${c} = EXCLUDED.${c}`).join(", ")},
         version = s.version + 1, updated_at = now()
       WHERE (${TRIGGER_WRITTEN.map((c) => `s.${c}`).join(", ")}) IS DISTINCT FROM (${TRIGGER_WRITTEN.map((c) => `EXCLUDED.${c}`).join(", ")})
       RETURNING s.id, s.warehouse_id, s.sku_id, (xmax = 0) AS created
     )
     SELECT i.ord, COALESCE(w.id, s.id) AS id, COALESCE(w.created, false) AS created, w.id IS NOT NULL AS changed
     FROM input i
     LEFT JOIN written w ON w.warehouse_id = i.warehouse_id AND w.sku_id = i.sku_id
     LEFT JOIN stock_triggers s ON s.account_id = ?::uuid AND s.warehouse_id = i.warehouse_id AND s.sku_id = i.sku_id`,
    [asJson(items), accountId, accountId],
  );
  // A trigger another transaction created meanwhile, with the same content, is neither written nor
  // seen by the statement's snapshot: its id is read in a statement of its own (a fresh snapshot).
  const unseen = result.rows.filter((r) => r.id === null);
  if (!unseen.length) return result.rows;
  const byOrd = new Map(items.map((i) => [i.ord, i]));
  const ids: { id: string; warehouse_id: string; sku_id: string }[] = await tx("stock_triggers")
    .select("id", "warehouse_id", "sku_id")
    .where("account_id", accountId)
    .whereIn(["warehouse_id", "sku_id"], unseen.map((r) => [byOrd.get(r.ord)!.warehouse_id, byOrd.get(r.ord)!.sku_id]));
  const idOf = new Map(ids.map((r) => [`${r.warehouse_id}/${r.sku_id}`, r.id]));
  return result.rows.map((r) => (r.id === null ? { ...r, id: idOf.get(`${byOrd.get(r.ord)!.warehouse_id}/${byOrd.get(r.ord)!.sku_id}`)! } : r));
}

function triggers(db: Db | Tx) {
  return db("stock_triggers as t")
    .join("warehouses as w", function () {
      this.on("w.id", "t.warehouse_id").andOn("w.account_id", "t.account_id");
    })
    .select(db.raw(`${triggersTable.select("t")}, t.version, w.external_id AS warehouse_external_id`));
}

/** A page of every account's triggers in (account, id) order, after `after` (the last row of the previous page): for re-announcing them all. */
export async function triggersPage(db: Db | Tx, after: { account_id: string; id: string | number } | undefined, limit: number): Promise<(TriggerRow & { account_id: string })[]> {
  return triggers(db)
    .select("t.account_id")
    .whereRaw("(t.account_id, t.id) > (?::uuid, ?::bigint)", [after?.account_id ?? "00000000-0000-0000-0000-000000000000", String(after?.id ?? -1)])
    .orderBy(["t.account_id", "t.id"])
    .limit(limit);
}

export async function findTriggers(db: Db | Tx, accountId: string, ids: string[]): Promise<TriggerRow[]> {
  if (!ids.length) return [];
  return triggers(db).where("t.account_id", accountId).whereRaw("t.id = ANY(?::bigint[])", [ids]).orderBy("t.id");
}

export interface TriggerFilter {
  warehouseIds: string[];
  skuIds: string[];
  keys: string[];
}

export async function listTriggers(db: Db, accountId: string, filter: TriggerFilter, page: Page): Promise<{ rows: TriggerRow[]; total: number }> {
  const filtered = () => {
    const q = db("stock_triggers").where({ account_id: accountId });
    if (filter.warehouseIds.length) q.whereRaw("warehouse_id = ANY(?::uuid[])", [filter.warehouseIds]);
    // A product is named by its UUID or its integer id.
    if (filter.skuIds.length) {
      const uuids = filter.skuIds.filter(isUuid);
      const seqs = filter.skuIds.filter(isIntegerId);
      q.where((w) => w.whereRaw("sku_id = ANY(?::uuid[])", [uuids]).orWhereRaw("sku_seq = ANY(?::bigint[])", [seqs]));
    }
    if (filter.keys.length) q.whereRaw("key = ANY(?::text[])", [filter.keys]);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    triggers(db).where("t.account_id", accountId).whereIn("t.id", pageOfIds(filtered(), page, "id", "id")).orderBy("t.id") as Promise<TriggerRow[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

/** Warehouses by ID (UUID), for trigger writes that name them so. */
export async function warehousesById(db: Db | Tx, accountId: string, ids: string[]): Promise<Map<string, WarehouseRow>> {
  if (!ids.length) return new Map();
  const rows: WarehouseRow[] = await db("warehouses").select(WAREHOUSE_COLUMNS).where({ account_id: accountId }).whereRaw("id = ANY(?::uuid[])", [[...new Set(ids)]]);
  return new Map(rows.map((r) => [r.id, r]));
}
