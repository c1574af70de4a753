import { ScalarType, create, fromJson, toJson, type DescField, type JsonValue, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { DecimalSchema, RestDecimal, fieldRules as rulesOf, fromRestJson, restValues, toRestJson, type FieldRules } from "@analytics/contracts";
import { jsonProblems, unstorableText } from "./storable";

/**
 * A table whose columns are the fields of a REST-shaped proto message: a column has the field's
 * name (`external_po_no`) and the SQL type its proto type implies (or its rules' `column_type`).
 * The message is the one declaration of the resource; the statements' column lists, the
 * json_to_recordset record type, the conversion between messages and rows and the storable-value
 * checks all follow from it, so a new field is a proto field and a migration's column.
 */

export type Row = Record<string, unknown>;

export interface TableSpecOptions {
  /** Columns the table has besides the message's fields (keys, positions, hashes): name and SQL type, written first. */
  extra?: Record<string, string>;
  /** Fields that Postgres fills (a serial, default timestamps): selected, never written. */
  assigned?: string[];
  /** Where the service checks dates: the inclusive range of a Timestamp field, in seconds. */
  timestampSeconds?: readonly [bigint, bigint];
  /** Columns named otherwise than their field, by field name (`external_price_list_id: "external_id"`). */
  columnNames?: Record<string, string>;
  /**
   * The fields that have a column, by proto name, where the table keeps a part of a message that
   * another service owns (a replica of a bus message): the other fields, and those the message
   * gains later, are not its columns.
   */
  only?: readonly string[];
  /** Column types by proto name where the message's rules cannot say them (a message another service owns). */
  columnTypes?: Record<string, string>;
  /**
   * Message fields (single or lists) whose jsonb holds protobuf's own JSON (toJson: decimals as
   * `{"value": ...}`, defaults left out) instead of REST JSON: the form a table's rows were first
   * written in, kept so that stored rows and the SQL that reads them stay as they are.
   */
  protoJson?: readonly string[];
}

const TIMESTAMP = "google.protobuf.Timestamp";
const STRUCT = "google.protobuf.Struct";
const DEFAULT_MAX_LEN = 10_000;
/** The decimals a numeric column takes from REST: up to 20 integer and 10 fraction digits. */
const DECIMAL = /^-?[0-9]{1,20}(\.[0-9]{1,10})?$/;


export class TableSpec<D extends DescMessage> {
  /** The message's fields that have a column, in declaration order. */
  readonly fields: readonly DescField[];
  /** Fields the service writes (all stored fields but those Postgres assigns). */
  readonly written: readonly DescField[];
  /** The columns an INSERT or COPY names: the extra ones, then the written fields'. */
  readonly columns: readonly string[];
  /** The column definitions of a json_to_recordset(...) AS x(...) over rows of `rowOf`. */
  readonly recordType: string;
  /** `col = EXCLUDED.col` for the extra columns and the writable fields: an upsert's SET list. */
  readonly updateSet: string;
  /** The columns of `updateSet`, in its order (a statement's "changed?" comparison). */
  readonly updated: readonly string[];
  /** A field's column name (its name unless `columnNames` says otherwise). */
  readonly column: (f: DescField) => string;
  /** The fields kept as protobuf's JSON (options.protoJson). */
  private readonly protoJson: ReadonlySet<DescField>;

  constructor(
    readonly schema: D,
    readonly table: string,
    private readonly options: TableSpecOptions = {},
  ) {
    const assigned = new Set(options.assigned ?? []);
    const names = options.columnNames ?? {};
    const column = (this.column = (f: DescField) => names[f.name] ?? f.name);
    const unknown = [...(options.only ?? []), ...(options.protoJson ?? [])].filter((name) => !schema.fields.some((f) => f.name === name));
    if (unknown.length) throw new Error(`${table}: ${schema.typeName} has no field ${unknown.join(", ")}`);
    this.fields = schema.fields.filter((f) => !rulesOf(f).notStored && (!options.only || options.only.includes(f.name)));
    // A oneof member is set with its case; no table stores one, so rows and messages need not know how.
    const oneofs = this.fields.filter((f) => f.oneof);
    if (oneofs.length) throw new Error(`${table}: ${oneofs.map((f) => f.name).join(", ")} are oneof members, which a table spec does not store`);
    this.protoJson = new Set(this.fields.filter((f) => options.protoJson?.includes(f.name)));
    const notMessages = [...this.protoJson].filter((f) => f.fieldKind !== "message" && !(f.fieldKind === "list" && f.listKind === "message"));
    if (notMessages.length) throw new Error(`${table}: ${notMessages.map((f) => f.name).join(", ")} hold no message to keep as protobuf's JSON`);
    this.written = this.fields.filter((f) => !assigned.has(f.name));
    const extra = Object.entries(options.extra ?? {});
    this.columns = [...extra.map(([name]) => name), ...this.written.map(column)];
    this.recordType = [...extra.map(([name, type]) => `${name} ${type}`), ...this.written.map((f) => `${column(f)} ${options.columnTypes?.[f.name] ?? columnType(f)}`)].join(", ");
    // Read-only fields the service writes (the creating key) keep what the row was created with.
    this.updated = [...extra.map(([name]) => name), ...this.written.filter((f) => !rulesOf(f).readOnly).map(column)].filter((name) => name !== "id");
    this.updateSet = this.updated.map((name) => `${name} = EXCLUDED.${name}`).join(", ");
  }

  /**
   * The select list of every stored field (`alias.col`), numerics as their exact text, dates as
   * YYYY-MM-DD; `expressions` gives the SQL of columns read otherwise (from a joined table).
   */
  select(alias?: string, expressions: Record<string, string> = {}): string {
    const prefix = alias ? `${alias}.` : "";
    return this.fields
      .map((f) => {
        const name = this.column(f);
        const sql = expressions[name] ?? `${prefix}${name}`;
        if (isDecimal(f)) return `${sql}::text AS ${name}`;
        if (rulesOf(f).columnType === "date") return `to_char(${sql}, 'YYYY-MM-DD') AS ${name}`;
        return expressions[name] ? `${sql} AS ${name}` : sql;
      })
      .join(", ");
  }

  /** The written fields' column values of a message: JSON-safe (timestamps as RFC 3339, decimals and int64 as text), null when unset. */
  rowOf(message: MessageShape<D> | MessageInitShape<D>): Row {
    const m = message as unknown as Record<string, unknown>;
    const row: Row = {};
    for (const w of (this.writers ??= this.written.map((f) => ({ column: this.column(f), local: f.localName, value: this.protoJson.has(f) ? protoJsonWriter(f) : columnWriter(f) })))) {
      const v = m[w.local];
      row[w.column] = v === undefined || v === null ? null : w.value(v);
    }
    return row;
  }

  /** Each written field's column, property and value conversion, chosen once (a batch writes thousands of rows). */
  private writers?: { column: string; local: string; value: (v: unknown) => unknown }[];

  /** The message of a stored row (or of `rowOf`'s row with what Postgres assigned), as GET answers it. */
  messageOf(row: Row): MessageShape<D> {
    // Set field by field on a new message: create()'s init walk cost a third more on the
    // 100,000 rows of a streamed GET /prices. (No stored field is a oneof member: see the constructor.)
    const message = create(this.schema) as unknown as Record<string, unknown>;
    for (const r of (this.readers ??= this.fields.map((f) => ({ column: this.column(f), local: f.localName, field: f, value: this.protoJson.has(f) ? protoJsonValue : fieldValue })))) {
      const value = row[r.column];
      if (value !== null && value !== undefined) message[r.local] = r.value(r.field, value);
    }
    return message as unknown as MessageShape<D>;
  }

  /** Each stored field's column, property and value conversion, chosen once (a streamed page reads 100,000 rows). */
  private readers?: { column: string; local: string; field: DescField; value: (f: DescField, v: unknown) => unknown }[];

  /**
   * The problems (REST paths) that would make a message unstorable or break its rules: text too
   * long, blank or with NUL characters, integers out of bounds, decimals with too many digits,
   * dates out of range, JSON that jsonb refuses. Nested messages are checked by their own specs.
   */
  violations(message: MessageShape<D> | MessageInitShape<D>, path = ""): { path: string; message: string }[] {
    return fieldViolations(this.schema, message, path, this.options.timestampSeconds);
  }

  /**
   * A row whose values are equal exactly when the content is: decimals without insignificant
   * zeros, JSON objects' keys sorted; `omit` leaves columns out, and with `keptNulls` an unset
   * column is left out unless it is one of those.
   */
  comparable(row: Row, options: { omit?: ReadonlySet<string>; keptNulls?: ReadonlySet<string> } = {}): Row {
    const normal = (this.normalizers ??= new Map(
      this.written.flatMap((f): [string, (v: unknown) => unknown][] =>
        isDecimal(f) ? [[this.column(f), (v) => normalDecimal(v as string)]] : f.fieldKind === "message" && f.message.typeName === STRUCT ? [[this.column(f), sortedKeys]] : [],
      ),
    ));
    // One pass and one new object: a 500-order batch hashes 5,500 rows.
    const out: Row = {};
    for (const k in row) {
      if (options.omit?.has(k)) continue;
      const v = row[k];
      if (v === null || v === undefined) {
        if (!options.keptNulls || options.keptNulls.has(k)) out[k] = v;
        continue;
      }
      const n = normal.get(k);
      out[k] = n ? n(v) : v;
    }
    return out;
  }

  /** The columns whose values compare by a normal form (decimals, JSON objects), and that form. */
  private normalizers?: Map<string, (v: unknown) => unknown>;
}

/** The rule problems of a message's writable fields (see TableSpec.violations), for messages kept inside another's row too. */
export function fieldViolations<D extends DescMessage>(schema: D, message: MessageShape<D> | MessageInitShape<D>, path = "", timestampSeconds?: readonly [bigint, bigint]): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  const at = (f: DescField) => (path ? `${path}.${f.jsonName}` : f.jsonName);
  for (const [f, rules] of checkedFields(schema)) {
    const problem = fieldProblem(f, rules, (message as unknown as Record<string, unknown>)[f.localName], timestampSeconds);
    if (typeof problem === "string") out.push({ path: at(f), message: problem });
    else if (problem) out.push(...problem.map((p) => ({ path: `${at(f)}${p.path}`, message: p.message })));
  }
  return out;
}

