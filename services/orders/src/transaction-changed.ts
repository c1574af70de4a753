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
 * (22) the upsert assigned, in field order as toBinary writes them, into one array (no encoder:
 * this runs for every line of an import). The ids are UUIDs: ASCII, one byte of length.
 */
export function splicedTransactionChanged(accountId: string, r: Assigned, sent: Uint8Array): Uint8Array {
  const [seq, version] = [Number(r.seq), Number(r.version)];
  const [created, updated] = [timestampLength(r.created_at), timestampLength(r.updated_at)];
  const transaction = 2 + r.id.length + sent.length + 3 + created + 3 + updated + 2 + varintLength(seq);
  const out = new Uint8Array(2 + accountId.length + 2 + r.id.length + 1 + varintLength(version) + 1 + varintLength(transaction) + transaction);
  let at = ascii(out, ascii(out, 0, 0x0a, accountId), 0x12, r.id);
  out[at++] = 0x18;
  at = varint(out, at, version);
  out[at++] = 0x22;
  at = varint(out, at, transaction);
  at = ascii(out, at, 0x0a, r.id);
  out.set(sent, at);
  at = timestamp(out, timestamp(out, at + sent.length, [0x9a, 0x01], r.created_at, created), [0xa2, 0x01], r.updated_at, updated);
  out[at++] = 0xb0;
  out[at++] = 0x01;
  varint(out, at, seq);
  return out;
}

/** A string field of at most 127 ASCII characters (an id, a UUID) at `at`: its tag, length and characters. Answers where it ends. */
function ascii(out: Uint8Array, at: number, tag: number, text: string): number {
  out[at++] = tag;
  out[at++] = text.length;
  for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
  return at;
}

/** The bytes of a non-negative integer (below 2^53) as a varint. */
function varintLength(n: number): number {
  let length = 1;
  for (; n >= 0x80; n = Math.floor(n / 0x80)) length++;
  return length;
}

/** A non-negative integer (ids, versions, seconds here: all below 2^53) as a varint at `at`; answers where it ends. */
function varint(out: Uint8Array, at: number, n: number): number {
  for (; n >= 0x80; n = Math.floor(n / 0x80)) out[at++] = (n % 0x80) | 0x80;
  out[at++] = n;
  return at;
}

/** A date as timestampFromDate makes it. */
function secondsAndNanos(date: Date): [number, number] {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return [seconds, (ms - seconds * 1000) * 1_000_000];
}

/** The length of a Timestamp message as toBinary writes it (no field of the two that is 0): at most 127. */
function timestampLength(date: Date): number {
  const [seconds, nanos] = secondsAndNanos(date);
  return (seconds ? 1 + varintLength(seconds) : 0) + (nanos ? 1 + varintLength(nanos) : 0);
}

/** A Timestamp field (two bytes of tag) of `length` at `at`; answers where it ends. */
function timestamp(out: Uint8Array, at: number, tag: [number, number], date: Date, length: number): number {
  const [seconds, nanos] = secondsAndNanos(date);
  out[at++] = tag[0];
  out[at++] = tag[1];
  out[at++] = length;
  if (seconds) {
    out[at++] = 0x08;
    at = varint(out, at, seconds);
  }
  if (nanos) {
    out[at++] = 0x10;
    at = varint(out, at, nanos);
  }
  return at;
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
