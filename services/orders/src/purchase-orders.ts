import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ordersV1, topics } from "@analytics/contracts";
import { isUuid, type Db, type Tx } from "@analytics/db";
import { notFound, type FieldViolation } from "@analytics/errors";
import { encodeEntries, encodeEntry, enqueueEncoded, MAX_OUTBOX_MESSAGE_BYTES, outboxEntry, type EncodedEntry } from "@analytics/outbox";
import type { Caller } from "@analytics/auth";
import { commit, itemOutcome, refuseDuplicates, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import { orderColumns, purchaseOrderFromRows, purchaseOrderFromWrite, purchaseOrderViolations, type PurchaseOrder } from "./resources";
import { violationMessage } from "./validation";

const { WriteMode } = ordersV1;
const DRAFT = 4;
const REFERENCE = "externalPONo";
/** Orders whose messages are built and encoded between two looks at the sockets (see writePurchaseOrders). */
const ENCODED_PER_SLICE = 50;

export type Outcome = ItemOutcome<PurchaseOrder>;

const answer = (statusCode: number, reference: string, message: string, violations: FieldViolation[] = []): Outcome => itemOutcome(statusCode, reference, REFERENCE, message, violations);

/** The orders of stored rows, by id. */
async function readBack(db: Db | Tx, accountId: string, ids: string[]): Promise<Map<string, { order: PurchaseOrder; version: number }>> {
  const { orders, items } = await repo.findOrders(db, accountId, ids);
  const byOrder = new Map<string, repo.ItemRow[]>();
  for (const i of items) byOrder.set(i.purchase_order_id, [...(byOrder.get(i.purchase_order_id) ?? []), i]);
  return new Map(orders.map((o) => [o.id, { order: purchaseOrderFromRows(o, byOrder.get(o.id) ?? []), version: o.version }]));
}

/**
 * The planning message of an order after a change, from the columns written and what Postgres
 * assigned; `full` builds the order as GET answers it, needed only for a draft's queue payload.
 */
function changedMessage(accountId: string, id: string, columns: { order: repo.OrderWrite; items: repo.ItemWrite[] }, written: repo.WrittenOrder, wasDraft: boolean, full: () => PurchaseOrder) {
  const { order, items } = columns;
  const version = BigInt(written.version);
  const isDraft = order.delivery_status === DRAFT;
  const lines = items.map((i, position) => ({
    itemId: written.itemIds[position],
    skuId: i.sku_id,
    externalWarehouseId: i.external_warehouse_id ?? order.external_warehouse_id ?? "",
    // Dates are written as ISO UTC timestamps: the day is their first ten characters.
    deliveryDate: (i.delivery_date ?? order.delivery_date ?? "").slice(0, 10),
    quantity: i.quantity,
    openQuantity: Math.max(0, i.quantity - i.delivered_quantity),
    deliveryStatus: order.delivery_status,
    version,
  }));
  return {
    accountId,
    purchaseOrderId: id,
    version,
    externalPoNo: order.external_po_no,
    deliveryStatus: order.delivery_status,
    wasDraft,
    isDraft,
    lines,
    updatedAt: timestampFromDate(written.updated_at),
    // The queue's payload, carried only when the change is an event on it (a draft, was one, or
    // leaves draft): planning needs the lines alone, and the messages stay small.
    purchaseOrder: wasDraft || isDraft ? full() : undefined,
  };
}

type Columns = ReturnType<typeof orderColumns>;

/** A written order's outbox entry; `full` builds the order a draft's message carries. */
function announcement(accountId: string, id: string, created: boolean, wasDraft: boolean, columns: Columns, assigned: repo.WrittenOrder, full: () => PurchaseOrder) {
  const topic = created ? topics.ordersPurchaseOrderCreated : topics.ordersPurchaseOrderUpdated;
  return outboxEntry(topic, accountId, id, changedMessage(accountId, id, columns, assigned, wasDraft, full));
}

/** What Postgres assigns to a written order, each as large as it can be encoded. */
const LARGEST_ASSIGNED = { seq: String(Number.MAX_SAFE_INTEGER), version: Number.MAX_SAFE_INTEGER, created_at: new Date(Date.UTC(2105, 11, 31, 23, 59, 59, 999)), updated_at: new Date(Date.UTC(2105, 11, 31, 23, 59, 59, 999)) };

/**
 * The size of an order's message when it is over what the bus carries, else undefined. Its
 * lines repeat the SKU and warehouse of every item, and a draft's carries the whole order; a
 * bound from the content's JSON (protobuf takes at most 6 bytes per JSON character, a Struct's
 * list of small numbers being the worst) spares the exact encoding to all but very large orders.
 */
function tooLargeToAnnounce(accountId: string, id: string, columns: Columns, wasDraft: boolean): number | undefined {
  const { order, items } = columns;
  let bound = 1024 + 6 * columns.contentLength;
  for (const i of items) bound += 128 + 3 * (i.sku_id.length + (i.external_warehouse_id ?? order.external_warehouse_id ?? "").length);
  if (bound <= MAX_OUTBOX_MESSAGE_BYTES) return undefined;
  const assigned = { ...LARGEST_ASSIGNED, itemIds: items.map(() => randomUUID()) };
  const size = encodeEntry(announcement(accountId, id, false, wasDraft, columns, assigned, () => purchaseOrderFromWrite(order, items, assigned))).length;
  return size > MAX_OUTBOX_MESSAGE_BYTES ? size : undefined;
}

/**
 * Milliseconds between named points of a long write, logged at debug (the po-batch bench --steps
 * reads them): checked, classified (lock, existing orders, columns and content hashes), written
 * (orders and items, the messages built and encoded meanwhile), announced (outbox), committed.
 */
function stepTimes() {
  const ms: Record<string, number> = {};
  let last = performance.now();
  return {
    ms,
    mark(step: string) {
      const now = performance.now();
      ms[step] = Math.round(now - last);
      last = now;
    },
  };
}

type Checked = { i: number; po: PurchaseOrder };
type Existing = { byNumber: Map<string, repo.ExistingOrder>; byId: Map<string, repo.ExistingOrder> };
type Write = { i: number; id: string; created: boolean; wasDraft: boolean; columns: Columns };
type Unchanged = { i: number; id: string };
type Stored = Map<string, { order: PurchaseOrder; version: number }>;

/**
 * POST /purchaseorders (create), PUT /purchaseorders/ (replace by id), POST /purchaseorders/batch
 * (create or replace by externalPONo). Each order is checked alone; the valid ones are written
 * together in one transaction with their outbox rows, a fixed handful of statements whatever the
 * batch size: lock, read what exists, write orders, replace items (both returning what Postgres
 * assigned, so nothing is read back), enqueue. An order re-sent unchanged is answered 200 and
 * neither written nor announced. `atomic`: when any order fails, nothing is written.
 */
export async function writePurchaseOrders(
  ctx: ServiceContext,
  caller: Caller,
  inputs: PurchaseOrder[],
  mode: ordersV1.WriteMode,
  global: boolean,
  atomic: boolean,
  resultsOnly = false,
): Promise<Outcome[]> {
  const { accountId } = caller;
  const steps = stepTimes();
  const outcomes = checkOrders(inputs, mode);
  if (atomic && outcomes.some((o) => o)) return outcomes.map((o, i) => o ?? answer(0, inputs[i].externalPoNo, "not written"));
  const valid = inputs.flatMap((po, i) => (outcomes[i] ? [] : [{ i, po }]));
  if (!valid.length) return outcomes as Outcome[];
  steps.mark("checked");

  const written = await commit(ctx, async (tx) => {
    await repo.lockAccountOrders(tx, accountId);
    const existing = await existingOrders(tx, accountId, valid, mode);
    const { replies, writes, unchanged } = classifyOrders(caller, valid, existing, mode, global);
    if (atomic && replies.size) return { replies, stored: new Map() as Stored, writes: [], unchanged: [] };
    steps.mark("classified");
    const { assigned, built, messages } = await writeOrders(tx, accountId, writes, resultsOnly);
    steps.mark("written");
    const stored = await answeredOrders(tx, accountId, unchanged, built, assigned, resultsOnly);
    await enqueueEncoded(tx, messages);
    steps.mark("announced");
    return { replies, stored, writes, unchanged };
  }, (written) => written.writes.length > 0);
  steps.mark("committed");
  ctx.logger.debug({ orders: inputs.length, written: written.writes.length, unchanged: written.unchanged.length, ms: steps.ms }, "purchase-order batch");
  return answerOrders(inputs, outcomes, written, resultsOnly);
}

/** Each order alone, then its externalPONo once per request: its 400 or 409, or undefined when it may be written. */
function checkOrders(inputs: PurchaseOrder[], mode: ordersV1.WriteMode): (Outcome | undefined)[] {
  const outcomes: (Outcome | undefined)[] = inputs.map((po) => {
    const problems = purchaseOrderViolations(po);
    if (mode === WriteMode.REPLACE && !po.id) problems.unshift({ path: "id", message: "is required" });
    return problems.length ? answer(400, po.externalPoNo, violationMessage(problems), problems) : undefined;
  });
  refuseDuplicates(inputs, outcomes, (po) => po.externalPoNo, (po) => answer(409, po.externalPoNo, "externalPONo appears more than once in the request"));
  return outcomes;
}

/** The account's orders of the request's numbers (and, replacing, ids), read under the lock so they hold until commit. */
async function existingOrders(tx: Tx, accountId: string, valid: Checked[], mode: ordersV1.WriteMode): Promise<Existing> {
  const byNumber = new Map((await repo.existingByNumber(tx, accountId, valid.map((v) => v.po.externalPoNo))).map((e) => [e.external_po_no, e]));
  const byId =
    mode === WriteMode.REPLACE
      ? new Map((await repo.existingById(tx, accountId, valid.map((v) => v.po.id).filter(isUuid))).map((e) => [e.id, e]))
      : new Map<string, repo.ExistingOrder>();
  return { byNumber, byId };
}

/**
 * Each valid order against what exists: refused (replies), unchanged (its content hash is the
 * stored one: neither written nor announced), or a write, which keeps an existing order's id and
 * creator; an order whose message the bus could not carry is refused before anything is written.
 */
function classifyOrders(caller: Caller, valid: Checked[], existing: Existing, mode: ordersV1.WriteMode, global: boolean) {
  const replies = new Map<number, Outcome>();
  const writes: Write[] = [];
  const unchanged: Unchanged[] = [];
  for (const { i, po } of valid) {
    const found = targetOf(po, existing, mode, (e) => global || e.api_key_id === caller.apiKeyId);
    if ("refused" in found) {
      replies.set(i, found.refused);
      continue;
    }
    const { target } = found;
    const id = target?.id ?? randomUUID();
    const columns = orderColumns(id, target?.api_key_id ?? caller.apiKeyId, po);
    if (target && target.content_hash === columns.order.content_hash) {
      unchanged.push({ i, id });
      continue;
    }
    const wasDraft = target?.delivery_status === DRAFT;
    const size = tooLargeToAnnounce(caller.accountId, id, columns, wasDraft);
    if (size !== undefined) {
      replies.set(i, answer(400, po.externalPoNo, `the purchase order is too large to announce (${size} bytes encoded, at most ${MAX_OUTBOX_MESSAGE_BYTES}): send fewer items or smaller attributes`));
      continue;
    }
    writes.push({ i, id, created: !target, wasDraft, columns });
  }
  return { replies, writes, unchanged };
}

/**
 * The stored order an order replaces (none: it is created), or its refusal: replacing, an id this
 * key may not change (404) or an externalPONo another order has (409); else an existing number
 * on create, or another key's order without `global` (409).
 */
function targetOf(po: PurchaseOrder, existing: Existing, mode: ordersV1.WriteMode, mine: (e: repo.ExistingOrder) => boolean): { refused: Outcome } | { target?: repo.ExistingOrder } {
  const ref = po.externalPoNo;
  if (mode === WriteMode.REPLACE) {
    const target = existing.byId.get(po.id);
    if (!target || !mine(target)) return { refused: answer(404, ref, `purchase order ${po.id} not found`) };
    const other = existing.byNumber.get(ref);
    if (other && other.id !== target.id) return { refused: answer(409, ref, `another purchase order has externalPONo ${ref}`) };
    return { target };
  }
  const target = existing.byNumber.get(ref);
  if (target && mode === WriteMode.CREATE) return { refused: answer(409, ref, `purchase order ${ref} already exists`) };
  if (target && !mine(target)) return { refused: answer(409, ref, `purchase order ${ref} was created by another API key; send global=true to change it`) };
  return { target };
}

/**
 * Writes the orders and replaces their items, both returning what Postgres assigned; their
 * messages are built and encoded while Postgres takes the items' COPY. Both are awaited together
 * from the start: a COPY refused while the messages are encoded is the write's failure (left
 * unawaited meanwhile, it was an unhandled rejection, which ends the process), and neither
 * failure rolls the transaction back under a COPY still running.
 */
async function writeOrders(tx: Tx, accountId: string, writes: Write[], resultsOnly: boolean) {
  const { written: assigned, itemsCopied } = await repo.writeOrders(
    tx,
    accountId,
    writes.map((w) => w.columns.order),
    writes.flatMap((w) => w.columns.items),
    writes.filter((w) => !w.created).map((w) => w.id),
  );
  const built = new Map<string, PurchaseOrder>();
  const [copied, encoded] = await Promise.allSettled([itemsCopied, encodeAnnouncements(accountId, writes, assigned, built, resultsOnly)]);
  if (copied.status === "rejected") throw copied.reason;
  if (encoded.status === "rejected") throw encoded.reason;
  return { assigned, built, messages: encoded.value };
}

/**
 * The written orders' outbox entries, encoded a slice at a time so that the COPY's data and
 * answers get through in between. Written orders are built from what was written (no read-back)
 * into `built`, and only when answered or a draft's queue payload.
 */
async function encodeAnnouncements(accountId: string, writes: Write[], assigned: Map<string, repo.WrittenOrder>, built: Map<string, PurchaseOrder>, resultsOnly: boolean) {
  const messages: EncodedEntry[] = [];
  for (let from = 0; from < writes.length; from += ENCODED_PER_SLICE) {
    await new Promise((resolve) => setImmediate(resolve));
    const slice = writes.slice(from, from + ENCODED_PER_SLICE).map((w) => {
      const a = assigned.get(w.id)!;
      let order: PurchaseOrder | undefined;
      const full = () => (order ??= purchaseOrderFromWrite(w.columns.order, w.columns.items, a));
      if (!resultsOnly) built.set(w.id, full());
      return announcement(accountId, w.id, w.created, w.wasDraft, w.columns, a, full);
    });
    messages.push(...encodeEntries(slice));
  }
  return messages;
}

/** The orders answered with their outcomes: written ones as built, unchanged ones read (only when answered). */
async function answeredOrders(tx: Tx, accountId: string, unchanged: Unchanged[], built: Map<string, PurchaseOrder>, assigned: Map<string, repo.WrittenOrder>, resultsOnly: boolean): Promise<Stored> {
  const stored: Stored = resultsOnly ? new Map() : await readBack(tx, accountId, unchanged.map((u) => u.id));
  for (const [id, order] of built) stored.set(id, { order, version: assigned.get(id)!.version });
  return stored;
}

/** Every order's outcome, in the request's order: checked, refused, written or unchanged, else not written. */
function answerOrders(inputs: PurchaseOrder[], outcomes: (Outcome | undefined)[], written: { replies: Map<number, Outcome>; stored: Stored; writes: Write[]; unchanged: Unchanged[] }, resultsOnly: boolean): Outcome[] {
  for (const [i, o] of written.replies) outcomes[i] = o;
  for (const w of written.writes) {
    const ref = inputs[w.i].externalPoNo;
    outcomes[w.i] = { ...answer(w.created ? 201 : 200, ref, w.created ? "created" : "updated"), value: resultsOnly ? undefined : written.stored.get(w.id)?.order };
  }
  for (const u of written.unchanged) {
    outcomes[u.i] = { ...answer(200, inputs[u.i].externalPoNo, "unchanged"), value: written.stored.get(u.id)?.order };
  }
  return outcomes.map((o, i) => o ?? answer(0, inputs[i].externalPoNo, "not written"));
}

export type ListQuery = Omit<repo.OrderFilter, "apiKeyId"> & { global: boolean };

export async function listPurchaseOrders(db: Db, caller: Caller, q: ListQuery, page: repo.Page) {
  const { global, ...rest } = q;
  const { orders, items, total } = await repo.listOrders(db, caller.accountId, { ...rest, apiKeyId: global ? undefined : caller.apiKeyId }, page);
  const byOrder = new Map<string, repo.ItemRow[]>();
  for (const i of items) byOrder.set(i.purchase_order_id, [...(byOrder.get(i.purchase_order_id) ?? []), i]);
  return { orders: orders.map((o) => purchaseOrderFromRows(o, byOrder.get(o.id) ?? [])), total };
}

/** By externalPONo, or the latest created when `number` is empty; 404 when none (or another key's without `global`). */
export async function getPurchaseOrder(db: Db, caller: Caller, number: string, global: boolean): Promise<PurchaseOrder> {
  const id = await repo.findOrderId(db, caller.accountId, number || undefined, global ? undefined : caller.apiKeyId);
  const found = id ? (await readBack(db, caller.accountId, [id])).get(id) : undefined;
  if (!found) throw notFound(number ? `purchase order ${number} not found` : "no purchase order yet");
  return found.order;
}
