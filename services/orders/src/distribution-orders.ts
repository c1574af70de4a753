import { randomUUID } from "node:crypto";
import { toBinary } from "@bufbuild/protobuf";
import { ordersV1, topics } from "@analytics/contracts";
import { isUuid, type Db, type Tx } from "@analytics/db";
import { invalid, notFound, type FieldViolation } from "@analytics/errors";
import { announcedSizeProblem, enqueue, enqueueInPages, outboxEntry } from "@analytics/outbox";
import { commit, itemOutcome, refuseDuplicates, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import type { DoRow, Page } from "./repository";
import { distributionOrdersTable } from "./resources";
import { violationMessage } from "./validation";

/**
 * Distribution order rows, keyed by (externalDOID, externalRowID) within an account. `status` is
 * a generated column (migration 002), derived exactly as the contract says and never from input.
 * A write is one upsert (or one update by id) of every valid row, one outbox statement, and a
 * read of the rows it left alone, whatever the number of rows. A row re-sent unchanged (every
 * written column equal, its attributes compared as JSON values) is neither updated nor announced.
 */

const { DistributionOrderSchema, WriteMode } = ordersV1;
export type DistributionOrder = ordersV1.DistributionOrder;
export const DO_STATUSES = ["PROCESSING", "ALLOCATED", "IN TRANSIT", "COMPLETED", "CANCELLED"] as const;
const REFERENCE = "externalDOID/externalRowID";


const fromRow = (row: DoRow): DistributionOrder => distributionOrdersTable.messageOf(row);

function violations(d: DistributionOrder, replace: boolean): FieldViolation[] {
  const out: FieldViolation[] = distributionOrdersTable.violations(d);
  if (replace && !d.id) out.unshift({ path: "id", message: "is required" });
  const tooLarge = out.length ? undefined : announcedSizeProblem(toBinary(DistributionOrderSchema, d).length, "distribution order");
  if (tooLarge) out.push(tooLarge);
  return out;
}

export type DoOutcome = ItemOutcome<DistributionOrder>;

const answer = (statusCode: number, d: DistributionOrder, message: string, v: FieldViolation[] = []): DoOutcome =>
  itemOutcome(statusCode, `${d.externalDoid}/${d.externalRowId}`, REFERENCE, message, v);

type Stored = DoRow & { created: boolean; unchanged?: boolean };

/** Creates or updates rows by (externalDOID, externalRowID), or (REPLACE) updates rows by id. */
export async function writeDistributionOrders(ctx: ServiceContext, accountId: string, inputs: DistributionOrder[], mode: ordersV1.WriteMode): Promise<DoOutcome[]> {
  const replace = mode === WriteMode.REPLACE;
  const outcomes = checkRows(inputs, replace);
  const valid = inputs.flatMap((d, i) => (outcomes[i] ? [] : [{ i, d }]));
  if (!valid.length) return outcomes as DoOutcome[];
  // The relay is woken only when a row was written (and so announced).
  const done = await commit(
    ctx,
    async (tx) => {
      const rows = valid.map(({ d }) => ({ ...distributionOrdersTable.rowOf(d), id: replace ? (isUuid(d.id) ? d.id : randomUUID()) : randomUUID() }));
      const written = replace ? await repo.replaceDistributionOrders(tx, accountId, rows) : await repo.upsertDistributionOrders(tx, accountId, rows);
      const byKey = new Map<string, Stored>(written.map((r) => [keyOf(r, replace), r]));
      await readUntouched(tx, accountId, rows as DoRow[], byKey, replace);
      await enqueue(tx, written.map((r) => announcement(accountId, r)));
      return byKey;
    },
    (byKey) => [...byKey.values()].some((r) => !r.unchanged),
  );
  for (const { i, d } of valid) {
    const r = done.get(replace ? d.id : JSON.stringify([d.externalDoid, d.externalRowId]));
    if (!r) outcomes[i] = answer(replace ? 404 : 500, d, replace ? `distribution order ${d.id} not found (or its externalDOID/externalRowID is another row's)` : "not written");
    else outcomes[i] = { ...answer(r.created ? 201 : 200, d, r.created ? "created" : r.unchanged ? "unchanged" : "updated"), value: fromRow(r) };
  }
  return outcomes as DoOutcome[];
}

/** Each row alone, then its key (replacing: its id) once per request: its 400 or 409, or undefined when it may be written. */
function checkRows(inputs: DistributionOrder[], replace: boolean): (DoOutcome | undefined)[] {
  const outcomes: (DoOutcome | undefined)[] = inputs.map((d) => {
    const v = violations(d, replace);
    return v.length ? answer(400, d, violationMessage(v), v) : undefined;
  });
  // A row named twice, by id or (replacing) by the key it is given: two rows given one key would
  // both pass the statement's check against the stored rows and break the unique index (a 500).
  const keys = (d: DistributionOrder) => [JSON.stringify([d.externalDoid, d.externalRowId]), ...(replace ? [`id:${d.id}`] : [])];
  refuseDuplicates(inputs, outcomes, keys, (d) => answer(409, d, "the row appears more than once in the request"));
  return outcomes;
}

/** How a row is named in the request: by id when replacing, else by (externalDOID, externalRowID). */
const keyOf = (r: { id: string; external_doid: string; external_row_id: string }, replace: boolean) => (replace ? r.id : JSON.stringify([r.external_doid, r.external_row_id]));

/**
 * Rows the statement left alone: unchanged when the row of that key (and, replacing, of that
 * id) is stored, added to `byKey` as such; otherwise (replacing) an unknown id or another row's key.
 */
async function readUntouched(tx: Tx, accountId: string, rows: DoRow[], byKey: Map<string, Stored>, replace: boolean) {
  const untouched = rows.filter((r) => !byKey.has(keyOf(r, replace)));
  if (!untouched.length) return;
  for (const r of await repo.storedDistributionOrders(tx, accountId, untouched, replace)) byKey.set(keyOf(r, replace), { ...r, created: false, unchanged: true });
}

/** A written row's outbox entry (created or updated, or `topic`), carrying the row as GET answers it. */
function announcement(accountId: string, r: DoRow & { created: boolean }, topic = r.created ? topics.ordersDistributionOrderCreated : topics.ordersDistributionOrderUpdated) {
  return outboxEntry(topic, accountId, r.id, {
    accountId,
    distributionOrderId: r.id,
    version: BigInt(r.version),
    distributionOrder: fromRow(r),
  });
}

/**
 * Re-announces every stored row, as it is, on analytics.orders.distribution_order.backfilled
 * (planning's replica reads it; it is no change for anyone else), `pageSize` at a time. Answers
 * how many it announced.
 */
export async function announceStoredDistributionOrders(db: Db | Tx, pageSize = 500): Promise<number> {
  return enqueueInPages(
    db,
    (last: (DoRow & { account_id: string; seq: string }) | undefined) => repo.distributionOrdersPage(db, last, pageSize),
    async (rows) => rows.map((r) => announcement(r.account_id, { ...r, created: false }, topics.ordersDistributionOrderBackfilled)),
  );
}

function checkStatus(status: string): void {
  if (status && !(DO_STATUSES as readonly string[]).includes(status)) {
    throw invalid(`status must be one of ${DO_STATUSES.join(", ")}`, [{ path: "status", message: `must be one of ${DO_STATUSES.join(", ")}` }]);
  }
}

export async function listDistributionOrders(db: Db, accountId: string, status: string, page: Page) {
  checkStatus(status);
  const { rows, total } = await repo.listDistributionOrders(db, accountId, status, page);
  return { rows: rows.map(fromRow), total };
}

/** External ids with at least one row neither COMPLETED nor CANCELLED, in order of their first row. */
export function listProcessing(db: Db, accountId: string, page: Page) {
  return repo.listProcessingDistributionOrders(db, accountId, page);
}

export async function getDistributionOrder(db: Db | Tx, accountId: string, externalDoid: string): Promise<DistributionOrder[]> {
  const rows = await repo.findDistributionOrder(db, accountId, externalDoid);
  if (!rows.length) throw notFound(`distribution order ${externalDoid} not found`);
  return rows.map(fromRow);
}
