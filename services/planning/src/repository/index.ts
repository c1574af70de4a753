import type { Knex } from "knex";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { accountsMessagesV1, inventoryMessagesV1, ordersMessagesV1, type planningV1 } from "@analytics/contracts";
import { bumpAccountVersions, tableSpec, type Db, type TableSpec, type Tx } from "@analytics/db";
import type { VolumeQuery } from "../validation";
import { groupColumn, groupKeyOf, skuWhere } from "./filters";
import { groupsIn, paged, type PageOf } from "./pages";
import { json } from "./sql";
import type { SalesLineFigures } from "./rollups";

export * from "./filters";
export * from "./pages";
export * from "./rollups";
export * from "./group-months";
export * from "./answers";
export * from "./sales-plans";

/** A row of planned volumes: a PlannedVolumeWarehouseRow (a PlannedVolumeRow with its warehouse). */
export type VolumeRow = Omit<planningV1.PlannedVolumeWarehouseRow, "$typeName" | "$unknown">;

/**
 * The statement of an account's planned volumes (see plannedVolumes), with its bindings: the SKUs
 * that pass the filters, their available stock (live warehouses), and the open quantity of their
 * PO lines delivered inside [fromDate, toDate], summed per group (and warehouse). With
 * updatedSince only the groups (rows) whose PO or draft-PO volume changed after it are kept, with
 * zeros where nothing is left: groups of lines changed since, and groups that lines or SKUs left.
 */
export function volumesStatement(accountId: string, q: VolumeQuery, byWarehouse: boolean): { sql: string; bindings: Knex.RawBinding[] } {
  const where = skuWhere(q.filters);
  const g = groupColumn[q.groupBy];
  const keys = byWarehouse ? "g, wid" : "g";
  const stWid = byWarehouse ? ", st.warehouse_id::text AS wid" : "";
  const poWid = byWarehouse ? ", coalesce(w.warehouse_id::text, '') AS wid" : "";
  const poJoin = byWarehouse ? "LEFT JOIN wx w ON w.external_id = l.external_warehouse_id" : "";
  const bindings: Knex.RawBinding[] = [accountId, ...where.bindings];
  const afterPage = groupsIn(groupKeyOf(q.groupBy), q.page, (value) => (bindings.push(value), "?"));
  bindings.push(accountId, accountId, accountId, q.fromDate, q.toDate);
  let since = "";
  let from = "v";
  if (q.updatedSince) {
    const at =
      "instant" in q.updatedSince
        ? "?::timestamptz"
        : `(?::date)::timestamp AT TIME ZONE coalesce((SELECT a.timezone FROM accounts a WHERE a.account_id = ? AND a.timezone IN (SELECT name FROM timezone_names)), 'UTC')`;
    const atBindings = "instant" in q.updatedSince ? [q.updatedSince.instant] : [q.updatedSince.date, accountId];
    // The groups of lines changed since, and those that lost (or gained) volume with no line
    // left to say so (changed_groups: removed or moved lines, SKUs that changed group).
    const cgWid = byWarehouse ? ", coalesce(w.warehouse_id::text, '') AS wid" : "";
    const cgJoin = byWarehouse ? "LEFT JOIN wx w ON w.external_id = c.external_warehouse_id" : "";
    since = `, ch AS (
        SELECT s.g${poWid}
        FROM purchase_order_lines l JOIN s USING (sku_id) ${poJoin}
        WHERE l.account_id = ? AND l.changed_at > ${at}
        UNION
        SELECT coalesce(c.${g}, '') AS g${cgWid}
        FROM changed_groups c JOIN s USING (sku_id) ${cgJoin}
        WHERE c.account_id = ? AND c.po_volume AND c.changed_at > ${at})`;
    bindings.push(accountId, ...atBindings, accountId, ...atBindings);
    from = `ch LEFT JOIN v USING (${keys})`;
  }
  // Stock rows and window lines in one UNION ALL, summed per group: one pass each, and Postgres
  // can run both sides and the partial sums in parallel workers.
  const sql = `WITH s AS NOT MATERIALIZED (
        SELECT s.sku_id, coalesce(s.${g}, '') AS g FROM skus s WHERE s.account_id = ? AND ${where.sql}${afterPage}),
      w AS NOT MATERIALIZED (SELECT warehouse_id, external_id, name FROM warehouses WHERE account_id = ? AND NOT deleted),
      wx AS NOT MATERIALIZED (SELECT DISTINCT ON (external_id) external_id, warehouse_id FROM w WHERE external_id <> '' ORDER BY external_id, warehouse_id),
      v AS (
        SELECT ${keys}, sum(stock) AS stock, sum(po) AS po, sum(draft) AS draft FROM (
          SELECT s.g${stWid}, st.available_quantity AS stock, 0 AS po, 0 AS draft
          FROM stock st JOIN s USING (sku_id) JOIN w USING (warehouse_id)
          WHERE st.account_id = ? AND NOT st.deleted
          UNION ALL
          SELECT s.g${poWid}, 0, CASE WHEN l.kind = 'po' THEN l.open_quantity ELSE 0 END, CASE WHEN l.kind = 'draft' THEN l.open_quantity ELSE 0 END
          FROM purchase_order_lines l JOIN s USING (sku_id) ${poJoin}
          WHERE l.account_id = ? AND l.kind <> 'cancelled' AND l.delivery_date BETWEEN ?::date AND ?::date
        ) x GROUP BY ${keys})
      ${since}
     SELECT g${byWarehouse ? ", wid, coalesce(wn.name, '') AS wname" : ""},
       coalesce(v.stock, 0)::text AS stock, coalesce(v.po, 0)::text AS po, coalesce(v.draft, 0)::text AS draft
     FROM ${from}
     ${byWarehouse ? "LEFT JOIN w wn ON wn.warehouse_id::text = wid" : ""}
     ORDER BY g${byWarehouse ? ", wid" : ""}`;
  return { sql, bindings };
}