const checked = new WeakMap<DescMessage, [DescField, FieldRules][]>();
/** The fields a client writes, with their rules (read-only ones are the service's). */
function checkedFields(schema: DescMessage): [DescField, FieldRules][] {
  let found = checked.get(schema);
  if (!found) checked.set(schema, (found = schema.fields.map((f) => [f, rulesOf(f)] as [DescField, FieldRules]).filter(([, r]) => !r.readOnly)));
  return found;
}

function normalDecimal(v: string): string {
  if (!v.includes(".")) return v.replace(/^(-?)0+(?=\d)/, "$1");
  return v.replace(/^(-?)0+(?=\d)/, "$1").replace(/\.?0+$/, "");
}

/** A JSON value with its objects' keys in one order: the same attributes sent in another order are no change. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
  );
}

export const tableSpec = <D extends DescMessage>(schema: D, table: string, options?: TableSpecOptions) => new TableSpec(schema, table, options);

const isDecimal = (f: DescField) => f.fieldKind === "message" && f.message.typeName === DecimalSchema.typeName;

function columnType(f: DescField): string {
  const declared = rulesOf(f).columnType;
  if (declared) return declared;
  switch (f.fieldKind) {
    case "list":
    case "map":
      return "jsonb";
    case "enum":
      return "integer";
    case "message":
      return f.message.typeName === TIMESTAMP ? "timestamptz" : f.message.typeName === DecimalSchema.typeName ? "numeric" : "jsonb";
    case "scalar":
      switch (f.scalar) {
        case ScalarType.STRING:
          return "text";
        case ScalarType.BOOL:
          return "boolean";
        case ScalarType.DOUBLE:
          return "double precision";
        case ScalarType.FLOAT:
          return "real";
        case ScalarType.INT64:
        case ScalarType.UINT64:
        case ScalarType.SINT64:
        case ScalarType.FIXED64:
        case ScalarType.SFIXED64:
          return "bigint";
        case ScalarType.BYTES:
          return "bytea";
        default:
          return "integer";
      }
  }
}

/** REST JSON of a nested message as jsonb keeps it: decimals as their digits (text), never a rounded number. */
function storedJson(desc: DescMessage, value: unknown): unknown {
  const rest = toRestJson(desc, value as never);
  // toRestJson's values are plain JSON but for its decimals (RestDecimal): only those are rewritten.
  return holdsDecimal(desc) ? JSON.parse(JSON.stringify(rest, (_k, v: unknown) => (v instanceof RestDecimal ? v.digits : v))) : rest;
}

