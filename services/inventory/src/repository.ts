import { randomUUID } from "node:crypto";
import type { Db, Tx } from "@analytics/db";
import { isIntegerId, isUuid, pageOfIds } from "@analytics/db";
import type { Page } from "@analytics/rpc";

/**
 * The inventory's SQL. Every statement is scoped by account_id, and every batch is a fixed handful
 * of statements whatever its size: rows travel as one jsonb parameter expanded with
 * jsonb_to_recordset.
 */

export type { Page };

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

/**
 * Creates or updates warehouses by (account, external_id) in one statement; `created` and
 * `changed` per row (a warehouse sent as stored is left alone: same version and `updated_at`).
 */
export async function upsertWarehouses(tx: Tx, accountId: string, items: WarehouseInput[]): Promise<(WarehouseRow & { created: boolean; changed: boolean })[]> {
  return upsertAnsweringEach(
    tx,
    {
      table: "warehouses",
      key: "external_id",
      written: ["name", "central_warehouse"],
      returned: WAREHOUSE_COLUMNS,
      input: "SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, account_id uuid, external_id text, name text, central_warehouse boolean)",
    },
    items.map((w) => ({ id: randomUUID(), account_id: accountId, ...w })),
  );
}

/** How upsertAnsweringEach writes one table: its key within the account, the columns a write sets, those it answers. */
interface UpsertSpec {
  table: string;
  key: string;
  written: readonly string[];
  returned: readonly string[];
  /** The SELECT of the sent rows (id, account_id, key and the written columns) from the JSON parameter. */
  input: string;
}

/**
 * Creates or updates rows by (account_id, key) in one statement and answers every sent row: the
 * ones it wrote with `created` and `changed`, the ones sent as stored (left alone: same version and
 * `updated_at`) with both false.
 */