/**
 * Runs a volumes statement with hash (or merge) joins only. It reads all of an account's rows
 * whatever the account's size, and the nested loop the planner picks when its statistics do not
 * know the account yet (rows written since the last ANALYZE, or a crash that reset the counters
 * autovacuum goes by) read the account's SKUs once per order line: 8 s instead of 50 ms for
 * 10,000 lines and 3,000 SKUs.
 */
export function withHashJoins<T>(db: Db, work: (tx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.raw("SET LOCAL enable_nestloop = off");
    return work(tx);
  });
}

/** Planned volumes of one account from the replica, in one statement (volumesStatement); a page of them with `q.page`. */
export async function plannedVolumes(db: Db, accountId: string, q: VolumeQuery, byWarehouse: boolean): Promise<PageOf<VolumeRow>> {
  const { sql, bindings } = paged(volumesStatement(accountId, q, byWarehouse), byWarehouse ? "y.g, y.wid" : "y.g", q.page);
  type Row = { g: string; wid?: string; wname?: string; stock: string; po: string; draft: string; grank?: string; next_after?: string | null };
  const all: Row[] = await withHashJoins(db, async (tx) => (await tx.raw(sql, bindings)).rows);
  // A page's last group, read only to know that it follows.
  const rows = q.page ? all.filter((r) => Number(r.grank) <= q.page!.size) : all;
  const answer: PageOf<VolumeRow> = rows.map((r) => ({
    groupKey: r.g,
    warehouseId: r.wid ?? "",
    warehouseName: r.wname ?? "",
    stockVolume: BigInt(r.stock),
    poVolume: BigInt(r.po),
    draftPoVolume: BigInt(r.draft),
  }));
  answer.nextAfter = all[0]?.next_after ?? undefined;
  return answer;
}

/** What GetReplicaSummary answers. */
export type ReplicaSummary = Omit<planningV1.GetReplicaSummaryResponse, "$typeName" | "$unknown">;

/** Counts (live rows) and version sums (all rows, tombstones included) of one account's replica. */
export async function replicaSummary(db: Db, accountId: string): Promise<ReplicaSummary> {
  const { rows } = await db.raw(
    `SELECT
       (SELECT count(*) FROM skus WHERE account_id = :a) AS skus,
       (SELECT coalesce(sum(version), 0) FROM skus WHERE account_id = :a) AS sku_versions,
       (SELECT count(*) FILTER (WHERE NOT deleted) FROM warehouses WHERE account_id = :a) AS warehouses,
       (SELECT coalesce(sum(version), 0) FROM warehouses WHERE account_id = :a) AS warehouse_versions,
       (SELECT count(*) FILTER (WHERE NOT deleted) FROM stock WHERE account_id = :a) AS stock,
       (SELECT coalesce(sum(version), 0) FROM stock WHERE account_id = :a) AS stock_versions,
       (SELECT count(*) FROM purchase_orders WHERE account_id = :a) AS orders,
       (SELECT coalesce(sum(version), 0) FROM purchase_orders WHERE account_id = :a) AS order_versions,
       (SELECT count(*) FROM purchase_order_lines WHERE account_id = :a) AS lines`,
    { a: accountId },
  );
  const r = rows[0];
  return {
    skus: BigInt(r.skus),
    warehouses: BigInt(r.warehouses),
    stockRows: BigInt(r.stock),
    purchaseOrders: BigInt(r.orders),
    purchaseOrderLines: BigInt(r.lines),
    skuVersionSum: BigInt(r.sku_versions),
    stockVersionSum: BigInt(r.stock_versions),
    purchaseOrderVersionSum: BigInt(r.order_versions),
    warehouseVersionSum: BigInt(r.warehouse_versions),
  };
}

// ---------------------------------------------------------------------------------------------
// The replica's writes (src/replica.ts): rows travel as one jsonb array, bigints as text.


/**
 * Inserts rows (a jsonb array) into `table`, replacing a stored row only when the new one has a
 * higher `version`; answers the keys of the rows that were written.
 */
