import { fromJson, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
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
  const id = Buffer.from(r.id);
  const transaction = Buffer.concat([field(1, id), sent, timestamp(19, r.created_at), timestamp(20, r.updated_at), Buffer.from([0xb0, 0x01, ...varint(Number(r.seq))])]);
  return Buffer.concat([field(1, Buffer.from(accountId)), field(2, id), Buffer.from([0x18, ...varint(Number(r.version))]), field(4, transaction)]);
}

/** A length-delimited field: its tag, its length and its bytes. */
const field = (no: number, bytes: Uint8Array): Uint8Array => Buffer.concat([Buffer.from([...varint((no << 3) | WireType.LengthDelimited), ...varint(bytes.length)]), bytes]);

/** A non-negative integer as a varint (ids, versions and seconds here, all below 2^53). */
function varint(n: number): number[] {
  const out: number[] = [];
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
  out.push(n);
  return out;
}

/** A Timestamp field as toBinary writes timestampFromDate's (no nanos field when they are 0). */
function timestamp(no: number, date: Date): Uint8Array {
  const { seconds, nanos } = timestampFromDate(date);
  return field(no, Uint8Array.from([...(seconds ? [0x08, ...varint(Number(seconds))] : []), ...(nanos ? [0x10, ...varint(nanos)] : [])]));
}

/**
 * Whether a transaction's bytes (as the gateway's toBinary wrote them) are what toBinary writes of
 * it as stored and read back, so that they can be spliced: at every depth only fields of the
 * proto (no unknown ones, which the stored body drops), in declaration order, none read-only (the
 * stored body has none of them), and no Struct (attributes, customFields: read back from jsonb,
 * a Struct's keys come in jsonb's order, not the client's). Read in place, nothing copied.
 */
export const spliceable = (sent: Uint8Array): boolean => plainFields(sent, 0, sent.length, TransactionSchema);

function plainFields(bytes: Uint8Array, from: number, to: number, desc: DescMessage): boolean {
  const fields = fieldsOf(desc);
  let last = -1;
  for (let at = from; at < to; ) {
    let tag = 0;
    for (let shift = 1; ; shift *= 0x80) {
      const b = bytes[at++];
      tag += (b & 0x7f) * shift;
      if (b < 0x80) break;
    }
    const f = fields.get(Math.floor(tag / 8));
    if (!f || f.refused || f.rank < last) return false;
    last = f.rank;
    switch (tag & 7) {
      case WireType.Varint:
        while (bytes[at++] >= 0x80);
        break;
      case WireType.Bit64:
        at += 8;
        break;
      case WireType.Bit32:
        at += 4;
        break;
      case WireType.LengthDelimited: {
        let length = 0;
        for (let shift = 1; ; shift *= 0x80) {
          const b = bytes[at++];
          length += (b & 0x7f) * shift;
          if (b < 0x80) break;
        }
        if (f.message && !plainFields(bytes, at, at + length, f.message)) return false;
        at += length;
        break;
      }
      default:
        return false;
    }
    if (at > to) return false;
  }
  return true;
}

/**
 * A message's fields by number: their place in its declaration (the order toBinary writes them
 * in), whether their bytes are never spliced (read-only, a map, a Struct) and their message.
 */
const known = new WeakMap<DescMessage, Map<number, { rank: number; refused: boolean; message?: DescMessage }>>();
function fieldsOf(desc: DescMessage) {
  let found = known.get(desc);
  if (!found) {
    const refused = (f: DescField) => fieldRules(f).readOnly || f.fieldKind === "map" || f.message?.typeName === "google.protobuf.Struct";
    known.set(desc, (found = new Map(desc.fields.map((f, rank) => [f.number, { rank, refused: refused(f), message: f.message }]))));
  }
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