async function upsertAnsweringEach<R>(tx: Tx, { table, key, written, returned, input }: UpsertSpec, rows: object[]): Promise<(R & { created: boolean; changed: boolean })[]> {
  const result: { rows: (R & { created: boolean; changed: boolean })[] } = await tx.raw(
    `WITH input AS (${input}), written AS (
       INSERT INTO ${table} AS t (id, account_id, ${key}, ${written.join(", ")})
       SELECT id, account_id, ${key}, ${written.join(", ")} FROM input
       ON CONFLICT (account_id, ${key}) DO UPDATE SET ${written.map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, version = t.version + 1, updated_at = now()
       WHERE (${written.map((c) => `t.${c}`).join(", ")}) IS DISTINCT FROM (${written.map((c) => `EXCLUDED.${c}`).join(", ")})
       RETURNING ${returned.join(", ")}, (xmax = 0) AS created
     )
     SELECT *, true AS changed FROM written
     UNION ALL
     SELECT ${returned.map((c) => `t.${c}`).join(", ")}, false, false FROM ${table} t JOIN input i USING (account_id, ${key})
     WHERE NOT EXISTS (SELECT 1 FROM written x WHERE x.${key} = i.${key})`,
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
 * Applies snapshots in one statement: a row is written when there is none for its (warehouse, SKU),
 * when its date is newer than the stored one, or when it has the same date and different values
 * (a correction); an older one, or the same snapshot again (a replay), changes nothing. The stored row
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
       WHERE EXCLUDED.date > s.date
          OR (EXCLUDED.date = s.date AND (EXCLUDED.available_quantity, EXCLUDED.physical_quantity, EXCLUDED.supplier, EXCLUDED.key, EXCLUDED.sku, EXCLUDED.ean)
              IS DISTINCT FROM (s.available_quantity, s.physical_quantity, s.supplier, s.key, s.sku, s.ean))
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
      .select("s.*", "wh.external_id as external_warehouse_id")
      .whereIn("s.id", pageOfIds(filtered(), page))
      .orderBy(["s.seq", "s.id"]) as Promise<StockRowDb[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

// ---------------------------------------------------------------------------------------------
// Stores

export interface StoreInput {
  external_store_id: string;
  name: string;
  traffic_counter_id: string | null;
  channel_type: number | null;
  address: string | null;
  address2: string | null;
  zip: string | null;
  city: string | null;
  state: string | null;
  country_code: string | null;
  currency_code: string | null;
  warehouses: string[];
}

export interface StoreRow extends StoreInput {
  id: string;
  version: string | number;
  created_at: Date;
  updated_at: Date;
}

const STORE_TEXT = ["name", "traffic_counter_id", "address", "address2", "zip", "city", "state", "country_code", "currency_code"];
const STORE_COLUMNS = ["id", "external_store_id", ...STORE_TEXT, "channel_type", "warehouses", "version", "created_at", "updated_at"];

/**
 * Creates or replaces stores by (account, external_store_id) in one statement; `changed` per row
 * (a store sent as stored is left alone: same version and `updated_at`).
 */
export async function upsertStores(tx: Tx, accountId: string, items: StoreInput[]): Promise<(StoreRow & { created: boolean; changed: boolean })[]> {
  return upsertAnsweringEach(
    tx,
    {
      table: "stores",
      key: "external_store_id",
      written: [...STORE_TEXT, "channel_type", "warehouses"],
      returned: STORE_COLUMNS,
      input: `SELECT id, account_id, external_store_id, ${STORE_TEXT.join(", ")}, channel_type, ARRAY(SELECT jsonb_array_elements_text(warehouses)) AS warehouses
       FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, account_id uuid, external_store_id text, ${STORE_TEXT.map((c) => `${c} text`).join(", ")},
         channel_type smallint, warehouses jsonb)`,
    },
    items.map((s) => ({ id: randomUUID(), account_id: accountId, ...s })),
  );
}

export async function findStore(db: Db | Tx, accountId: string, externalStoreId: string, lock = false): Promise<StoreRow | undefined> {
  const q = db("stores").select(STORE_COLUMNS).where({ account_id: accountId, external_store_id: externalStoreId }).first();
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

export interface TrafficInput {
  counter_id: string;
  event_time: string;
  incoming: number;
  outgoing: number;
  name: string | null;
  store_id: string | null;
}

export interface TrafficRow extends TrafficInput {
  event_time: string & Date;
}

/**
 * Records traffic events in one statement; a (counter, event_time) already stored is overwritten,
 * unless it is stored as sent. Returns what was written (created or changed).
 */
export async function recordTraffic(tx: Tx, accountId: string, items: TrafficInput[]): Promise<{ counter_id: string; event_time: Date; created: boolean }[]> {
  const result: { rows: { counter_id: string; event_time: Date; created: boolean }[] } = await tx.raw(
    `INSERT INTO store_traffic AS t (account_id, counter_id, event_time, incoming, outgoing, name, store_id)
     SELECT ?::uuid, counter_id, event_time, incoming, outgoing, name, store_id
     FROM jsonb_to_recordset(?::jsonb) AS x(counter_id text, event_time timestamptz, incoming int, outgoing int, name text, store_id text)
     ORDER BY counter_id, event_time
     ON CONFLICT (account_id, counter_id, event_time) DO UPDATE SET incoming = EXCLUDED.incoming, outgoing = EXCLUDED.outgoing,
       name = EXCLUDED.name, store_id = EXCLUDED.store_id, updated_at = now()
     WHERE (t.incoming, t.outgoing, t.name, t.store_id) IS DISTINCT FROM (EXCLUDED.incoming, EXCLUDED.outgoing, EXCLUDED.name, EXCLUDED.store_id)
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
      .select("counter_id", "event_time", "incoming", "outgoing", "name", "store_id")
      .whereIn("seq", pageOfIds(filtered(), page, "seq", "seq"))
      .orderBy("seq") as Promise<TrafficRow[]>,
    filtered().count<{ count: string }[]>({ count: "*" }),
  ]);
  return { rows, total: Number(count) };
}

// ---------------------------------------------------------------------------------------------
// Stock triggers

export interface TriggerInput {
  ord: number;
  warehouse_id: string;
  sku_id: string;
  sku_seq: string | null;
  key: string;
  sku: string | null;
  season: string | null;
  start_date: string | null;
  last_restock_date: string | null;
  prevent_restock: boolean;
  lower_limit: number | null;
  min: number | null;
  max: number | null;
  upper_limit: number | null;
  allow_min_auto: boolean;
  allow_max_auto: boolean;
  min_max_source: string | null;
  min_max_updated_at: string | null;
}

export interface TriggerRow extends Omit<TriggerInput, "ord" | "min_max_updated_at"> {
  id: string;
  warehouse_external_id: string;
  min_max_updated_at: Date | null;
  version: string | number;
}

const TRIGGER_WRITTEN = [
  "sku_seq", "key", "sku", "season", "start_date", "last_restock_date", "prevent_restock", "lower_limit", "min", "max", "upper_limit",
  "allow_min_auto", "allow_max_auto", "min_max_source", "min_max_updated_at",
];
const TRIGGER_TYPES: Record<string, string> = {
  start_date: "date", last_restock_date: "date", prevent_restock: "boolean", allow_min_auto: "boolean", allow_max_auto: "boolean",
  lower_limit: "int", min: "int", max: "int", upper_limit: "int", min_max_updated_at: "timestamptz", sku_seq: "bigint",
};

/**
 * Creates or fully replaces triggers by (account, warehouse, SKU) in one statement; returns (ord,
 * id, created, changed). A trigger sent as it is stored is left alone (`changed` false): no new
 * version, `updated_at` kept, so nothing is announced for it.
 */
export async function upsertTriggers(tx: Tx, accountId: string, items: TriggerInput[]): Promise<{ ord: number; id: string; created: boolean; changed: boolean }[]> {
  if (!items.length) return [];
  const cols = ["warehouse_id", "sku_id", ...TRIGGER_WRITTEN];
  const result: { rows: { ord: number; id: string; created: boolean; changed: boolean }[] } = await tx.raw(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(ord int, warehouse_id uuid, sku_id uuid,
         ${TRIGGER_WRITTEN.map((c) => `${c} ${TRIGGER_TYPES[c] ?? "text"}`).join(", ")})
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
  return result.rows;
}

function triggers(db: Db | Tx) {
  return db("stock_triggers as t")
    .join("warehouses as w", function () {
      this.on("w.id", "t.warehouse_id").andOn("w.account_id", "t.account_id");
    })
    .select(
      "t.*",
      "w.external_id as warehouse_external_id",
      db.raw("to_char(t.start_date, 'YYYY-MM-DD') AS start_date"),
      db.raw("to_char(t.last_restock_date, 'YYYY-MM-DD') AS last_restock_date"),
    );
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