async function upsertNewer(
  tx: Tx,
  table: string,
  keys: string[],
  names: readonly string[],
  recordType: string,
  rows: object[],
  changedWhen?: string[],
  /** A condition under which a row of the same version is written too. */
  sameVersionWhen?: string,
): Promise<Record<string, string>[]> {
  if (!rows.length) return [];
  // With changedWhen, the row's changed_at is when it was written (the replica's now()), moved
  // only by a newer version that changes one of these columns: replays and older versions write
  // nothing, and a newer version with the same figures changes no group.
  const changedAt = changedWhen
    ? {
        column: ", changed_at",
        value: ", now()",
        set: `, changed_at = CASE WHEN (${changedWhen.map((c) => `${table}.${c}`).join(", ")}) IS DISTINCT FROM (${changedWhen.map((c) => `excluded.${c}`).join(", ")}) THEN excluded.changed_at ELSE ${table}.changed_at END`,
      }
    : { column: "", value: "", set: "" };
  const { rows: written } = await tx.raw(
    `INSERT INTO ${table} (${names.join(", ")}${changedAt.column})
     SELECT ${names.join(", ")}${changedAt.value} FROM jsonb_to_recordset(?::jsonb) AS x(${recordType})
     ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${names.filter((n) => !keys.includes(n)).map((n) => `${n} = excluded.${n}`).join(", ")}${changedAt.set}
     WHERE ${table}.version < excluded.version${sameVersionWhen ? ` OR (${table}.version = excluded.version AND ${sameVersionWhen})` : ""}
     RETURNING ${keys.join(", ")}`,
    [json(rows)],
  );
  return written;
}

/** upsertNewer of a table whose columns are (part of) a bus message's fields: the messages' rows. */
async function storeNewer<D extends DescMessage>(tx: Tx, spec: TableSpec<D>, keys: string[], messages: MessageShape<D>[], changedWhen?: string[]): Promise<Record<string, string>[]> {
  return upsertNewer(tx, spec.table, keys, spec.columns, spec.recordType, messages.map((m) => spec.rowOf(m)), changedWhen);
}

const skuColumns = {
  account_id: "uuid", sku_id: "uuid", version: "bigint", key: "text", sku: "text", status: "int", active_planning: "boolean",
  season: "text", product_group_id: "text", variant_group_id: "text", brand: "text", category: "text", size: "text",
  department: "text", gender: "text", collection: "text", color: "text", sub_category: "text", product_type: "text",
  merchandise_type: "text", pim_custom: "text[]", sku_seq: "bigint", ean: "text",
};

/**
 * skus: not a message's fields (the Product's renamed, defaulted and gathered ones), so listed here
 * (replica.ts applySkus). A message of the version held fills in its EAN: the catalogue's
 * re-announcement (its migration 005) of SKUs stored before the replica kept EANs (migration 010).
 */
export const storeNewerSkus = (tx: Tx, rows: object[]) =>
  upsertNewer(
    tx,
    "skus",
    ["account_id", "sku_id"],
    Object.keys(skuColumns),
    Object.entries(skuColumns).map(([n, type]) => `${n} ${type}`).join(", "),
    rows,
    undefined,
    "skus.ean IS DISTINCT FROM excluded.ean",
  );

/** What names a SKU in sales, and what places it in the answers' groups (and the group rollups' keys). */
export type SkuPlace = { key: string; sku: string | null; ean: string | null; season: string | null; product_group_id: string | null; variant_group_id: string | null; status: number; active_planning: boolean; brand: string | null };
const skuPlaceColumns = ["key", "sku", "ean", "season", "product_group_id", "variant_group_id", "status", "active_planning", "brand"] as const;

/** Whether two SKU places differ in any of their columns (names or groups). */
export const placeDiffers = (a: SkuPlace, b: SkuPlace) => skuPlaceColumns.some((c) => a[c] !== b[c]);

/**
 * The `columns` of the replica's row of a batch's SKU `x`, as a probe of its primary key, for a
 * LATERAL join: `LIMIT 1` keeps it a probe per SKU. With a plain join the planner (which takes
 * jsonb_to_recordset for 100 rows) hashed every stored SKU for each batch: a consumer batch of 500
 * new SKUs took 37 ms at 200,000 stored against 7–8.5 ms probed, and grew with the replica.
 */
const storedSku = (columns: readonly string[]) => `SELECT ${columns.join(", ")} FROM skus WHERE account_id = x.account_id AND sku_id = x.sku_id LIMIT 1`;
const regroupedColumns = ["sku_id", "version", "season", "product_group_id", "variant_group_id", "key", "sku", "ean"];

/** Each of these SKUs' place as stored now, by "account/sku id"; absent: not in the replica. */
export async function storedSkuPlaces(tx: Tx, skus: { account_id: string; sku_id: string }[]): Promise<Map<string, SkuPlace>> {
  if (!skus.length) return new Map();
  const { rows } = await tx.raw(
    `SELECT x.account_id, x.sku_id, ${skuPlaceColumns.map((c) => `s.${c}`).join(", ")}
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, sku_id uuid) CROSS JOIN LATERAL (${storedSku(skuPlaceColumns)}) s`,
    [json(skus.map(({ account_id, sku_id }) => ({ account_id, sku_id })))],
  );
  return new Map(rows.map((r: SkuPlace & { account_id: string; sku_id: string }) => [`${r.account_id}/${r.sku_id}`, r]));
}

