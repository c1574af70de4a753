import { randomUUID } from "node:crypto";
import { equals, fromJson, toBinary, toJson, type JsonValue } from "@bufbuild/protobuf";
import { isCurrencyCode, ordersV1, topics } from "@analytics/contracts";
import { fieldViolations, isUuid, type Db, type Tx } from "@analytics/db";
import { conflict, invalid, notFound, type FieldViolation } from "@analytics/errors";
import { announcedSizeProblem, enqueue, enqueueInPages, MAX_ANNOUNCED_RESOURCE_BYTES } from "@analytics/outbox";
import { commit, itemOutcome, refuseDuplicates, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import type { Page, ShipmentRow, TransactionRow as StoredRow } from "./repository";
import { ORDER_DATE_SECONDS } from "./resources";
import { changedTopic, fromStored, transactionChanged } from "./transaction-changed";
import { violationMessage } from "./validation";

/**
 * Transactions (sales and returns) with their items and statements, stored as proto JSON, and
 * shipments per item in rows of their own. A write is a fixed handful of statements whatever the
 * number of transactions; one re-sent with the same body is left alone (no update, no message).
 * A shipment post and a write lock the transaction's row before they read what is shipped, so
 * an item's shipped total never exceeds its quantity, also when posts and replaces race: a write
 * that would leave an item below what it has shipped is that transaction's 400, and an item a
 * write removes loses its shipments. A shipment re-posted with its shipmentID and the same values
 * is a replay, not added again.
 */

const { ShipmentSchema, TransactionItemSchema, TransactionSchema, TransactionStatementSchema, WriteMode } = ordersV1;
export type Transaction = ordersV1.Transaction;
const REFERENCE = "externalTransactionID";

/**
 * What is stored of a transaction: everything sent, without read-only fields (left out of its
 * JSON, where an unset field is absent: the same as clearing them, without a copy of the message).
 */
export function bodyOf(t: Transaction): JsonValue {
  const body = toJson(TransactionSchema, t) as { [k: string]: JsonValue } & { items?: { shipments?: JsonValue }[] };
  delete body.id;
  delete body.seq;
  delete body.createdAt;
  delete body.updatedAt;
  for (const item of body.items ?? []) delete item.shipments;
  return body;
}

/**
 * A transaction's field problems: its messages' rules (the proto), unique item ids, a known
 * currency and a size that can be announced. `sizeAtMost` (the bytes it arrived in with others)
 * spares encoding it to learn its size when that bound is already small enough.
 */
function violations(t: Transaction, replace: boolean, sizeAtMost = Infinity): FieldViolation[] {
  const out = fieldViolations(TransactionSchema, t, "", ORDER_DATE_SECONDS);
  if (replace && !t.id) out.unshift({ path: "id", message: "is required" });
  if (t.currencyCode && !isCurrencyCode(t.currencyCode)) out.push({ path: "currencyCode", message: "must be an ISO 4217 currency code (e.g. SEK)" });
  const ids = new Set<string>();
  t.items.forEach((item, i) => {
    out.push(...fieldViolations(TransactionItemSchema, item, `items[${i}]`, ORDER_DATE_SECONDS));
    if (ids.has(item.externalItemId)) out.push({ path: `items[${i}].externalItemID`, message: "must be unique within the transaction" });
    ids.add(item.externalItemId);
  });
  t.statements.forEach((s, i) => out.push(...fieldViolations(TransactionStatementSchema, s, `statements[${i}]`, ORDER_DATE_SECONDS)));
  const tooLarge = out.length || sizeAtMost <= MAX_ANNOUNCED_RESOURCE_BYTES ? undefined : announcedSizeProblem(toBinary(TransactionSchema, t).length, "transaction");
  if (tooLarge) out.push(tooLarge);
  return out;
}

export type TxOutcome = ItemOutcome<Transaction>;

export const answer = (statusCode: number, reference: string, message: string, v: FieldViolation[] = []): TxOutcome => itemOutcome(statusCode, reference, REFERENCE, message, v);

const announce = (accountId: string, rows: (StoredRow & { created?: boolean })[], shipments: ShipmentRow[]) =>
  rows.map((r) => transactionChanged(changedTopic(!!r.created), accountId, r, shipments));

/**
 * Re-announces every stored transaction, as it is, on analytics.orders.transaction.backfilled
 * (planning's replica reads it; it is no change for anyone else), `pageSize` at a time: the
 * transactions written before planning read them reach it, the stream having forgotten them.
 * Answers how many it announced.
 */
export async function announceStoredTransactions(db: Db | Tx, pageSize = 500): Promise<number> {
  return enqueueInPages(
    db,
    (last: (StoredRow & { account_id: string }) | undefined) => repo.transactionsPage(db, last, pageSize),
    async (rows) => {
      const shipments = await repo.shipmentsOfTransactions(db, rows.map((r) => r.id));
      return rows.map((r) => transactionChanged(topics.ordersTransactionBackfilled, r.account_id, r, shipments));
    },
  );
}

type Checked = { i: number; t: Transaction };
type Existing = { byExt: Map<string, { id: string }>; byId: Set<string> };
type TxWrite = { i: number; id: string; body: JsonValue; ext: string; items: string[] };
type WrittenRow = StoredRow & { created: boolean; unchanged?: boolean };

/** Create (CREATE), replace by id (REPLACE), or create or replace by externalTransactionID (UPSERT). */
export async function writeTransactions(ctx: ServiceContext, accountId: string, inputs: Transaction[], mode: ordersV1.WriteMode): Promise<TxOutcome[]> {
  const { outcomes, valid } = checkTransactions(inputs, mode === WriteMode.REPLACE);
  if (!valid.length) return outcomes as TxOutcome[];
  const done = await commit(
    ctx,
    async (tx) => {
      // One write of the account's transactions at a time: what it classifies by stays true until it commits.
      await repo.lockAccountTransactions(tx, accountId);
      const existing = await lockExisting(tx, accountId, valid, mode === WriteMode.REPLACE);
      const shipped = await repo.shippedTotals(tx, accountId, [...new Set([...[...existing.byExt.values()].map((e) => e.id), ...existing.byId])]);
      const { replies, writes } = classifyTransactions(valid, existing, shipped, mode);
      if (!writes.length) return { replies, rows: new Map<string, WrittenRow>(), shipments: [] as ShipmentRow[], writes };
      const { written, rows } = await storeTransactions(tx, accountId, writes);
      await dropRemovedShipments(tx, accountId, writes, rows);
      const shipments = await repo.shipmentsOf(tx, accountId, [...rows.keys()]);
      await enqueue(tx, announce(accountId, written, shipments));
      return { replies, rows, shipments, writes };
    },
    (done) => done.writes.some((w) => !done.rows.get(w.id)?.unchanged),
  );
  for (const [i, o] of done.replies) outcomes[i] = o;
  for (const w of done.writes) {
    const r = done.rows.get(w.id);
    if (!r) outcomes[w.i] = answer(500, w.ext, "not written");
    else outcomes[w.i] = { ...answer(r.created ? 201 : 200, w.ext, r.created ? "created" : r.unchanged ? "unchanged" : "updated"), value: fromStored(r, done.shipments) };
  }
  return outcomes as TxOutcome[];
}

/**
 * Each transaction alone, then its externalTransactionID once per request: its 400 or 409 in
 * `outcomes`, or undefined there when it may be written (it is then among `valid`).
 */
export function checkTransactions(inputs: Transaction[], replace: boolean, sizeAtMost?: number): { outcomes: (TxOutcome | undefined)[]; valid: Checked[] } {
  const outcomes: (TxOutcome | undefined)[] = inputs.map((t) => {
    const v = violations(t, replace, sizeAtMost);
    return v.length ? answer(400, t.externalTransactionId, violationMessage(v), v) : undefined;
  });
  refuseDuplicates(inputs, outcomes, (t) => t.externalTransactionId, (t) => answer(409, t.externalTransactionId, "externalTransactionID appears more than once in the request"));
  return { outcomes, valid: inputs.flatMap((t, i) => (outcomes[i] ? [] : [{ i, t }])) };
}

/**
 * The stored transactions of the request's externalTransactionIDs (and, replacing, ids), with row
 * locks (FOR UPDATE) as a shipment post takes: the shipped totals read next stay true until this
 * write commits.
 */
async function lockExisting(tx: Tx, accountId: string, valid: Checked[], replace: boolean): Promise<Existing> {
  const byExt = new Map<string, { id: string }>(
    (await repo.lockTransactionsByExternalId(tx, accountId, valid.map((v) => v.t.externalTransactionId))).map((r) => [r.external_transaction_id, r]),
  );
  const byId = new Set<string>(replace ? await repo.lockTransactionsById(tx, accountId, valid.map((v) => v.t.id).filter(isUuid)) : []);
  return { byExt, byId };
}

/**
 * Each valid transaction against what exists: refused (an unknown id or another's
 * externalTransactionID when replacing, an existing one on create, an item below what it has
 * shipped) or a write under its stored id (a new one when created).
 */
function classifyTransactions(valid: Checked[], existing: Existing, shipped: Map<string, number>, mode: ordersV1.WriteMode) {
  const replies = new Map<number, TxOutcome>();
  const writes: TxWrite[] = [];
  for (const { i, t } of valid) {
    const ref = t.externalTransactionId;
    const stored = existing.byExt.get(ref);
    let id: string;
    if (mode === WriteMode.REPLACE) {
      if (!existing.byId.has(t.id)) {
        replies.set(i, answer(404, ref, `transaction ${t.id} not found`));
        continue;
      }
      if (stored && stored.id !== t.id) {
        replies.set(i, answer(409, ref, `another transaction has externalTransactionID ${ref}`));
        continue;
      }
      id = t.id;
    } else {
      if (stored && mode === WriteMode.CREATE) {
        replies.set(i, answer(409, ref, `transaction ${ref} already exists`));
        continue;
      }
      id = stored?.id ?? randomUUID();
    }
    const short = belowShipped(shipped, id, t);
    if (short) replies.set(i, short);
    else writes.push({ i, id, body: bodyOf(t), ext: ref, items: t.items.map((item) => item.externalItemId) });
  }
  return { replies, writes };
}

/** The first item the transaction would leave below what it has shipped, as a 400. */
export function belowShipped(shipped: Map<string, number>, id: string, t: Transaction): TxOutcome | undefined {
  const i = t.items.findIndex((item) => item.quantity < (shipped.get(`${id}/${item.externalItemId}`) ?? 0));
  if (i < 0) return undefined;
  const message = `must be at least the ${shipped.get(`${id}/${t.items[i].externalItemId}`)} already shipped`;
  return answer(400, t.externalTransactionId, `items[${i}].quantity ${message}`, [{ path: `items[${i}].quantity`, message }]);
}

/**
 * Inserts or replaces the transactions in one statement. One stored with the same body (compared
 * as JSON values) is left alone by it: read, marked unchanged, and not announced (`written` holds
 * only the rows the statement wrote).
 */
async function storeTransactions(tx: Tx, accountId: string, writes: TxWrite[]) {
  const written = await repo.upsertTransactions(tx, accountId, writes);
  const rows = new Map<string, WrittenRow>(written.map((r) => [r.id, r]));
  const untouched = writes.filter((w) => !rows.has(w.id)).map((w) => w.id);
  if (untouched.length) {
    for (const r of await repo.transactionsById(tx, accountId, untouched)) rows.set(r.id, { ...r, created: false, unchanged: true });
  }
  return { written, rows };
}

/** An item a write removed takes its shipments with it (a created transaction has none). */
async function dropRemovedShipments(tx: Tx, accountId: string, writes: TxWrite[], rows: Map<string, WrittenRow>) {
  const changed = writes.filter((w) => rows.get(w.id) && !rows.get(w.id)!.created && !rows.get(w.id)!.unchanged);
  await repo.deleteShipmentsOfRemovedItems(tx, accountId, changed.map((w) => ({ id: w.id, items: w.items })));
}

export async function listTransactions(db: Db, accountId: string, page: Page) {
  const { rows, total } = await repo.listTransactionRows(db, accountId, page);
  const shipments = await repo.shipmentsOf(db, accountId, rows.map((r) => r.id));
  return { transactions: rows.map((r) => fromStored(r, shipments)), total };
}

/** By externalTransactionID, or the latest created when `externalId` is empty. */
export async function getTransaction(db: Db, accountId: string, externalId: string): Promise<Transaction> {
  const row = await repo.findTransactionRow(db, accountId, externalId);
  if (!row) throw notFound(externalId ? `transaction ${externalId} not found` : "no transaction yet");
  return fromStored(row, await repo.shipmentsOf(db, accountId, [row.id]));
}

/**
 * Adds shipments to one item; the item's shipped total may not exceed its quantity (400). A
 * shipment whose shipmentID the item already has is a replay: with the same values it is not
 * added again (a client's retry ships nothing twice), with other values it is a 409.
 */
export async function addShipments(ctx: ServiceContext, accountId: string, externalId: string, itemId: string, shipments: ordersV1.Shipment[]): Promise<{ transaction: Transaction; added: number }> {
  if (!shipments.length) throw invalid("at least one shipment is required", [{ path: "", message: "at least one shipment" }]);
  // The first problem in order: a shipment's own, or its shipmentID an earlier one's.
  const problems = shipments.map((s, i) => fieldViolations(ShipmentSchema, s, `[${i}]`, ORDER_DATE_SECONDS)[0]);
  refuseDuplicates(shipments, problems, (s) => s.shipmentId ?? [], (_, i) => ({ path: `[${i}].shipmentID`, message: "appears more than once in the request" }));
  const problem = problems.find((p) => p !== undefined);
  if (problem) throw invalid(`${problem.path} ${problem.message}`, [problem]);
  return commit(ctx, (tx) => shipItem(tx, accountId, externalId, itemId, shipments), (result) => result.added > 0);
}

/** The shipment post itself, under the transaction's row lock. */
async function shipItem(tx: Tx, accountId: string, externalId: string, itemId: string, shipments: ordersV1.Shipment[]): Promise<{ transaction: Transaction; added: number }> {
  // The transaction's row lock orders concurrent shipment posts and writes of one transaction.
  const row = await repo.lockTransaction(tx, accountId, externalId);
  if (!row) throw notFound(`transaction ${externalId} not found`);
  const item = fromStored(row, []).items.find((i) => i.externalItemId === itemId);
  if (!item) throw notFound(`transaction ${externalId} has no item ${itemId}`);
  const stored = (await repo.shipmentsOf(tx, accountId, [row.id])).filter((s) => s.external_item_id === itemId).map((s) => fromJson(ShipmentSchema, s.body));
  const byId = new Map(stored.filter((s) => s.shipmentId !== undefined).map((s) => [s.shipmentId!, s]));
  const adding = shipments.filter((s, i) => {
    const before = s.shipmentId === undefined ? undefined : byId.get(s.shipmentId);
    if (!before) return true;
    if (equals(ShipmentSchema, before, s)) return false;
    throw conflict(`[${i}].shipmentID ${s.shipmentId} was shipped with other values`);
  });
  if (!adding.length) return { transaction: fromStored(row, await repo.shipmentsOf(tx, accountId, [row.id])), added: 0 };
  const shipped = stored.reduce((sum, s) => sum + s.quantity, 0);
  const more = adding.reduce((sum, s) => sum + s.quantity, 0);
  if (shipped + more > item.quantity) {
    const message = `shipped total ${shipped + more} would exceed the item's quantity ${item.quantity} (${shipped} shipped)`;
    throw invalid(message, [{ path: "quantity", message }]);
  }
  await repo.insertShipments(tx, accountId, row.id, itemId, adding.map((s) => toJson(ShipmentSchema, s)));
  const updated = await repo.bumpTransactionVersion(tx, row.id);
  const all = await repo.shipmentsOf(tx, accountId, [row.id]);
  await enqueue(tx, announce(accountId, [updated], all));
  return { transaction: fromStored(updated, all), added: adding.length };
}
