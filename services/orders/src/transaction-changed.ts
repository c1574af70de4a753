import { fromJson, type DescMessage } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { fieldRules, ordersV1, topics } from "@analytics/contracts";
import { outboxEntry } from "@analytics/outbox";
import type { ShipmentRow, TransactionRow } from "./repository";

/**
 * A transaction's TransactionChanged, the one message every write of a transaction announces: the
 * transaction as stored (what was sent, without read-only fields) with its id, seq and times, its
 * items' shipments, and its version. Built from the stored row (transactionChanged), or, for an
 * import's chunk, spliced from the bytes the transaction arrived in (splicedTransactionChanged),
 * byte for byte the same message without encoding the transaction again.
 */

const { ShipmentSchema, TransactionSchema } = ordersV1;
type Transaction = ordersV1.Transaction;
export type ChangedTopic = typeof topics.ordersTransactionCreated;

/** A stored transaction as a message: its body with its id, seq and times, and its items' shipments (among `shipments`). */
export function fromStored(row: TransactionRow, shipments: ShipmentRow[]): Transaction {
  const t = fromJson(TransactionSchema, row.body);
  t.id = row.id;
  t.seq = BigInt(row.seq);
  t.createdAt = timestampFromDate(row.created_at);
  t.updatedAt = timestampFromDate(row.updated_at);
  for (const item of t.items) {
    item.shipments = shipments.filter((s) => s.transaction_id === row.id && s.external_item_id === item.externalItemId).map((s) => fromJson(ShipmentSchema, s.body));
  }
  return t;
}

/** A stored transaction's TransactionChanged on `topic`, with its shipments (among `shipments`). */
export const transactionChanged = (topic: ChangedTopic, accountId: string, r: TransactionRow, shipments: ShipmentRow[]) =>
  outboxEntry(topic, accountId, r.id, { accountId, transactionId: r.id, version: BigInt(r.version), transaction: fromStored(r, shipments) });

/** What the upsert assigned to a transaction it wrote. */
export type Assigned = { id: string; seq: string; version: string | number; created_at: Date; updated_at: Date };

/**
 * The encoded TransactionChanged of a transaction written with no shipments, from `sent`, the
 * bytes it arrived in when they hold exactly what is stored of it (spliceable): a message field
 * is its tag, its length and its bytes, so the stored fields (2 to 18; attributes, 21, is a
 * Struct, never spliced) go in as they came, between the id (1) and the times (19, 20) and seq
 * (22) the upsert assigned, in field order as toBinary writes them.
 */
export function splicedTransactionChanged(accountId: string, r: Assigned, sent: Uint8Array): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).string(accountId);
  w.tag(2, WireType.LengthDelimited).string(r.id);
  w.tag(3, WireType.Varint).int64(r.version);
  w.tag(4, WireType.LengthDelimited).fork();
  w.tag(1, WireType.LengthDelimited).string(r.id);
  w.raw(sent);
  timestamp(w, 19, r.created_at);
  timestamp(w, 20, r.updated_at);
  w.tag(22, WireType.Varint).int64(r.seq);
  return w.join().finish();
}

/** A Timestamp field as toBinary writes timestampFromDate's (no nanos field when they are 0). */
function timestamp(w: BinaryWriter, field: number, date: Date): void {
  const { seconds, nanos } = timestampFromDate(date);
  w.tag(field, WireType.LengthDelimited).fork();
  if (seconds !== 0n) w.tag(1, WireType.Varint).int64(seconds);
  if (nanos !== 0) w.tag(2, WireType.Varint).int32(nanos);
  w.join();
}

/**
 * Whether a transaction's bytes (as the gateway's toBinary wrote them) are what toBinary writes of
 * it as stored and read back, so that they can be spliced: at every depth only fields of the
 * proto (no unknown ones, which the stored body drops), in declaration order, none read-only (the
 * stored body has none of them), and no Struct (attributes, customFields: read back from jsonb,
 * a Struct's keys come in jsonb's order, not the client's).
 */
export const spliceable = (sent: Uint8Array): boolean => plainFields(sent, TransactionSchema);

const STRUCT = "google.protobuf.Struct";

function plainFields(bytes: Uint8Array, desc: DescMessage): boolean {
  const reader = new BinaryReader(bytes);
  let last = -1;
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    const rank = ranksOf(desc).get(no);
    if (rank === undefined || rank < last) return false;
    last = rank;
    const field = desc.fields[rank];
    if (fieldRules(field).readOnly || field.fieldKind === "map") return false;
    if (field.message) {
      if (wireType !== WireType.LengthDelimited || field.message.typeName === STRUCT || !plainFields(reader.bytes(), field.message)) return false;
    } else reader.skip(wireType, no);
  }
  return true;
}

/** A message's fields by number: their place in its declaration (the order toBinary writes them in). */
const ranks = new WeakMap<DescMessage, Map<number, number>>();
function ranksOf(desc: DescMessage): Map<number, number> {
  let found = ranks.get(desc);
  if (!found) ranks.set(desc, (found = new Map(desc.fields.map((f, i) => [f.number, i]))));
  return found;
}

/** The bytes of each transaction of an encoded WriteTransactionsRequest (field 1), in order. */
export function transactionBytes(request: Uint8Array): Uint8Array[] {
  const reader = new BinaryReader(request);
  const out: Uint8Array[] = [];
  while (reader.pos < reader.len) {
    const [no, wireType] = reader.tag();
    if (no === 1 && wireType === WireType.LengthDelimited) out.push(reader.bytes());
    else reader.skip(wireType, no);
  }
  return out;
}

export const changedTopic = (created: boolean): ChangedTopic => (created ? topics.ordersTransactionCreated : topics.ordersTransactionUpdated);
