import { randomBytes } from "node:crypto";
import { ScalarType, create, fromJson, toJson, type DescField, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

/**
 * Messages whose fields carry `json_name` equal to the REST field names of the contract are the
 * REST resources themselves: toRestJson writes one as a client reads it (every field present,
 * null when unset, timestamps as RFC 3339 UTC with milliseconds, decimals and 64-bit integers as
 * JSON numbers), fromRestJson reads a request body that zod has already validated.
 */
export function toRestJson<D extends DescMessage>(schema: D, message: MessageShape<D>): Record<string, unknown> {
  return restOf(schema, message as unknown as Record<string, unknown>);
}

/**
 * The same answer by the slow road: protobuf-es's own JSON, then made REST-shaped. Kept as the
 * reference that tests compare toRestJson with.
 */
export function toRestJsonViaProtoJson<D extends DescMessage>(schema: D, message: MessageShape<D>): Record<string, unknown> {
  const json = toJson(schema, message, { alwaysEmitImplicit: true, enumAsInteger: true }) as Record<string, unknown>;
  return restify(schema, json);
}

/*
 * toRestJson reads the message's fields directly, in one pass: going through toJson first cost a
 * reflective walk, a string per int64 and timestamp, and a second object per message, for every
 * product of a 10,000-product page. protobuf-es v2 unboxes Struct/Value/ListValue (plain JSON)
 * and the wrapper types (primitives) in fields; Timestamp and Decimal stay messages.
 */
function restOf(desc: DescMessage, message: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of desc.fields) {
    let value: unknown;
    if (field.oneof) {
      const chosen = message[field.oneof.localName] as { case?: string; value?: unknown };
      value = chosen.case === field.localName ? chosen.value : undefined;
    } else value = message[field.localName];
    switch (field.fieldKind) {
      case "list":
        out[field.jsonName] = (value as unknown[]).map((v) => (field.listKind === "message" ? restMessage(field.message, v) : restScalar(v)));
        break;
      case "map": {
        const entries: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) entries[k] = field.mapKind === "message" ? restMessage(field.message, v) : restScalar(v);
        out[field.jsonName] = entries;
        break;
      }
      case "message":
        out[field.jsonName] = value === undefined ? null : restMessage(field.message, value);
        break;
      default:
        out[field.jsonName] = value === undefined ? null : restScalar(value);
    }
  }
  return out;
}

function restMessage(desc: DescMessage, value: unknown): unknown {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp": {
      const t = value as { seconds: bigint; nanos: number };
      return new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1_000_000)).toISOString();
    }
    case DECIMAL:
      return new RestDecimal((value as { value: string }).value || "0");
  }
  // Unboxed well-known types arrive as plain JSON or primitives.
  if (desc.typeName.startsWith("google.protobuf.")) return typeof value === "bigint" ? Number(value) : value;
  return restOf(desc, value as Record<string, unknown>);
}

/** int64 never reaches REST as a string (the edge keeps such values within 2^53); bytes as base64. */
function restScalar(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  return value;
}

export function fromRestJson<D extends DescMessage>(schema: D, json: unknown): MessageShape<D> {
  return (readRest(schema, json) as MessageShape<D> | undefined) ?? fromRestJsonViaProtoJson(schema, json);
}

/**
 * The same message by the slow road: the body made proto-JSON-shaped, then protobuf-es's fromJson.
 * It decides every value the direct road does not take, so errors (unknown field, wrong type,
 * out of range) are always fromJson's own; tests compare the two roads.
 */
export function fromRestJsonViaProtoJson<D extends DescMessage>(schema: D, json: unknown): MessageShape<D> {
  // JSON null is "not set" for every proto field, nested ones included: fromJson handles it.
  return fromJson(schema, fromRest(schema, json) as JsonValue, { ignoreUnknownFields: false });
}

