import { copyRows, type Tx } from "@analytics/db";
import { encodedEntry, encodeEntries, enqueueEncoded, type EncodedEntry } from "@analytics/outbox";
import { commit, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import { changedTopic, spliceable, splicedTransactionChanged, transactionChanged } from "./transaction-changed";
import { answer, belowShipped, bodyOf, checkTransactions, type Transaction, type TxOutcome } from "./transactions";

/**
 * The staged write of transactions (docs/imports.md, "The staging engine"): an upsert by
 * externalTransactionID of many transactions with the outcome per transaction, the rows and the
 * messages writeTransactions(UPSERT) gives them, in fewer statements and less work per row. The
 * transactions are COPYed into a staging table of the connection; the stored ones they name are
 * locked and their shipped totals read by joining it; one upsert from it writes them all, and
 * the outbox rows follow in the same transaction. A message is spliced from the bytes its
 * transaction arrived in with what the upsert returned (id, seq, version, times), not encoded
 * again; only one those bytes cannot give, or that keeps shipments, is read back and built as the
 * batch builds it. Outcomes carry no `value` (an import's results have none).
 */

/**
 * The staging table, one per connection (temporary), emptied at each commit (a truncate: no dead
 * rows stay). Emptied at the start of a write too, for a chunk whose lines repeat a key writes
 * more than once in one transaction; a DELETE, which costs nothing on the empty table of the
 * usual chunk, where TRUNCATE would make a new file each time.
 */
const STAGE = `
  CREATE TEMP TABLE IF NOT EXISTS staged_transactions (ord integer NOT NULL, ext text NOT NULL, body jsonb NOT NULL) ON COMMIT DELETE ROWS;
  DELETE FROM staged_transactions`;

type Staged = { i: number; t: Transaction; sent: Uint8Array };
type Written = { id: string; seq: string; version: string; created_at: Date; updated_at: Date; ext: string; created: boolean };

/**
 * Upserts `inputs` (no externalTransactionID twice: that is the caller's 409) by
 * externalTransactionID. `sent`: the bytes each arrived in (its messages are spliced from them);
 * `sizeAtMost`: the encoded size of them all, when known (an import's chunk).
 */
export async function upsertTransactionsStaged(ctx: ServiceContext, accountId: string, inputs: Transaction[], sent: Uint8Array[], sizeAtMost?: number): Promise<TxOutcome[]> {
  const checked = checkTransactions(inputs, false, sizeAtMost);
  const outcomes = checked.outcomes;
  const valid: Staged[] = checked.valid.map(({ i, t }) => ({ i, t, sent: sent[i] }));
  if (!valid.length) return outcomes as TxOutcome[];
  const done = await commit(
    ctx,
    async (tx) => {
      // One write of the account's transactions at a time (as writeTransactions).
      await repo.lockAccountTransactions(tx, accountId);
      await tx.raw(STAGE);
      await copyRows(tx, "staged_transactions", ["ord", "ext", "body"], valid, ({ i, t }) => [i, t.externalTransactionId, bodyOf(t)]);
      const existing = await lockStaged(tx, accountId, valid);
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
      if (shipping.length) {
        const byId = new Map(valid.map(({ t }) => [t.externalTransactionId, t]));
        await repo.deleteShipmentsOfRemovedItems(tx, accountId, shipping.map((r) => ({ id: r.id, items: byId.get(r.ext)!.items.map((item) => item.externalItemId) })));
      }
      await enqueueEncoded(tx, await announceWritten(tx, accountId, valid, written, new Set(shipping.map((r) => r.id))));
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

/**
 * The stored transactions the staged ones name (by line), row-locked as writeTransactions locks
 * them. By their externalTransactionIDs as a parameter, not a join with the staging table: the
 * planner knows nothing of that table's rows (never analyzed) and could scan the account's
 * transactions, where each id is one probe of the unique index.
 */
async function lockStaged(tx: Tx, accountId: string, valid: Staged[]): Promise<Map<number, string>> {
  const lineOf = new Map(valid.map(({ i, t }) => [t.externalTransactionId, i]));
  const stored = await repo.lockTransactionsByExternalId(tx, accountId, [...lineOf.keys()]);
  return new Map(stored.map((r) => [lineOf.get(r.external_transaction_id)!, r.id]));
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
 * Each written transaction's TransactionChanged, encoded, in the order written, byte for byte as
 * writeTransactions announces it: spliced from the bytes the transaction arrived in with what the
 * upsert assigned (transaction-changed.ts), or, for one those bytes are not the stored body of
 * (a Struct, a read-only field, a field this service does not know) or that keeps shipments (the
 * message carries them), built as the batch builds it, from its row read back.
 */
async function announceWritten(tx: Tx, accountId: string, valid: Staged[], written: Written[], shipping: Set<string>): Promise<EncodedEntry[]> {
  const sentOf = new Map(valid.map(({ t, sent }) => [t.externalTransactionId, sent]));
  const spliced = written.map((r) => {
    const sent = sentOf.get(r.ext);
    return sent && !shipping.has(r.id) && spliceable(sent) ? sent : undefined;
  });
  const readBack = written.filter((_, i) => !spliced[i]).map((r) => r.id);
  const rows = new Map(readBack.length ? (await repo.transactionsById(tx, accountId, readBack)).map((row) => [row.id, row]) : []);
  const shipments = await repo.shipmentsOf(tx, accountId, readBack.filter((id) => shipping.has(id)));
  return written.map((r, i) => {
    const sent = spliced[i];
    const topic = changedTopic(r.created);
    if (sent) return encodedEntry({ topic, accountId, aggregateId: r.id }, splicedTransactionChanged(accountId, r, sent));
    return encodeEntries([transactionChanged(topic, accountId, rows.get(r.id)!, shipments)])[0];
  });
}