const decimalHolders = new WeakMap<DescMessage, boolean>();
/** Whether a message type has a Decimal anywhere inside it. */
function holdsDecimal(desc: DescMessage): boolean {
  let found = decimalHolders.get(desc);
  if (found !== undefined) return found;
  decimalHolders.set(desc, false); // a recursive type meets itself as "no" while it is looked at
  found = desc.fields.some((f) => f.message !== undefined && (f.message.typeName === DecimalSchema.typeName || holdsDecimal(f.message)));
  decimalHolders.set(desc, found);
  return found;
}

/** How a field's set value is written to its column (JSON-safe): chosen once per field. */
function columnWriter(f: DescField): (value: unknown) => unknown {
  // An empty date is no date (a date column takes no '').
  if (rulesOf(f).columnType === "date") return (v) => (v === "" ? null : v);
  switch (f.fieldKind) {
    case "list":
      return f.listKind === "message" ? (v) => (v as unknown[]).map((x) => storedJson(f.message, x)) : (v) => v;
    case "map":
      if (f.mapKind !== "message") return (v) => v;
      return f.message.typeName === DecimalSchema.typeName
        ? (v) => {
            const out: Record<string, string> = {};
            for (const k in v as Record<string, { value: string }>) out[k] = (v as Record<string, { value: string }>)[k].value;
            return out;
          }
        : (v) => Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, storedJson(f.message, x)]));
    case "message":
      if (f.message.typeName === TIMESTAMP) return (v) => timestampDate(v as Timestamp).toISOString();
      if (f.message.typeName === DecimalSchema.typeName) return (v) => (v as { value: string }).value;
      if (f.message.typeName === STRUCT) return (v) => v;
      return (v) => storedJson(f.message, v);
    default:
      return (v) => (typeof v === "bigint" ? String(v) : v);
  }
}