/*
 * warehouses, stock, purchase_orders and accounts keep the fields of the bus message they
 * replicate that planning reads (`only`): its other fields, and those the message gains, are
 * not their columns. Ids are uuid columns (the messages carry them as text).
 */
const uuids = (...names: string[]) => Object.fromEntries(names.map((n) => [n, "uuid"]));

export const warehousesTable = tableSpec(inventoryMessagesV1.WarehouseChangedSchema, "warehouses", {
  only: ["account_id", "warehouse_id", "version", "external_id", "name", "deleted"],
  columnTypes: uuids("account_id", "warehouse_id"),
});
export const stockTable = tableSpec(inventoryMessagesV1.StockUpdatedSchema, "stock", {
  only: ["account_id", "warehouse_id", "sku_id", "version", "available_quantity", "deleted"],
  columnTypes: uuids("account_id", "warehouse_id", "sku_id"),
});
/** An order's version and status (its lines are purchase_order_lines). */
export const purchaseOrdersTable = tableSpec(ordersMessagesV1.PurchaseOrderChangedSchema, "purchase_orders", {
  only: ["account_id", "purchase_order_id", "version", "delivery_status", "updated_at"],
  columnTypes: uuids("account_id", "purchase_order_id"),
});
export const accountsTable = tableSpec(accountsMessagesV1.AccountSettingsChangedSchema, "accounts", {
  only: ["account_id", "version", "timezone", "sales_plan_growth"],
  columnTypes: uuids("account_id"),
});

export const storeNewerWarehouses = (tx: Tx, messages: inventoryMessagesV1.WarehouseChanged[]) => storeNewer(tx, warehousesTable, ["account_id", "warehouse_id"], messages);

/**
 * stock.changed_at is when the replica wrote the row's figures, not the snapshot's date: a snapshot
 * is dated by the client (often a day or more back, or not at all), and one posted after an
 * updatedSince but dated before it changed the figures after it all the same.
 */
export const storeNewerStock = (tx: Tx, messages: inventoryMessagesV1.StockUpdated[]) =>
  storeNewer(tx, stockTable, ["account_id", "sku_id", "warehouse_id"], messages, ["available_quantity", "deleted"]);

/** Answers the keys (account_id, purchase_order_id) of the orders written. */
export const storeNewerPurchaseOrders = (tx: Tx, messages: ordersMessagesV1.PurchaseOrderChanged[]) => storeNewer(tx, purchaseOrdersTable, ["account_id", "purchase_order_id"], messages);

/** A transaction's version (its sales are sales_lines). */
export const salesTransactionsTable = tableSpec(ordersMessagesV1.TransactionChangedSchema, "sales_transactions", {
  only: ["account_id", "transaction_id", "version"],
  columnTypes: uuids("account_id", "transaction_id"),
});

/** Answers the keys (account_id, transaction_id) of the transactions written. */
export const storeNewerSalesTransactions = (tx: Tx, messages: ordersMessagesV1.TransactionChanged[]) => storeNewer(tx, salesTransactionsTable, ["account_id", "transaction_id"], messages);

/** Deletes the sales lines of these transactions, answering them (the rollups take them off). */
export async function deleteSalesLines(tx: Tx, transactions: { account_id: string; transaction_id: string }[]): Promise<SalesLineFigures[]> {
  const { rows } = await tx.raw(
    `DELETE FROM sales_lines l USING jsonb_to_recordset(?::jsonb) AS x(account_id uuid, transaction_id uuid)
     WHERE l.account_id = x.account_id AND l.transaction_id = x.transaction_id
     RETURNING l.account_id, l.key, l.sku, l.ean, l.channel, l.external_warehouse_id, l.sold_at::text AS sold_at, l.units`,
    [json(transactions)],
  );
  return rows;
}

export async function insertSalesLines(tx: Tx, lines: object[]): Promise<void> {
  if (!lines.length) return;
  await tx.raw(
    `INSERT INTO sales_lines (account_id, transaction_id, external_item_id, external_warehouse_id, key, sku, ean, channel, sold_at, units, changed_at)
     SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, transaction_id uuid, external_item_id text, external_warehouse_id text,
       key text, sku text, ean text, channel int, sold_at timestamptz, units int, changed_at timestamptz)`,
    [json(lines)],
  );
}

/** accounts.changed_at moves when the timezone (the days sales fall on) or the growth (the baseline) changes: every group changed. */
export const storeNewerAccounts = (tx: Tx, messages: accountsMessagesV1.AccountSettingsChanged[]) =>
  storeNewer(tx, accountsTable, ["account_id"], messages, ["timezone", "sales_plan_growth"]);

