import { randomBytes } from "node:crypto";
import { ScalarType, fromJson, toJson, type DescField, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";

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
  // JSON null is "not set" for every proto field, nested ones included: fromJson handles it.
  return fromJson(schema, fromRest(schema, json) as JsonValue, { ignoreUnknownFields: false });
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
