import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ordersV1, topics } from "@analytics/contracts";
import { inTransaction, isUuid, jsonProblems, pageOfIds, type Db, type Tx } from "@analytics/db";
import { invalid, notFound, type FieldViolation } from "@analytics/errors";
import { announcedSizeProblem, enqueue, outboxEntry } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import type { Page } from "./repository";
import { MAX_KEY_LENGTH, textProblem, violationMessage } from "./validation";

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

const TEXT = ["external_comment", "season", "key", "sku", "from_warehouse_external_id", "to_warehouse_external_id"] as const;
const DATES = ["order_date", "delivery_date", "shipped_at", "completed_date", "cancelled_date"] as const;
const COUNTS = ["quantity", "allocated_quantity", "delivered_quantity"] as const;
// attributes: the published client's additional fields, a JSON object kept as sent.
const WRITTEN = ["external_doid", "external_row_id", ...TEXT, ...DATES, ...COUNTS, "attributes"] as const;
const RECORD = [
  "id uuid",
  "external_doid text",
  "external_row_id text",
  ...TEXT.map((c) => `${c} text`),
  ...DATES.map((c) => `${c} timestamptz`),
  ...COUNTS.map((c) => `${c} integer`),
  "attributes jsonb",
].join(", ");
const SELECT = `id, seq, ${WRITTEN.join(", ")}, status, version, created_at, updated_at`;
/** True when the stored row `t` differs from the sent row `x` in a written column. */
const differs = (t: string, x: string) => `(${WRITTEN.map((c) => `${t}.${c}`).join(", ")}) IS DISTINCT FROM (${WRITTEN.map((c) => `${x}.${c}`).join(", ")})`;

type Row = Record<string, unknown> & { id: string; external_doid: string; external_row_id: string; version: number };

const camel = (c: string) => c.replace(/_([a-z])/g, (_, x: string) => x.toUpperCase());
const field = (c: string) => DistributionOrderSchema.fields.find((f) => f.name === c)!;

function fromRow(row: Row): DistributionOrder {
  const init: Record<string, unknown> = { id: row.id, seq: BigInt(row.seq as string), status: row.status, createdAt: timestampFromDate(row.created_at as Date), updatedAt: timestampFromDate(row.updated_at as Date) };
  for (const c of WRITTEN) {
    const v = row[c];
    if (v === null || v === undefined) continue;
    init[field(c).localName] = (DATES as readonly string[]).includes(c) ? timestampFromDate(v as Date) : v;
  }
  return create(DistributionOrderSchema, init);
}

function columnsOf(d: DistributionOrder): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of WRITTEN) {
    const v = (d as unknown as Record<string, unknown>)[field(c).localName];
    out[c] = (DATES as readonly string[]).includes(c) ? (v ? timestampDate(v as Timestamp).toISOString() : null) : (v ?? null);
  }
  return out;
}

function violations(d: DistributionOrder, replace: boolean): FieldViolation[] {
  const out: FieldViolation[] = [];
  if (replace && !d.id) out.push({ path: "id", message: "is required" });
  for (const c of ["external_doid", "external_row_id"] as const) {
    const v = (d as unknown as Record<string, string>)[field(c).localName];
    const problem = v.trim() ? textProblem(v, MAX_KEY_LENGTH) : "is required";
    if (problem) out.push({ path: field(c).jsonName, message: problem });
  }
  for (const c of TEXT) {
    const v = (d as unknown as Record<string, string | undefined>)[field(c).localName];
    const problem = v === undefined ? undefined : textProblem(v, MAX_KEY_LENGTH);
    if (problem) out.push({ path: field(c).jsonName, message: problem });
  }
  for (const c of COUNTS) if ((d as unknown as Record<string, number>)[camel(c)] < 0) out.push({ path: field(c).jsonName, message: "must be at least 0" });
  out.push(...jsonProblems(d.attributes, "attributes"));
  const tooLarge = out.length ? undefined : announcedSizeProblem(toBinary(DistributionOrderSchema, d).length, "distribution order");
  if (tooLarge) out.push(tooLarge);
  return out;
}