/** A SKU's groups (every groupBy's column) and what names it in sales and distribution orders. */
type SkuGroups = { account_id: string; sku_id: string; version: bigint; season: string | null; product_group_id: string | null; variant_group_id: string | null; key: string; sku: string | null; ean: string | null };

/**
 * A SKU that changes group (to a newer version) moves its figures: the group it left and the one
 * it joined changed. With PO lines, per warehouse of its lines, as planned volumes read them
 * (po_volume); with any input of the breakdowns (stock, sales by its old or new key or sku,
 * stored plans, distribution orders, stock triggers, PO lines), one row for every warehouse row
 * of each group (external_warehouse_id '' and warehouse_id NULL), also for a SKU new to the
 * replica (the group it joined). A SKU whose sku or EAN changes (an EAN also at the version held:
 * the catalogue's re-announcement) moves what names it by those alone (sales by sku or by EAN,
 * distribution orders by sku) without changing group: its group changed too.
 */
export async function recordRegroupedSkus(tx: Tx, skus: SkuGroups[]): Promise<void> {
  if (!skus.length) return;
  const regrouped = `FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, sku_id uuid, version bigint, season text, product_group_id text, variant_group_id text, key text, sku text)
     JOIN LATERAL (${storedSku(regroupedColumns)}) s ON s.version < x.version
       AND (s.season, s.product_group_id, s.variant_group_id, s.key) IS DISTINCT FROM (x.season, x.product_group_id, x.variant_group_id, x.key)
     CROSS JOIN LATERAL (VALUES (s.season, s.product_group_id, s.variant_group_id, s.key), (x.season, x.product_group_id, x.variant_group_id, x.key))
       AS g(season, product_group_id, variant_group_id, key)`;
  await tx.raw(
    `INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, season, product_group_id, variant_group_id, key, changed_at, po_volume)
     SELECT DISTINCT x.account_id, s.sku_id, l.external_warehouse_id, g.season, g.product_group_id, g.variant_group_id, g.key, now(), true
     ${regrouped}
     JOIN purchase_order_lines l ON l.account_id = x.account_id AND l.sku_id = s.sku_id`,
    [json(skus)],
  );
  // A SKU new to the replica whose inputs arrived first (sales and distribution orders name it by
  // key, stock and triggers may precede its product message) joins its group with them: recorded too.
  await tx.raw(
    `INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, warehouse_id, season, product_group_id, variant_group_id, key, changed_at, po_volume)
     SELECT DISTINCT x.account_id, x.sku_id, '', NULL::uuid, g.season, g.product_group_id, g.variant_group_id, g.key, now(), false
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, sku_id uuid, version bigint, season text, product_group_id text, variant_group_id text, key text, sku text, ean text)
     LEFT JOIN LATERAL (${storedSku(regroupedColumns)}) s ON true
     CROSS JOIN LATERAL (
       SELECT s.season, s.product_group_id, s.variant_group_id, s.key WHERE s.sku_id IS NOT NULL
       UNION ALL SELECT x.season, x.product_group_id, x.variant_group_id, x.key) AS g(season, product_group_id, variant_group_id, key)
     WHERE ((s.sku_id IS NULL OR (s.version < x.version
         AND (s.season, s.product_group_id, s.variant_group_id, s.key) IS DISTINCT FROM (x.season, x.product_group_id, x.variant_group_id, x.key)))
       AND (EXISTS (SELECT 1 FROM stock st WHERE st.account_id = x.account_id AND st.sku_id = x.sku_id AND NOT st.deleted)
         OR EXISTS (SELECT 1 FROM purchase_order_lines l WHERE l.account_id = x.account_id AND l.sku_id = x.sku_id)
         OR EXISTS (SELECT 1 FROM sales_lines l WHERE l.account_id = x.account_id AND l.key IN (s.key, x.key))
         OR EXISTS (SELECT 1 FROM sales_lines l WHERE l.account_id = x.account_id AND l.key IS NULL AND l.sku IN (s.sku, x.sku))
         OR EXISTS (SELECT 1 FROM sales_plans p WHERE p.account_id = x.account_id AND p.sku_id = x.sku_id)
         OR EXISTS (SELECT 1 FROM distribution_orders d WHERE d.account_id = x.account_id AND d.key IN (s.key, x.key))
         OR EXISTS (SELECT 1 FROM distribution_orders d WHERE d.account_id = x.account_id AND d.key IS NULL AND d.sku IN (s.sku, x.sku))
         OR EXISTS (SELECT 1 FROM stock_trigger_minimums t WHERE t.account_id = x.account_id AND t.sku_id = x.sku_id)
         OR EXISTS (SELECT 1 FROM sales_lines l WHERE l.account_id = x.account_id AND l.key IS NULL AND l.sku IS NULL AND l.ean IN (s.ean, x.ean))))
       OR (s.version <= x.version AND (s.sku, s.ean) IS DISTINCT FROM (x.sku, x.ean)
         AND (EXISTS (SELECT 1 FROM sales_lines l WHERE l.account_id = x.account_id AND l.key IS NULL AND l.sku IN (s.sku, x.sku))
           OR EXISTS (SELECT 1 FROM distribution_orders d WHERE d.account_id = x.account_id AND d.key IS NULL AND d.sku IN (s.sku, x.sku))
           OR EXISTS (SELECT 1 FROM sales_lines l WHERE l.account_id = x.account_id AND l.key IS NULL AND l.sku IS NULL AND l.ean IN (s.ean, x.ean))))`,
    [json(skus)],
  );
}