/*
 * The direct road: a validated body read straight into a message in one pass, with a reader per
 * field compiled once per message type. The slow road copied every object twice (the decimal
 * pre-pass, then fromJson's bookkeeping) for the 5,500 objects of a 500-order batch. A reader
 * takes only values that fromJson reads to the same field value, and answers NOT_READ for
 * anything else (a numeric string, an unknown key, a value out of range, undefined), so that
 * the whole body then takes the slow road and fails or succeeds exactly as fromJson decides.
 */
const NOT_READ = Symbol("not read");
type FieldReader = (message: Record<string, unknown>, value: unknown) => typeof NOT_READ | void;
type ValueReader = (value: unknown) => unknown;
const readers = new WeakMap<DescMessage, Map<string, FieldReader>>();

/** The message of a REST body, or undefined where the body needs fromJson to decide. */
export function readRest(desc: DescMessage, json: unknown): unknown {
  const value = readMessage(desc, json);
  return value === NOT_READ ? undefined : value;
}

function readMessage(desc: DescMessage, json: unknown): unknown {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return NOT_READ;
  const fields = readersOf(desc);
  const message = create(desc) as Record<string, unknown>;
  for (const key in json) {
    const read = fields.get(key);
    if (!read || read(message, (json as Record<string, unknown>)[key]) === NOT_READ) return NOT_READ;
  }
  return message;
}

function readersOf(desc: DescMessage): Map<string, FieldReader> {
  let fields = readers.get(desc);
  if (fields) return fields;
  fields = new Map();
  // Registered before the fields are compiled, so that a recursive type finds itself.
  readers.set(desc, fields);
  for (const field of desc.fields) fields.set(field.jsonName, fieldReader(field));
  return fields;
}

function fieldReader(field: DescField): FieldReader {
  const name = field.localName;
  switch (field.fieldKind) {
    case "list": {
      const item = field.listKind === "message" ? messageReader(field.message) : field.listKind === "enum" ? enumReader(field.enum.values) : scalarReader(field.scalar);
      return (message, value) => {
        if (value === null) return;
        if (!Array.isArray(value)) return NOT_READ;
        const list = new Array(value.length);
        for (let i = 0; i < value.length; i++) if ((list[i] = value[i] === null ? NOT_READ : item(value[i])) === NOT_READ) return NOT_READ;
        message[name] = list;
      };
    }
    case "map": {
      if (field.mapKey !== ScalarType.STRING) return () => NOT_READ;
      const entry = field.mapKind === "message" ? messageReader(field.message) : field.mapKind === "enum" ? enumReader(field.enum.values) : scalarReader(field.scalar);
      return (message, value) => {
        if (value === null) return;
        if (typeof value !== "object" || Array.isArray(value)) return NOT_READ;
        const map: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
          // An own "__proto__" key needs fromJson's care.
          if (k === "__proto__" || v === null || (map[k] = entry(v)) === NOT_READ) return NOT_READ;
        }
        message[name] = map;
      };
    }
    default: {
      // A Value field reads JSON null as a null value, not as unset: fromJson's to read.
      if (field.fieldKind === "message" && field.message.typeName === "google.protobuf.Value") return () => NOT_READ;
      // A field of a oneof is fromJson's too; null leaves it unset either way.
      if (field.oneof) return (_message, value) => (value === null ? undefined : NOT_READ);
      const read = field.fieldKind === "message" ? messageReader(field.message) : field.fieldKind === "enum" ? enumReader(field.enum.values) : scalarReader(field.scalar);
      return (message, value) => {
        // null is "not set": the new message already has the field's unset value.
        if (value === null) return;
        const v = read(value);
        if (v === NOT_READ) return NOT_READ;
        message[name] = v;
      };
    }
  }
}

function messageReader(desc: DescMessage): ValueReader {
  switch (desc.typeName) {
    case DECIMAL:
      return (value) => (typeof value === "number" && Number.isFinite(value) ? create(desc, { value: decimalFromNumber(value) } as never) : NOT_READ);
    case "google.protobuf.Timestamp":
      return (value) => readTimestamp(desc, value);
    case "google.protobuf.Struct":
      // protobuf-es keeps a Struct field as the plain JSON object.
      return (value) => (value !== null && typeof value === "object" && !Array.isArray(value) && isPlainJson(value, 0) ? value : NOT_READ);
  }
  if (desc.typeName.startsWith("google.protobuf.")) return () => NOT_READ;
  return (value) => readMessage(desc, value);
}