/** A `protoJson` field's value as its column keeps it: protobuf's JSON of the message (of each, for a list). */
function protoJsonWriter(f: DescField): (value: unknown) => unknown {
  const desc = f.message!;
  return f.fieldKind === "list" ? (v) => (v as MessageShape<DescMessage>[]).map((x) => toJson(desc, x)) : (v) => toJson(desc, v as MessageShape<DescMessage>);
}

function protoJsonValue(f: DescField, value: unknown): unknown {
  const desc = f.message!;
  return f.fieldKind === "list" ? (value as JsonValue[]).map((v) => fromJson(desc, v)) : fromJson(desc, value as JsonValue);
}

function fieldValue(f: DescField, value: unknown): unknown {
  switch (f.fieldKind) {
    case "list":
      return f.listKind === "message" ? (value as unknown[]).map((v) => fromRestJson(f.message, v)) : value;
    case "map":
      return f.mapKind === "message"
        ? Object.fromEntries(
            Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, f.message.typeName === DecimalSchema.typeName ? decimalOf(v) : fromRestJson(f.message, v)]),
          )
        : value;
    case "message":
      if (f.message.typeName === TIMESTAMP) return timestampFromDate(value instanceof Date ? value : new Date(value as string));
      if (f.message.typeName === DecimalSchema.typeName) return decimalOf(value);
      if (f.message.typeName === STRUCT) return value;
      return fromRestJson(f.message, value);
    case "scalar":
      return f.scalar === ScalarType.INT64 || f.scalar === ScalarType.UINT64 ? BigInt(value as string | number) : value;
    default:
      return value;
  }
}

const decimalOf = (v: unknown) => create(DecimalSchema, { value: numericText(String(v)) });

/** Already as Postgres prints a numeric (what a read gives): no leading zero, no sign before an all-zero value. */
const PRINTED = /^(?:-(?=\d*[1-9])|)(?:0|[1-9]\d*)(?:\.\d+)?$/;