/**
 * Records as changed the groups of the stored sales lines of these transactions that the new
 * version's lines (`kept`) no longer have: a cancelled transaction's, a removed item's, units
 * moved to another warehouse or item reference. The SKU is the one the line names now (by key,
 * else sku, else ean), as the breakdowns match it when read.
 */
export async function recordDroppedSales(
  tx: Tx,
  transactions: { account_id: string; transaction_id: string; changed_at: string | null }[],
  kept: { account_id: string; transaction_id: string; key: string | null; sku: string | null; ean: string | null; external_warehouse_id: string }[],
): Promise<void> {
  if (!transactions.length) return;
  await tx.raw(
    `WITH x AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, transaction_id uuid, changed_at timestamptz)),
     -- The stored lines' names the new ones no longer have: EXCEPT compares NULLs as equal and
     -- hashes, where a NOT EXISTS on IS NOT DISTINCT FROM compared every pair (4,000,000 a batch).
     gone AS (
       SELECT l.account_id, l.transaction_id, l.key, l.sku, l.ean, l.external_warehouse_id
       FROM x JOIN sales_lines l ON l.account_id = x.account_id AND l.transaction_id = x.transaction_id
       EXCEPT
       SELECT * FROM jsonb_to_recordset(?::jsonb) AS k(account_id uuid, transaction_id uuid, key text, sku text, ean text, external_warehouse_id text)),
     dropped AS MATERIALIZED (
       SELECT g.account_id, g.key, g.sku, g.ean, g.external_warehouse_id, coalesce(x.changed_at, now()) AS changed_at
       FROM gone g JOIN x ON x.account_id = g.account_id AND x.transaction_id = g.transaction_id)
     INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, season, product_group_id, variant_group_id, key, changed_at, po_volume)
     ${[
       ["s.key = d.key", ""],
       ["s.sku = d.sku", "WHERE d.key IS NULL"],
       ["s.ean = d.ean", "WHERE d.key IS NULL AND d.sku IS NULL"],
     ]
       // One equality join per kind of name, not one join on an OR of them: an OR cannot use the
       // SKUs' indexes and compared every line with every SKU (seconds a batch at 100,000 SKUs).
       .map(([named, where]) => `SELECT d.account_id, s.sku_id, d.external_warehouse_id, s.season, s.product_group_id, s.variant_group_id, s.key, d.changed_at, false
         FROM dropped d JOIN skus s ON s.account_id = d.account_id AND ${named} ${where}`)
       .join(" UNION ")}`,
    [json(transactions), json(kept)],
  );
}

/**
 * Records as changed the group of each stored line of these orders whose (SKU, warehouse) is not
 * among `kept` (the lines that replace them): it leaves no line behind.
 */
export async function recordDroppedLines(
  tx: Tx,
  orders: { account_id: string; purchase_order_id: string; changed_at: string | null }[],
  kept: { account_id: string; purchase_order_id: string; sku_id: string; external_warehouse_id: string }[],
): Promise<void> {
  await tx.raw(
    `INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, season, product_group_id, variant_group_id, key, changed_at, po_volume)
     SELECT DISTINCT l.account_id, l.sku_id, l.external_warehouse_id, s.season, s.product_group_id, s.variant_group_id, s.key, coalesce(x.changed_at, now()), true
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, purchase_order_id uuid, changed_at timestamptz)
     JOIN purchase_order_lines l ON l.account_id = x.account_id AND l.purchase_order_id = x.purchase_order_id
     LEFT JOIN skus s ON s.account_id = l.account_id AND s.sku_id = l.sku_id
     WHERE NOT EXISTS (
       SELECT 1 FROM jsonb_to_recordset(?::jsonb) AS k(account_id uuid, purchase_order_id uuid, sku_id uuid, external_warehouse_id text)
       WHERE k.account_id = l.account_id AND k.purchase_order_id = l.purchase_order_id AND k.sku_id = l.sku_id AND k.external_warehouse_id = l.external_warehouse_id)`,
    [json(orders), json(kept)],
  );
}

/**
 * Records as changed the group (and warehouses) a distribution order leaves when a newer version
 * names another SKU or warehouse: its open quantity moves away with no row left to say so. The
 * rows are what the applier stores (jsonb_to_recordset ignores their other fields); call it
 * before storing them. A warehouse '' is none; an order with neither records its group for every
 * warehouse.
 */
