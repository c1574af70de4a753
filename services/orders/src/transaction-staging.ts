import { fromJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ordersV1, topics } from "@analytics/contracts";
import { copyRows, type Tx } from "@analytics/db";
import { enqueue, outboxEntry } from "@analytics/outbox";
import { commit, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import type { ShipmentRow } from "./repository";
import { answer, belowShipped, bodyOf, checkTransactions, type Transaction, type TxOutcome } from "./transactions";

/**
 * The staged write of transactions (docs/imports.md, "The staging engine"): an upsert by
 * externalTransactionID of many transactions with the outcome per transaction, the rows and the
 * messages writeTransactions(UPSERT) gives them, in fewer statements and less work per row. The
 * transactions are COPYed into a staging table of the connection; the stored ones they name are
 * locked and their shipped totals read by joining it; one upsert from it writes them all, and
 * the outbox rows follow in the same transaction. Nothing is read back: a message's transaction
 * is the one sent with what the upsert returned (id, seq, version, times) and the shipments it
 * keeps. Outcomes carry no `value` (an import's results have none).
 */

const { ShipmentSchema } = ordersV1;

/**
 * The staging table, one per connection (temporary), emptied at each commit (a truncate: no dead
 * rows stay). Emptied at the start of a write too, for a chunk whose lines repeat a key writes
 * more than once in one transaction; a DELETE, which costs nothing on the empty table of the
 * usual chunk, where TRUNCATE would make a new file each time.
 */
const STAGE = `
  CREATE TEMP TABLE IF NOT EXISTS staged_transactions (ord integer NOT NULL, ext text NOT NULL, body jsonb NOT NULL) ON COMMIT DELETE ROWS;
  DELETE FROM staged_transactions`;

type Written = { id: string; seq: string; version: string; created_at: Date; updated_at: Date; ext: string; created: boolean };

/**
 * Upserts `inputs` (no externalTransactionID twice: that is the caller's 409) by
 * externalTransactionID. `sizeAtMost`: the encoded size of them all, when known (an import's chunk).
 */
export async function upsertTransactionsStaged(ctx: ServiceContext, accountId: string, inputs: Transaction[], sizeAtMost?: number): Promise<TxOutcome[]> {
  const { outcomes, valid } = checkTransactions(inputs, false, sizeAtMost);
  if (!valid.length) return outcomes as TxOutcome[];
  const done = await commit(
    ctx,
    async (tx) => {
      // One write of the account's transactions at a time (as writeTransactions).
      await repo.lockAccountTransactions(tx, accountId);
      await tx.raw(STAGE);
      await copyRows(tx, "staged_transactions", ["ord", "ext", "body"], valid, ({ i, t }) => [i, t.externalTransactionId, bodyOf(t)]);
      const existing = await lockStaged(tx, accountId);
      const shipped = existing.size ? await repo.shippedTotals(tx, accountId, [...existing.values()]) : new Map<string, number>();
      // An existing transaction whose item would fall below what it shipped is that line's 400.
      const refused = new Map<number, TxOutcome>();
      for (const { i, t } of valid) {
        const id = existing.get(i);
        const short = id === undefined ? undefined : belowShipped(shipped, id, t);
        if (short) refused.set(i, short);
      }
      const written = await upsertStaged(tx, accountId, [...refused.keys()]);
      // Shipments matter only to transactions that have some: an item a write removed loses its
      // own, and the message of each such transaction carries those it keeps.
      const withShipments = new Set([...shipped.keys()].map((k) => k.slice(0, k.indexOf("/"))));
      const shipping = written.filter((r) => !r.created && withShipments.has(r.id));
      let shipments: ShipmentRow[] = [];
      if (shipping.length) {
        const byId = new Map(valid.map(({ t }) => [t.externalTransactionId, t]));
        await repo.deleteShipmentsOfRemovedItems(tx, accountId, shipping.map((r) => ({ id: r.id, items: byId.get(r.ext)!.items.map((item) => item.externalItemId) })));
        shipments = await repo.shipmentsOf(tx, accountId, shipping.map((r) => r.id));
      }
      await enqueue(tx, announceWritten(accountId, valid, written, shipments));
      return { refused, written };
    },
    (done) => done.written.length > 0,
  );
  const byExt = new Map(done.written.map((r) => [r.ext, r]));
  for (const { i, t } of valid) {
    const ref = t.externalTransactionId;
    const r = byExt.get(ref);
    outcomes[i] = done.refused.get(i) ?? (r ? answer(r.created ? 201 : 200, ref, r.created ? "created" : "updated") : answer(200, ref, "unchanged"));
  }
  return outcomes as TxOutcome[];
}

/** The stored transactions the staged ones name (by line), row-locked as writeTransactions locks them. */
async function lockStaged(tx: Tx, accountId: string): Promise<Map<number, string>> {
  const { rows } = await tx.raw(
    `SELECT s.ord, t.id FROM staged_transactions s JOIN transactions t ON t.account_id = ? AND t.external_transaction_id = s.ext
     ORDER BY t.id FOR UPDATE OF t`,
    [accountId],
  );
  return new Map(rows.map((r: { ord: number; id: string }) => [r.ord, r.id]));
}

/**
 * Inserts the staged transactions (but the `refused` lines) in line order, or replaces the stored
 * one of the same externalTransactionID; one stored with the same body is left alone (not
 * returned: unchanged). Returns what Postgres assigned to each row written.
 */
async function upsertStaged(tx: Tx, accountId: string, refused: number[]): Promise<Written[]> {
  const { rows } = await tx.raw(
    `INSERT INTO transactions AS t (id, account_id, external_transaction_id, body)
       SELECT gen_random_uuid(), ?, s.ext, s.body FROM staged_transactions s WHERE s.ord <> ALL(?::int[]) ORDER BY s.ord
       ON CONFLICT (account_id, external_transaction_id) DO UPDATE SET body = EXCLUDED.body, version = t.version + 1, updated_at = now()
       WHERE t.body IS DISTINCT FROM EXCLUDED.body
       RETURNING t.id, t.seq, t.version, t.created_at, t.updated_at, t.external_transaction_id AS ext, (t.xmax = 0) AS created`,
    [accountId, refused],
  );
  return rows;
}

/**
 * Each written transaction's TransactionChanged, as writeTransactions announces it: the
 * transaction as stored (what was sent, without read-only fields) with its id, seq and times, and
 * its items' shipments.
 */
function announceWritten(accountId: string, valid: { t: Transaction }[], written: Written[], shipments: ShipmentRow[]) {
  const sent = new Map(valid.map(({ t }) => [t.externalTransactionId, t]));
  return written.map((r) => {
    const t = sent.get(r.ext)!;
    const transaction: Transaction = {
      ...t,
      id: r.id,
      seq: BigInt(r.seq),
      createdAt: timestampFromDate(r.created_at),
      updatedAt: timestampFromDate(r.updated_at),
      items: t.items.map((item) => ({ ...item, shipments: shipmentsOfItem(shipments, r.id, item.externalItemId) })),
    };
    return outboxEntry(r.created ? topics.ordersTransactionCreated : topics.ordersTransactionUpdated, accountId, r.id, { accountId, transactionId: r.id, version: BigInt(r.version), transaction });
  });
}

function shipmentsOfItem(shipments: ShipmentRow[], id: string, itemId: string): ordersV1.Shipment[] {
  if (!shipments.length) return [];
  return shipments.filter((s) => s.transaction_id === id && s.external_item_id === itemId).map((s) => fromJson(ShipmentSchema, s.body));
}