/** A decimal as Postgres prints the numeric stored from it: no leading zeros, no negative zero, its scale kept. */
export function numericText(v: string): string {
  if (PRINTED.test(v)) return v;
  const negative = v.startsWith("-");
  const [int, fraction] = (negative ? v.slice(1) : v).split(".");
  const digits = int.replace(/^0+(?=\d)/, "");
  const zero = !/[1-9]/.test(int + (fraction ?? ""));
  return `${negative && !zero ? "-" : ""}${digits}${fraction === undefined ? "" : `.${fraction}`}`;
}

function textProblem(value: string, rules: FieldRules): string | undefined {
  const unstorable = unstorableText(value);
  if (unstorable) return unstorable;
  const max = rules.maxLen || DEFAULT_MAX_LEN;
  if (value.length > max) return `must be at most ${max} characters`;
  return undefined;
}

/** Text outside the REST names its rules' values_of allows. */
function valueProblem(f: DescField, value: string): string | undefined {
  const values = restValues(f);
  return values && !values.includes(value) ? `must be one of ${values.join(", ")}` : undefined;
}

function fieldProblem(f: DescField, rules: FieldRules, value: unknown, seconds: readonly [bigint, bigint] | undefined): string | { path: string; message: string }[] | undefined {
  if (f.fieldKind === "scalar" && f.scalar === ScalarType.STRING) {
    if (rules.required && !(value as string | undefined)?.trim()) return "is required";
    if (!value) return undefined;
    return rules.columnType === "date" ? dateProblem(value as string) : ((rules.valuesOf ? valueProblem(f, value as string) : undefined) ?? textProblem(value as string, rules));
  }
  if (rules.valuesOf && f.fieldKind === "list" && f.scalar === ScalarType.STRING) {
    return (value as string[]).flatMap((v, i) => {
      const problem = valueProblem(f, v);
      return problem ? [{ path: `[${i}]`, message: problem }] : [];
    });
  }
  if (value === undefined || value === null) return f.fieldKind === "message" && rules.required ? "is required" : undefined;
  if (f.fieldKind === "scalar" && typeof value === "number") return boundsProblem(value, rules);
  if (f.fieldKind === "map" && f.mapKind === "message" && f.message.typeName === DecimalSchema.typeName) {
    return Object.entries(value as Record<string, { value: string }>).flatMap(([k, v]) => {
      const problem = k === "" ? "key must not be empty" : textProblem(k, rules) ?? decimalProblem(v.value, rules);
      return problem ? [{ path: `.${k}`, message: problem }] : [];
    });
  }
  if (f.fieldKind === "message") {
    if (f.message.typeName === DecimalSchema.typeName) return decimalProblem((value as { value: string }).value, rules);
    if (f.message.typeName === STRUCT) return jsonProblems(value, "").map((p) => ({ path: p.path, message: p.message }));
    if (f.message.typeName === TIMESTAMP && seconds) {
      const s = (value as Timestamp).seconds;
      if (s < seconds[0] || s > seconds[1]) return `must lie between ${rangeText(seconds[0])} and ${rangeText(seconds[1])}`;
    }
  }
  return undefined;
}

/** A number within the rules' inclusive bounds (integers, and decimals by their value). */
function boundsProblem(value: number, rules: FieldRules): string | undefined {
  if (rules.min !== undefined && value < rules.min) return rules.max !== undefined ? `must be ${rules.min}..${rules.max}` : `must be at least ${rules.min}`;
  if (rules.max !== undefined && value > rules.max) return rules.min !== undefined ? `must be ${rules.min}..${rules.max}` : `must be at most ${rules.max}`;
  return undefined;
}

const decimalProblem = (value: string, rules: FieldRules) => (DECIMAL.test(value) ? boundsProblem(Number(value), rules) : "must be a decimal number");

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Text kept in a date column: a real calendar day. */
function dateProblem(value: string): string | undefined {
  const d = new Date(`${value}T00:00:00Z`);
  return DATE.test(value) && !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value ? undefined : "must be a date YYYY-MM-DD";
}

const rangeText = (s: bigint) => new Date(Number(s) * 1000).toISOString().replace("T", " ").replace(/\.000Z$/, "");
