import type { JsonValue } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import type { Db, Tx } from "@analytics/db";
import { copyRows, lockKeys, pageOfIds, uuidsOfSeqs, type CopyValue } from "@analytics/db";
import type { Page } from "@analytics/rpc";
import { distributionOrdersTable, purchaseOrderItemsTable, purchaseOrdersTable, type ItemRow, type ItemWrite, type OrderRow, type OrderWrite, type WrittenOrder } from "./resources";

/**
 * The orders service's SQL. Every statement is scoped by account_id, and a batch of orders is a
 * fixed handful of statements whatever its size: rows travel as one JSON parameter expanded with
 * json_to_recordset (plain json: nothing to build a jsonb of), or, for the thousands of items of
 * a purchase-order batch, with COPY.
 */

export type { Page };
export type { ItemRow, OrderRow, OrderWrite, ItemWrite, WrittenOrder };

const asJson = (rows: unknown) => JSON.stringify(rows);

/** Only one purchase-order write of an account runs at a time, so classification stays true until commit. */
export async function lockAccountOrders(tx: Tx, accountId: string): Promise<void> {
  await lockKeys(tx, [`orders.purchase_orders:${accountId}`]);
}

export interface ExistingOrder {
  id: string;
  external_po_no: string;
  api_key_id: string;
  delivery_status: number;
  content_hash: string;
}

const EXISTING = "id, external_po_no, api_key_id, delivery_status, content_hash";

/** The stored orders of these numbers: one probe of the (account_id, external_po_no) unique index. */
export async function existingByNumber(tx: Tx, accountId: string, numbers: string[]): Promise<ExistingOrder[]> {
  if (!numbers.length) return [];
  const r = await tx.raw(`SELECT ${EXISTING} FROM purchase_orders WHERE account_id = ? AND external_po_no = ANY(?::text[])`, [accountId, numbers]);
  return r.rows;
}

export async function existingById(tx: Tx, accountId: string, ids: string[]): Promise<ExistingOrder[]> {
  if (!ids.length) return [];
  const r = await tx.raw(`SELECT ${EXISTING} FROM purchase_orders WHERE account_id = ? AND id = ANY(?::uuid[])`, [accountId, ids]);
  return r.rows;
}


/**
 * Creates or replaces orders by id in one statement (the origin key of an existing order is
 * kept), then replaces their items in two more (delete those of the `replaced` orders, COPY): an
 * item keeps its id when its externalRowID stays. Nothing is read back: the orders' statement
 * returns what Postgres assigned, and item ids are chosen here. It returns while Postgres is still
 * taking the items' COPY (`itemsCopied`), so that the caller can build its messages meanwhile; the
 * transaction's next statement waits for it.
 */