export async function recordMovedDistributionOrders(
  tx: Tx,
  rows: { account_id: string; distribution_order_id: string; version: bigint | string; key: string | null; sku: string | null; from_external_warehouse_id: string; to_external_warehouse_id: string; changed_at?: string | null }[],
): Promise<void> {
  if (!rows.length) return;
  await tx.raw(
    `INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, season, product_group_id, variant_group_id, key, changed_at, po_volume)
     SELECT DISTINCT o.account_id, s.sku_id, w.was, s.season, s.product_group_id, s.variant_group_id, s.key, coalesce(x.changed_at, now()), false
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, distribution_order_id uuid, version bigint, key text, sku text,
       from_external_warehouse_id text, to_external_warehouse_id text, changed_at timestamptz)
     JOIN distribution_orders o ON o.account_id = x.account_id AND o.distribution_order_id = x.distribution_order_id AND o.version < x.version AND o.open_quantity > 0
     -- The SKU by key, else by sku: two index lookups (a join on an OR of them compares every SKU).
     CROSS JOIN LATERAL (
       SELECT s.* FROM skus s WHERE s.account_id = o.account_id AND s.key = o.key
       UNION ALL SELECT s.* FROM skus s WHERE s.account_id = o.account_id AND o.key IS NULL AND s.sku = o.sku) s
     CROSS JOIN LATERAL (VALUES (o.from_external_warehouse_id, x.from_external_warehouse_id), (o.to_external_warehouse_id, x.to_external_warehouse_id)) AS w(was, now)
     WHERE ((o.key, o.sku) IS DISTINCT FROM (x.key, x.sku) OR w.was IS DISTINCT FROM w.now)
       AND (w.was <> '' OR (o.from_external_warehouse_id = '' AND o.to_external_warehouse_id = ''))`,
    [json(rows)],
  );
}

/** Deletes the lines in `table` of the given owners (orders, transactions), each named by (account_id, `owner`). */
async function deleteLinesOf(tx: Tx, table: string, owner: string, owners: Record<string, string>[]): Promise<void> {
  await tx.raw(
    `DELETE FROM ${table} l USING jsonb_to_recordset(?::jsonb) AS x(account_id uuid, ${owner} uuid)
     WHERE l.account_id = x.account_id AND l.${owner} = x.${owner}`,
    [json(owners)],
  );
}

export const deleteOrderLines = (tx: Tx, orders: { account_id: string; purchase_order_id: string }[]) => deleteLinesOf(tx, "purchase_order_lines", "purchase_order_id", orders);

export async function insertOrderLines(tx: Tx, lines: object[]): Promise<void> {
  await tx.raw(
    `INSERT INTO purchase_order_lines (account_id, purchase_order_id, item_id, sku_id, external_warehouse_id, delivery_date, open_quantity, kind, changed_at)
     SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, purchase_order_id uuid, item_id text, sku_id uuid,
       external_warehouse_id text, delivery_date date, open_quantity int, kind text, changed_at timestamptz)`,
    [json(lines)],
  );
}

/** The replica's epoch: a new or wiped schema has a new one (migrations). */
export async function replicaEpoch(db: Db): Promise<string> {
  return (await db("replica_epoch").first("id")).id;
}

/**
 * distribution_orders (migration 006): one row per order, replaced only by a newer version. A row
 * without a change time (no updatedAt in the message) takes the time it was applied.
 */
export async function storeNewerDistributionOrders(tx: Tx, rows: object[]): Promise<void> {
  if (!rows.length) return;
  await tx.raw(
    `INSERT INTO distribution_orders (account_id, distribution_order_id, version, key, sku, from_external_warehouse_id, to_external_warehouse_id, delivered_at, open_quantity, changed_at)
     SELECT account_id, distribution_order_id, version, key, sku, from_external_warehouse_id, to_external_warehouse_id, delivered_at, open_quantity, coalesce(changed_at, now())
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, distribution_order_id uuid, version bigint, key text, sku text,
       from_external_warehouse_id text, to_external_warehouse_id text, delivered_at timestamptz, open_quantity int, changed_at timestamptz)
     ON CONFLICT (account_id, distribution_order_id) DO UPDATE SET version = excluded.version, key = excluded.key, sku = excluded.sku,
       from_external_warehouse_id = excluded.from_external_warehouse_id, to_external_warehouse_id = excluded.to_external_warehouse_id,
       delivered_at = excluded.delivered_at, open_quantity = excluded.open_quantity, changed_at = excluded.changed_at
     WHERE distribution_orders.version < excluded.version`,
    [json(rows)],
  );
}

/**
 * stock_trigger_minimums (migration 006): a trigger's SKU, warehouse and min, replaced only by a
 * newer version. changed_at is when a version that changed one of those three was applied: the
 * trigger has no updatedAt, and its minMaxUpdatedAt is a client-written field that moves only
 * with min/max (not with the SKU or warehouse) and need not grow, so it cannot say when the
 * figures changed. A newer version that changes none of the three keeps the time.
 */