export interface DoOutcome {
  statusCode: number;
  message: string;
  reference: string;
  referenceField: string;
  violations: FieldViolation[];
  value?: DistributionOrder;
}

const answer = (statusCode: number, d: DistributionOrder, message: string, v: FieldViolation[] = []): DoOutcome => ({
  statusCode,
  message,
  reference: `${d.externalDoid}/${d.externalRowId}`,
  referenceField: REFERENCE,
  violations: v,
});

type Stored = Row & { created: boolean; unchanged?: boolean };

/** Creates or updates rows by (externalDOID, externalRowID), or (REPLACE) updates rows by id. */
export async function writeDistributionOrders(ctx: ServiceContext, accountId: string, inputs: DistributionOrder[], mode: ordersV1.WriteMode): Promise<DoOutcome[]> {
  const replace = mode === WriteMode.REPLACE;
  const outcomes = checkRows(inputs, replace);
  const valid = inputs.flatMap((d, i) => (outcomes[i] ? [] : [{ i, d }]));
  if (!valid.length) return outcomes as DoOutcome[];
  const done = await inTransaction(ctx.db, async (tx) => {
    const rows = valid.map(({ d }) => ({ ...columnsOf(d), id: replace ? (isUuid(d.id) ? d.id : randomUUID()) : randomUUID() }));
    const written = await storeRows(tx, accountId, rows, replace);
    const byKey = new Map<string, Stored>(written.map((r) => [keyOf(r, replace), r]));
    await readUntouched(tx, accountId, rows as Row[], byKey, replace);
    await enqueue(tx, written.map((r) => announcement(accountId, r)));
    return byKey;
  });
  if ([...done.values()].some((r) => !r.unchanged)) ctx.relay.kick();
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
  const seen = new Set<string>();
  inputs.forEach((d, i) => {
    const k = replace ? d.id : JSON.stringify([d.externalDoid, d.externalRowId]);
    if (outcomes[i]) return;
    if (seen.has(k)) outcomes[i] = answer(409, d, "the row appears more than once in the request");
    seen.add(k);
  });
  return outcomes;
}

/** How a row is named in the request: by id when replacing, else by (externalDOID, externalRowID). */
const keyOf = (r: { id: string; external_doid: string; external_row_id: string }, replace: boolean) => (replace ? r.id : JSON.stringify([r.external_doid, r.external_row_id]));

/**
 * Writes every row in one statement: an update by id (REPLACE; not onto another row's key) or an
 * upsert by key. Either leaves alone a row whose written columns are all equal, and answers only
 * the rows it wrote.
 */
async function storeRows(tx: Tx, accountId: string, rows: Record<string, unknown>[], replace: boolean): Promise<(Row & { created: boolean })[]> {
  const written: { rows: (Row & { created: boolean })[] } = replace
    ? await tx.raw(
        `UPDATE distribution_orders t SET ${WRITTEN.map((c) => `${c} = x.${c}`).join(", ")}, version = t.version + 1, updated_at = now()
           FROM jsonb_to_recordset(?::jsonb) AS x(${RECORD})
           WHERE t.account_id = ? AND t.id = x.id AND ${differs("t", "x")}
             AND NOT EXISTS (SELECT 1 FROM distribution_orders o WHERE o.account_id = t.account_id
               AND o.external_doid = x.external_doid AND o.external_row_id = x.external_row_id AND o.id <> t.id)
           RETURNING ${SELECT.split(", ").map((c) => `t.${c}`).join(", ")}, false AS created`,
        [JSON.stringify(rows), accountId],
      )
    : await tx.raw(
        `INSERT INTO distribution_orders (id, account_id, ${WRITTEN.join(", ")})
           SELECT id, ?, ${WRITTEN.join(", ")} FROM jsonb_to_recordset(?::jsonb) AS x(${RECORD})
           ON CONFLICT (account_id, external_doid, external_row_id) DO UPDATE SET
             ${WRITTEN.slice(2).map((c) => `${c} = EXCLUDED.${c}`).join(", ")}, version = distribution_orders.version + 1, updated_at = now()
           WHERE ${differs("distribution_orders", "EXCLUDED")}
           RETURNING ${SELECT}, (xmax = 0) AS created`,
        [accountId, JSON.stringify(rows)],
      );
  return written.rows;
}