/** The RFC 3339 UTC form the edge sends (toISOString's); any other form is fromJson's to read. */
const UTC_TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;

function readTimestamp(desc: DescMessage, value: unknown): unknown {
  if (typeof value !== "string") return NOT_READ;
  const m = UTC_TIMESTAMP.exec(value);
  if (!m) return NOT_READ;
  const ms = Date.parse(`${m[1]}Z`);
  // Timestamp holds the years 0001..9999: the year 0000 is fromJson's to refuse.
  if (Number.isNaN(ms) || m[1].startsWith("0000")) return NOT_READ;
  return create(desc, { seconds: BigInt(ms / 1000), nanos: m[2] ? Number(m[2].padEnd(9, "0")) : 0 } as never);
}

/** JSON as JSON.parse makes it (no undefined, no non-finite number, no "__proto__" key), at most 64 deep. */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object": {
      if (value === null) return true;
      if (depth > 64) return false;
      if (Array.isArray(value)) return value.every((v) => isPlainJson(v, depth + 1));
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      for (const k in value) if (k === "__proto__" || !isPlainJson((value as Record<string, unknown>)[k], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}

function enumReader(values: readonly { number: number }[]): ValueReader {
  const known = new Set(values.map((v) => v.number));
  return (value) => (typeof value === "number" && known.has(value) ? value : NOT_READ);
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

function scalarReader(type: ScalarType): ValueReader {
  switch (type) {
    case ScalarType.STRING:
      return (value) => (typeof value === "string" ? value : NOT_READ);
    case ScalarType.BOOL:
      return (value) => (typeof value === "boolean" ? value : NOT_READ);
    case ScalarType.DOUBLE:
      return (value) => (typeof value === "number" && Number.isFinite(value) ? value : NOT_READ);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return (value) => (typeof value === "number" && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX ? value : NOT_READ);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return (value) => (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 32 - 1 ? value : NOT_READ);
    default:
      // 64-bit integers (bigint or string by field option), float's range and bytes' base64.
      return () => NOT_READ;
  }
}

const PLAIN_JSON = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);
const DECIMAL = "analytics.common.v1.Decimal";
const INT64 = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

const is64Bit = (field: DescField) => (field.fieldKind === "scalar" || field.fieldKind === "list") && field.scalar !== undefined && INT64.has(field.scalar);

/** Every field present, in the proto's field order, so every answer has the same shape. */
function restify(desc: DescMessage, json: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of desc.fields) {
    const value = json[field.jsonName];
    if (field.fieldKind === "list") {
      if (value === undefined) out[field.jsonName] = [];
      else if (field.listKind === "message" && !PLAIN_JSON.has(field.message.typeName))
        out[field.jsonName] = (value as unknown[]).map((v) => convertMessage(field.message, v));
      else out[field.jsonName] = is64Bit(field) ? (value as string[]).map(Number) : value;
    } else if (field.fieldKind === "map") {
      const entries = (value ?? {}) as Record<string, unknown>;
      out[field.jsonName] = field.mapKind === "message" ? Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, convertMessage(field.message, v)])) : entries;
    } else if (value === undefined) {
      out[field.jsonName] = null;
    } else if (field.fieldKind === "message") {
      out[field.jsonName] = convertMessage(field.message, value);
    } else {
      // int64 never reaches REST as a string; the edge keeps such values within 2^53.
      out[field.jsonName] = is64Bit(field) ? Number(value) : value;
    }
  }
  return out;
}

function convertMessage(desc: DescMessage, value: unknown): unknown {
  if (desc.typeName === "google.protobuf.Timestamp") return new Date(value as string).toISOString();
  if (desc.typeName === DECIMAL) return new RestDecimal((value as { value?: string }).value ?? "0");
  if (PLAIN_JSON.has(desc.typeName) || value === null || typeof value !== "object") return value;
  return restify(desc, value as Record<string, unknown>);
}