export async function writeOrders(
  tx: Tx,
  accountId: string,
  orders: OrderWrite[],
  items: ItemWrite[],
  replaced: string[],
): Promise<{ written: Map<string, WrittenOrder>; itemsCopied: Promise<void> }> {
  const written = new Map<string, WrittenOrder>();
  if (!orders.length) return { written, itemsCopied: Promise.resolve() };
  const stored: { rows: { id: string; seq: string; version: number; created_at: Date; updated_at: Date }[] } = await tx.raw(
    `INSERT INTO purchase_orders (account_id, ${ORDER_WRITTEN})
     SELECT ?, ${ORDER_WRITTEN} FROM json_to_recordset(?::json) AS x(${purchaseOrdersTable.recordType})
     ON CONFLICT (id) DO UPDATE SET ${purchaseOrdersTable.updateSet},
       version = purchase_orders.version + 1, updated_at = now()
     WHERE purchase_orders.account_id = EXCLUDED.account_id
     RETURNING id, seq, version, created_at, updated_at`,
    [accountId, asJson(orders)],
  );
  for (const r of stored.rows) written.set(r.id, { seq: r.seq, version: Number(r.version), created_at: r.created_at, updated_at: r.updated_at, itemIds: [] });
  // Items of `replaced` orders are replaced: the old ones deleted (their ids kept for rows whose
  // externalRowID stays), the new ones COPYed in with those of new orders, 5,000 items of a batch
  // without a document for Postgres to expand. A new order has no items to delete.
  const old: { rows: { id: string; purchase_order_id: string; external_row_id: string | null }[] } = replaced.length
    ? await tx.raw(
        "DELETE FROM purchase_order_items WHERE account_id = ? AND purchase_order_id = ANY(?::uuid[]) RETURNING id, purchase_order_id, external_row_id",
        [accountId, replaced],
      )
    : { rows: [] };
  const kept = new Map(old.rows.filter((r) => r.external_row_id !== null).map((r) => [`${r.purchase_order_id}\u0000${r.external_row_id}`, r.id]));
  const copied = items.flatMap((i) => {
    const order = written.get(i.purchase_order_id);
    if (!order) return [];
    const id = (i.external_row_id !== null && kept.get(`${i.purchase_order_id}\u0000${i.external_row_id}`)) || randomUUID();
    order.itemIds[i.position] = id;
    return [{ id, i }];
  });
  // Each item's row is formed while the COPY runs (copyRows writes them a piece at a time).
  const row = ({ id, i }: (typeof copied)[number]) => [id, accountId, ...purchaseOrderItemsTable.columns.map((c) => i[c] as CopyValue)];
  return { written, itemsCopied: copyRows(tx, "purchase_order_items", ITEM_COLUMNS, copied, row) };
}

const ORDER_WRITTEN = purchaseOrdersTable.columns.join(", ");
const ITEM_COLUMNS = ["id", "account_id", ...purchaseOrderItemsTable.columns];

/**
 * The UUIDs of rows named by their integer id (REST `id`, their `seq`): a replace may name a
 * row by either. Ids that name no row of the account are left out.
 */
export async function uuidsOfIntegerIds(db: Db | Tx, table: "purchase_orders" | "distribution_orders" | "transactions", accountId: string, ids: string[]): Promise<Map<string, string>> {
  return uuidsOfSeqs(db, table, accountId, ids);
}

/** Orders by id (in creation order) and their items (two statements). */
export async function findOrders(db: Db | Tx, accountId: string, ids: string[]): Promise<{ orders: OrderRow[]; items: ItemRow[] }> {
  if (!ids.length) return { orders: [], items: [] };
  const orders = await db.raw(`SELECT ${purchaseOrdersTable.select()}, version FROM purchase_orders WHERE account_id = ? AND id = ANY(?::uuid[]) ORDER BY seq`, [accountId, ids]);
  const items = await db.raw(
    `SELECT purchase_order_id, ${purchaseOrderItemsTable.select()}
     FROM purchase_order_items WHERE account_id = ? AND purchase_order_id = ANY(?::uuid[]) ORDER BY purchase_order_id, position`,
    [accountId, ids],
  );
  return { orders: orders.rows, items: items.rows };
}

export interface OrderFilter {
  /** Only the orders this API key created (no `global`). */
  apiKeyId?: string;
  processing: boolean;
  orderDateFrom?: Date;
  orderDateTo?: Date;
  createdFrom?: Date;
  createdTo?: Date;
  updatedFrom?: Date;
  updatedTo?: Date;
}

function filtered(db: Db, accountId: string, f: OrderFilter) {
  const q = db("purchase_orders").where("account_id", accountId);
  if (f.apiKeyId !== undefined) q.where("api_key_id", f.apiKeyId);
  if (f.processing) q.whereIn("delivery_status", [0, 1, 5]);
  if (f.orderDateFrom) q.where("order_date", ">=", f.orderDateFrom);
  if (f.orderDateTo) q.where("order_date", "<", f.orderDateTo);
  if (f.createdFrom) q.where("created_at", ">=", f.createdFrom);
  if (f.createdTo) q.where("created_at", "<", f.createdTo);
  if (f.updatedFrom) q.where("updated_at", ">=", f.updatedFrom);
  if (f.updatedTo) q.where("updated_at", "<", f.updatedTo);
  return q;
}