/**
 * Rows the statement left alone: unchanged when the row of that key (and, replacing, of that
 * id) is stored, added to `byKey` as such; otherwise (replacing) an unknown id or another row's key.
 */
async function readUntouched(tx: Tx, accountId: string, rows: Row[], byKey: Map<string, Stored>, replace: boolean) {
  const untouched = rows.filter((r) => !byKey.has(keyOf(r, replace)));
  if (!untouched.length) return;
  const same: { rows: Row[] } = await tx.raw(
    `SELECT ${SELECT.split(", ").map((c) => `t.${c}`).join(", ")} FROM distribution_orders t
         JOIN jsonb_to_recordset(?::jsonb) AS x(id uuid, external_doid text, external_row_id text)
           ON t.external_doid = x.external_doid AND t.external_row_id = x.external_row_id${replace ? " AND t.id = x.id" : ""}
         WHERE t.account_id = ?`,
    [JSON.stringify(untouched.map((r) => ({ id: r.id, external_doid: r.external_doid, external_row_id: r.external_row_id }))), accountId],
  );
  for (const r of same.rows) byKey.set(keyOf(r, replace), { ...r, created: false, unchanged: true });
}

/** A written row's outbox entry (created or updated), carrying the row as GET answers it. */
function announcement(accountId: string, r: Row & { created: boolean }) {
  return outboxEntry(r.created ? topics.ordersDistributionOrderCreated : topics.ordersDistributionOrderUpdated, accountId, r.id, {
    accountId,
    distributionOrderId: r.id,
    version: BigInt(r.version),
    distributionOrder: fromRow(r),
  });
}

function checkStatus(status: string): void {
  if (status && !(DO_STATUSES as readonly string[]).includes(status)) {
    throw invalid(`status must be one of ${DO_STATUSES.join(", ")}`, [{ path: "status", message: `must be one of ${DO_STATUSES.join(", ")}` }]);
  }
}

export async function listDistributionOrders(db: Db, accountId: string, status: string, page: Page) {
  checkStatus(status);
  const filtered = () => {
    const q = db("distribution_orders").where("account_id", accountId);
    if (status) q.where("status", status);
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    db("distribution_orders").select(db.raw(SELECT)).where("account_id", accountId).whereIn("id", pageOfIds(filtered(), page)).orderBy("seq") as Promise<Row[]>,
    filtered().count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows: rows.map(fromRow), total: Number(count) };
}

/** External ids with at least one row neither COMPLETED nor CANCELLED, in order of their first row. */
export async function listProcessing(db: Db, accountId: string, page: Page) {
  const open = `SELECT external_doid, min(seq) AS first FROM distribution_orders
    WHERE account_id = ? AND status NOT IN ('COMPLETED', 'CANCELLED') GROUP BY external_doid`;
  const [rows, counted] = await Promise.all([
    db.raw(`${open} ORDER BY first LIMIT ? OFFSET ?`, [accountId, page.pageSize, (page.page - 1) * page.pageSize]),
    db.raw(`SELECT count(*) AS count FROM (${open}) o`, [accountId]),
  ]);
  return { ids: (rows.rows as { external_doid: string }[]).map((r) => r.external_doid), total: Number(counted.rows[0].count) };
}

export async function getDistributionOrder(db: Db | Tx, accountId: string, externalDoid: string): Promise<DistributionOrder[]> {
  const rows: Row[] = await db("distribution_orders").select(db.raw(SELECT)).where({ account_id: accountId, external_doid: externalDoid }).orderBy("seq");
  if (!rows.length) throw notFound(`distribution order ${externalDoid} not found`);
  return rows.map(fromRow);
}