/** REST JSON to proto JSON: decimals arrive as JSON numbers and become `{value}` messages. */
function fromRest(desc: DescMessage, json: unknown): unknown {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return json;
  const out: Record<string, unknown> = { ...(json as Record<string, unknown>) };
  for (const field of desc.fields) {
    const value = out[field.jsonName];
    if (value === undefined || value === null) continue;
    if (field.fieldKind === "message") out[field.jsonName] = fromRestMessage(field.message, value);
    else if (field.fieldKind === "list" && field.listKind === "message")
      out[field.jsonName] = Array.isArray(value) ? value.map((v) => fromRestMessage(field.message, v)) : value;
    else if (field.fieldKind === "map" && field.mapKind === "message" && typeof value === "object" && !Array.isArray(value))
      out[field.jsonName] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromRestMessage(field.message, v)]));
  }
  return out;
}

function fromRestMessage(desc: DescMessage, value: unknown): unknown {
  if (desc.typeName === DECIMAL) return typeof value === "number" ? { value: decimalFromNumber(value) } : value;
  if (PLAIN_JSON.has(desc.typeName) || desc.typeName.startsWith("google.protobuf.")) return value;
  return fromRest(desc, value);
}

/**
 * The decimal digits of a JSON number as the client wrote them. Exact for numbers of at most 15
 * significant digits (the edge refuses more): their shortest round-trip form is those digits.
 */
export function decimalFromNumber(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError("not a finite number");
  const s = String(n === 0 ? 0 : n);
  if (!/e/i.test(s)) return s;
  // Exponent forms (1e-7, 1e+21) written out in full.
  const [mantissa, exp] = s.toLowerCase().split("e");
  const negative = mantissa.startsWith("-");
  const [int, frac = ""] = mantissa.replace("-", "").split(".");
  const digits = int + frac;
  const point = int.length + Number(exp);
  const plain =
    point <= 0 ? `0.${"0".repeat(-point)}${digits}` : point >= digits.length ? digits + "0".repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? "-" : "") + plain;
}

// A decimal in a REST answer: JSON.stringify writes it as a marked string that stringifyRest
// turns into a bare JSON number with exactly the stored digits (no binary float on the way).
const MARK = `\u0000${randomBytes(6).toString("hex")}:`;
const MARKED = new RegExp(`"\\\\u0000${MARK.slice(1)}(-?[0-9]+(?:\\.[0-9]+)?|r[0-9]+)"`, "g");
const DECIMAL_TEXT = /^-?[0-9]+(\.[0-9]+)?$/;

export class RestDecimal {
  constructor(readonly digits: string) {
    if (!DECIMAL_TEXT.test(digits)) throw new RangeError(`not a decimal: ${digits}`);
  }
  toJSON(): string {
    return MARK + this.digits;
  }
  /** For code that needs a JS number (tests, comparisons); never for arithmetic on money. */
  valueOf(): number {
    return Number(this.digits);
  }
}

/** A decimal's digits as JSON number text, checked as RestDecimal checks them: for writers that build JSON text themselves. */
export function decimalJson(digits: string): string {
  if (!DECIMAL_TEXT.test(digits)) throw new RangeError(`not a decimal: ${digits}`);
  return digits;
}

/**
 * JSON text that is already valid JSON (a payload Postgres returned as text), placed into a REST
 * answer as it is: no parse in the gateway, no second stringify.
 */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): string {
    fragments.push(this.text);
    return `${MARK}r${fragments.length - 1}`;
  }
}
// Filled by RawJson.toJSON during one (synchronous) stringifyRest, emptied after it.
const fragments: string[] = [];

/** JSON text of a REST answer: decimals as bare numbers, raw JSON fragments in place. */
export function stringifyRest(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    if (text === undefined || !text.includes(MARK.slice(1))) return text;
    return text.replace(MARKED, (_, v: string) => (v.startsWith("r") ? fragments[Number(v.slice(1))] : v));
  } finally {
    fragments.length = 0;
  }
}