export async function storeNewerStockTriggerMinimums(tx: Tx, rows: object[]): Promise<void> {
  if (!rows.length) return;
  await tx.raw(
    `INSERT INTO stock_trigger_minimums AS t (account_id, stock_trigger_id, version, sku_id, warehouse_id, min, changed_at)
     SELECT account_id, stock_trigger_id, version, sku_id, warehouse_id, min, now()
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, stock_trigger_id bigint, version bigint, sku_id uuid, warehouse_id uuid, min int)
     ON CONFLICT (account_id, stock_trigger_id) DO UPDATE SET version = excluded.version, sku_id = excluded.sku_id, warehouse_id = excluded.warehouse_id, min = excluded.min,
       changed_at = CASE WHEN (t.sku_id, t.warehouse_id, t.min) IS DISTINCT FROM (excluded.sku_id, excluded.warehouse_id, excluded.min) THEN excluded.changed_at ELSE t.changed_at END
     WHERE t.version < excluded.version`,
    [json(rows)],
  );
}

/**
 * Bumps the version of each account's planning data, in the transaction that changes it (every
 * replica batch, every sales-plans batch).
 */
export { bumpAccountVersions };

/** The account's data version (0 before any write) and its account-local today, read before an answer is computed. */
export async function accountVersion(db: Db, accountId: string): Promise<{ version: bigint; today: string }> {
  const { rows } = await db.raw(
    `SELECT coalesce((SELECT version FROM account_versions WHERE account_id = :a), 0)::text AS version,
            to_char((now() AT TIME ZONE coalesce((SELECT timezone FROM accounts WHERE account_id = :a AND timezone IN (SELECT name FROM timezone_names)), 'UTC'))::date, 'YYYY-MM-DD') AS today`,
    { a: accountId },
  );
  return { version: BigInt(rows[0].version), today: rows[0].today };
}

/**
 * Keeps, of the changed_groups rows that name a group the same way (every column but changed_at),
 * only the latest: updatedSince asks only whether a group changed after a moment, which the latest
 * row answers alone, so every answer stays the same. The table then grows with the groups named,
 * not with every change (a SKU moving back and forth, a transaction updated again and again).
 * The columns are read from the table, so one added later is kept apart too. One account at a
 * time, each in a transaction of its own with COMPACT_TIMEOUT_MS (the pool's statement timeout
 * is for answers; a first compaction of a large account takes seconds: 1,000,000 rows in 6 s),
 * under a lock that another replica compacting the same account skips. Answers how many rows it
 * removed. Run hourly with the inbox's pruning (service.ts).
 */
export async function compactChangedGroups(db: Db): Promise<number> {
  const columns: { rows: { column_name: string }[] } = await db.raw(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'changed_groups' AND column_name <> 'changed_at' ORDER BY ordinal_position`,
  );
  const partition = columns.rows.map((c) => `"${c.column_name}"`).join(", ");
  // The accounts with rows, one index probe each (a loose scan of changed_groups_account_changed_at).
  const accounts: { rows: { account_id: string }[] } = await db.raw(
    `WITH RECURSIVE a AS (
       (SELECT account_id FROM changed_groups ORDER BY account_id LIMIT 1)
       UNION ALL
       SELECT (SELECT c.account_id FROM changed_groups c WHERE c.account_id > a.account_id ORDER BY c.account_id LIMIT 1) FROM a WHERE a.account_id IS NOT NULL)
     SELECT account_id FROM a WHERE account_id IS NOT NULL`,
  );
  let removed = 0;
  for (const { account_id: accountId } of accounts.rows) {
    removed += await db.transaction(async (tx) => {
      const { rows } = await tx.raw("SELECT pg_try_advisory_xact_lock(hashtextextended('planning.compact-changed-groups:' || ?, 0)) AS mine", [accountId]);
      if (!rows[0].mine) return 0;
      await tx.raw(`SET LOCAL statement_timeout = ${COMPACT_TIMEOUT_MS}`);
      const deleted = await tx.raw(
        `DELETE FROM changed_groups WHERE account_id = ? AND ctid IN (
           SELECT ctid FROM (SELECT ctid, row_number() OVER (PARTITION BY ${partition} ORDER BY changed_at DESC) AS n FROM changed_groups WHERE account_id = ?) x
           WHERE n > 1)`,
        [accountId, accountId],
      );
      return deleted.rowCount ?? 0;
    });
  }
  return removed;
}

/** The longest one account's compaction may run (compactChangedGroups). */
export const COMPACT_TIMEOUT_MS = 600_000;

/**
 * Makes timezone_names the zones this Postgres knows (migration 011 filled it from the Postgres
 * of that day; an upgrade or a restore elsewhere may bring new zones or drop old ones, and a name
 * left here that Postgres no longer knows would make every planning answer of its accounts fail
 * instead of reading UTC). Run at each start: one read of pg_timezone_names, about 40 ms.
 */
export async function refreshTimezoneNames(db: Db): Promise<void> {
  await db.raw(
    `WITH known AS (SELECT DISTINCT name FROM pg_timezone_names),
       gone AS (DELETE FROM timezone_names t WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.name = t.name))
     INSERT INTO timezone_names SELECT name FROM known ON CONFLICT DO NOTHING`,
  );
}