/** One page in creation order and the filtered total (libs/db pageOfIds). */
export async function listOrders(db: Db, accountId: string, f: OrderFilter, page: Page) {
  const ids: { id: string }[] = await pageOfIds(filtered(db, accountId, f), page);
  const [found, [{ count }]] = await Promise.all([
    findOrders(db, accountId, ids.map((r) => r.id)),
    filtered(db, accountId, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { ...found, total: Number(count) };
}

/** The id of an order by its number, or of the latest created one (number undefined). */
export async function findOrderId(db: Db, accountId: string, number: string | undefined, apiKeyId: string | undefined): Promise<string | undefined> {
  const q = db("purchase_orders").select("id").where("account_id", accountId);
  if (apiKeyId !== undefined) q.where("api_key_id", apiKeyId);
  if (number !== undefined) q.where("external_po_no", number);
  else q.orderBy("seq", "desc").limit(1);
  const [row] = await q;
  return row?.id;
}

// ---------------------------------------------------------------------------------------------
// Distribution orders: rows keyed by (external_doid, external_row_id); `status` is a generated
// column (migration 002). A row sent as stored (every written column equal, attributes compared
// as JSON values) is left alone.

const DO = distributionOrdersTable;
/** The columns a write sets: every written field's but the id. */
const DO_WRITTEN = DO.columns.filter((c) => c !== "id");
const DO_SELECT = `${DO.select()}, version`;
const doSelectOf = (t: string) => `${DO.select(t)}, ${t}.version`;
/** True when the stored row `t` differs from the sent row `x` in a written column. */
const doDiffers = (t: string, x: string) => `(${DO_WRITTEN.map((c) => `${t}.${c}`).join(", ")}) IS DISTINCT FROM (${DO_WRITTEN.map((c) => `${x}.${c}`).join(", ")})`;

export type DoRow = Record<string, unknown> & { id: string; external_doid: string; external_row_id: string; version: number };
/** A row to write: its id and its written columns. */
export type DoWrite = Record<string, unknown> & { id: string };

/** A page of every account's rows in (account, creation) order, after `after` (the last row of the previous page): for re-announcing them all. */
export async function distributionOrdersPage(db: Db | Tx, after: { account_id: string; seq: string } | undefined, limit: number): Promise<(DoRow & { account_id: string; seq: string })[]> {
  const { rows } = await db.raw(
    `SELECT account_id, seq, ${DO_SELECT} FROM distribution_orders
     WHERE (account_id, seq) > (?::uuid, ?::bigint) ORDER BY account_id, seq LIMIT ?`,
    [after?.account_id ?? "00000000-0000-0000-0000-000000000000", after?.seq ?? "-1", limit],
  );
  return rows;
}

/** Creates or updates rows by (external_doid, external_row_id); returns those written. */
export async function upsertDistributionOrders(tx: Tx, accountId: string, rows: DoWrite[]): Promise<(DoRow & { created: boolean })[]> {
  const { rows: written } = await tx.raw(
    `INSERT INTO distribution_orders (account_id, ${DO.columns.join(", ")})
     SELECT ?, ${DO.columns.join(", ")} FROM jsonb_to_recordset(?::jsonb) AS x(${DO.recordType})
     ON CONFLICT (account_id, external_doid, external_row_id) DO UPDATE SET
       ${DO.updateSet}, version = distribution_orders.version + 1, updated_at = now()
     WHERE ${doDiffers("distribution_orders", "EXCLUDED")}
     RETURNING ${DO_SELECT}, (xmax = 0) AS created`,
    [accountId, asJson(rows)],
  );
  return written;
}

/** Updates rows by id, unless their (external_doid, external_row_id) is another row's; returns those written. */
export async function replaceDistributionOrders(tx: Tx, accountId: string, rows: DoWrite[]): Promise<(DoRow & { created: boolean })[]> {
  const { rows: written } = await tx.raw(
    `UPDATE distribution_orders t SET ${DO_WRITTEN.map((c) => `${c} = x.${c}`).join(", ")}, version = t.version + 1, updated_at = now()
     FROM jsonb_to_recordset(?::jsonb) AS x(${DO.recordType})
     WHERE t.account_id = ? AND t.id = x.id AND ${doDiffers("t", "x")}
       AND NOT EXISTS (SELECT 1 FROM distribution_orders o WHERE o.account_id = t.account_id
         AND o.external_doid = x.external_doid AND o.external_row_id = x.external_row_id AND o.id <> t.id)
     RETURNING ${doSelectOf("t")}, false AS created`,
    [asJson(rows), accountId],
  );
  return written;
}

/** The stored rows of these keys (and, `byId`, of these ids too). */
export async function storedDistributionOrders(tx: Tx, accountId: string, keys: { id: string; external_doid: string; external_row_id: string }[], byId: boolean): Promise<DoRow[]> {
  const { rows } = await tx.raw(
    `SELECT ${doSelectOf("t")} FROM distribution_orders t
     JOIN jsonb_to_recordset(?::jsonb) AS x(id uuid, external_doid text, external_row_id text)
       ON t.external_doid = x.external_doid AND t.external_row_id = x.external_row_id${byId ? " AND t.id = x.id" : ""}
     WHERE t.account_id = ?`,
    [asJson(keys.map((r) => ({ id: r.id, external_doid: r.external_doid, external_row_id: r.external_row_id }))), accountId],
  );
  return rows;
}

/** One page in creation order (of one status, when given) and the filtered total. */
export async function listDistributionOrders(db: Db, accountId: string, status: string, page: Page) {
  const filtered = () => {
    const q = db("distribution_orders").where("account_id", accountId);
    if (status) q.where("status", status);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    db("distribution_orders").select(db.raw(DO_SELECT)).where("account_id", accountId).whereIn("id", pageOfIds(filtered(), page)).orderBy("seq") as Promise<DoRow[]>,
    filtered().count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

/** External ids with at least one row neither COMPLETED nor CANCELLED, in order of their first row. */
export async function listProcessingDistributionOrders(db: Db, accountId: string, page: Page) {
  const open = `SELECT external_doid, min(seq) AS first FROM distribution_orders
    WHERE account_id = ? AND status NOT IN ('COMPLETED', 'CANCELLED') GROUP BY external_doid`;
  const [rows, counted] = await Promise.all([
    db.raw(`${open} ORDER BY first LIMIT ? OFFSET ?`, [accountId, page.pageSize, (page.page - 1) * page.pageSize]),
    db.raw(`SELECT count(*) AS count FROM (${open}) o`, [accountId]),
  ]);
  return { ids: (rows.rows as { external_doid: string }[]).map((r) => r.external_doid), total: Number(counted.rows[0].count) };
}

export async function findDistributionOrder(db: Db | Tx, accountId: string, externalDoid: string): Promise<DoRow[]> {
  return db("distribution_orders").select(db.raw(DO_SELECT)).where({ account_id: accountId, external_doid: externalDoid }).orderBy("seq");
}

// ---------------------------------------------------------------------------------------------
// Transactions: one row each with the transaction as proto JSON (`body`), shipments per item in
// rows of their own. A write locks what it reads (the account's advisory lock, then the rows FOR
// UPDATE, as a shipment post does) so shipped totals stay true until it commits.

export interface TransactionRow {
  id: string;
  seq: string;
  external_transaction_id: string;
  body: JsonValue;
  version: number;
  created_at: Date;
  updated_at: Date;
}
export interface ShipmentRow {
  transaction_id: string;
  external_item_id: string;
  body: JsonValue;
}
/** A transaction to store under its id. */
export interface TransactionWrite {
  id: string;
  ext: string;
  body: JsonValue;
}

const TX_SELECT = "id, seq, external_transaction_id, body, version, created_at, updated_at";

/** A page of every account's transactions in (account, creation) order, after `after` (the last row of the previous page): for re-announcing them all. */
export async function transactionsPage(db: Db | Tx, after: { account_id: string; seq: string } | undefined, limit: number): Promise<(TransactionRow & { account_id: string })[]> {
  const { rows } = await db.raw(
    `SELECT account_id, ${TX_SELECT} FROM transactions
     WHERE (account_id, seq) > (?::uuid, ?::bigint) ORDER BY account_id, seq LIMIT ?`,
    [after?.account_id ?? "00000000-0000-0000-0000-000000000000", after?.seq ?? "-1", limit],
  );
  return rows;
}

/** The shipments of these transactions, whatever their accounts. */
export async function shipmentsOfTransactions(db: Db | Tx, ids: string[]): Promise<ShipmentRow[]> {
  if (!ids.length) return [];
  return (await db.raw("SELECT transaction_id, external_item_id, body FROM shipments WHERE transaction_id = ANY(?::uuid[]) ORDER BY seq", [ids])).rows;
}

/** Only one transaction write of an account runs at a time: what it classifies by stays true until it commits. */
export async function lockAccountTransactions(tx: Tx, accountId: string): Promise<void> {
  await lockKeys(tx, [`orders.transactions:${accountId}`]);
}

/** The stored transactions of these externalTransactionIDs, row-locked. */
export async function lockTransactionsByExternalId(tx: Tx, accountId: string, externalIds: string[]): Promise<{ id: string; external_transaction_id: string }[]> {
  const r = await tx.raw("SELECT id, external_transaction_id FROM transactions WHERE account_id = ? AND external_transaction_id = ANY(?::text[]) ORDER BY id FOR UPDATE", [accountId, externalIds]);
  return r.rows;
}

/** Which of these ids are stored transactions of the account, row-locked. */
export async function lockTransactionsById(tx: Tx, accountId: string, ids: string[]): Promise<string[]> {
  const r = await tx.raw("SELECT id FROM transactions WHERE account_id = ? AND id = ANY(?::uuid[]) ORDER BY id FOR UPDATE", [accountId, ids]);
  return r.rows.map((row: { id: string }) => row.id);
}

/** What each item of these transactions has shipped, by `transactionId/externalItemId`. */
export async function shippedTotals(tx: Tx, accountId: string, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const r = await tx.raw(
    "SELECT transaction_id, external_item_id, sum(quantity)::int AS shipped FROM shipments WHERE account_id = ? AND transaction_id = ANY(?::uuid[]) GROUP BY transaction_id, external_item_id",
    [accountId, ids],
  );
  return new Map(r.rows.map((x: { transaction_id: string; external_item_id: string; shipped: number }) => [`${x.transaction_id}/${x.external_item_id}`, x.shipped]));
}

/** The shipments of these transactions in the order they were posted. */
export async function shipmentsOf(db: Db | Tx, accountId: string, ids: string[]): Promise<ShipmentRow[]> {
  if (!ids.length) return [];
  const r = await db.raw("SELECT transaction_id, external_item_id, body FROM shipments WHERE account_id = ? AND transaction_id = ANY(?::uuid[]) ORDER BY seq", [accountId, ids]);
  return r.rows;
}

/**
 * Inserts or replaces transactions in one statement; one stored with the same body (compared as
 * JSON values) is left alone. Returns the rows it wrote.
 */
export async function upsertTransactions(tx: Tx, accountId: string, writes: TransactionWrite[]): Promise<(TransactionRow & { created: boolean })[]> {
  const r = await tx.raw(
    `INSERT INTO transactions (id, account_id, external_transaction_id, body)
       SELECT id, ?, ext, body FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, ext text, body jsonb)
       ON CONFLICT (id) DO UPDATE SET external_transaction_id = EXCLUDED.external_transaction_id, body = EXCLUDED.body,
         version = transactions.version + 1, updated_at = now()
       WHERE transactions.account_id = EXCLUDED.account_id
         AND (transactions.external_transaction_id, transactions.body) IS DISTINCT FROM (EXCLUDED.external_transaction_id, EXCLUDED.body)
       RETURNING ${TX_SELECT}, (xmax = 0) AS created`,
    [accountId, JSON.stringify(writes.map(({ id, ext, body }) => ({ id, ext, body })))],
  );
  return r.rows;
}

/** Transactions by id. */
export async function transactionsById(tx: Tx, accountId: string, ids: string[]): Promise<TransactionRow[]> {
  return (await tx.raw(`SELECT ${TX_SELECT} FROM transactions WHERE account_id = ? AND id = ANY(?::uuid[])`, [accountId, ids])).rows;
}

/** Deletes the shipments of items a write removed: of each transaction, those not among `items`. */
export async function deleteShipmentsOfRemovedItems(tx: Tx, accountId: string, kept: { id: string; items: string[] }[]): Promise<void> {
  if (!kept.length) return;
  await tx.raw(
    `DELETE FROM shipments s USING jsonb_to_recordset(?::jsonb) AS x(id uuid, items text[])
         WHERE s.account_id = ? AND s.transaction_id = x.id AND NOT (s.external_item_id = ANY(x.items))`,
    [JSON.stringify(kept), accountId],
  );
}

/** One page in creation order and the total. */
export async function listTransactionRows(db: Db, accountId: string, page: Page): Promise<{ rows: TransactionRow[]; total: number }> {
  const filtered = () => db("transactions").where("account_id", accountId);
  const [rows, [{ count }]] = await Promise.all([
    db("transactions").select(db.raw(TX_SELECT)).where("account_id", accountId).whereIn("id", pageOfIds(filtered(), page)).orderBy("seq") as Promise<TransactionRow[]>,
    filtered().count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

/** By externalTransactionID, or the latest created when `externalId` is empty. */
export async function findTransactionRow(db: Db, accountId: string, externalId: string): Promise<TransactionRow | undefined> {
  const q = db("transactions").select(db.raw(TX_SELECT)).where("account_id", accountId);
  const [row]: TransactionRow[] = await (externalId ? q.where("external_transaction_id", externalId) : q.orderBy("seq", "desc").limit(1));
  return row;
}

/** A transaction by externalTransactionID, row-locked: concurrent shipment posts and writes of it take turns. */
export async function lockTransaction(tx: Tx, accountId: string, externalId: string): Promise<TransactionRow | undefined> {
  const [row]: TransactionRow[] = (await tx.raw(`SELECT ${TX_SELECT} FROM transactions WHERE account_id = ? AND external_transaction_id = ? FOR UPDATE`, [accountId, externalId])).rows;
  return row;
}

/** Adds shipments (proto JSON) to one item of a transaction. */
export async function insertShipments(tx: Tx, accountId: string, transactionId: string, itemId: string, bodies: JsonValue[]): Promise<void> {
  await tx.raw(
    `INSERT INTO shipments (account_id, transaction_id, external_item_id, body, quantity)
     SELECT ?, ?, ?, body, (body->>'quantity')::int FROM jsonb_array_elements(?::jsonb) AS body`,
    [accountId, transactionId, itemId, JSON.stringify(bodies)],
  );
}

/** A new version of a transaction whose shipments changed. */
export async function bumpTransactionVersion(tx: Tx, id: string): Promise<TransactionRow> {
  const [row]: TransactionRow[] = (await tx.raw(`UPDATE transactions SET version = version + 1, updated_at = now() WHERE id = ? RETURNING ${TX_SELECT}`, [id])).rows;
  return row;
}
