import { z } from "zod";

/**
 * zod types of values that cross into proto, bounded exactly as the proto types are, so that a
 * value the edge accepts always converts (CONTRACT: zod and proto never disagree).
 */

/** proto int32. */
export const int32 = () => z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1);
/** proto int64 with jstype JS_NUMBER: a JS number, so within the safe integers. */
export const int64 = () => z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

/**
 * A whole number in a query or path parameter, written in digits only. zod's coercion took
 * `0x10`, `1e3`, `+5`, ` 5` and an empty value as numbers; these are now the parameter's 400,
 * and the document still says integer with its bounds.
 */
export const wholeNumber = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === "string" && /^[0-9]+$/.test(v) ? Number(v) : v),
    z.number({ error: (issue) => (issue.code === "invalid_type" ? "must be a whole number written in digits" : undefined) }).int().min(min).max(max),
  );

const SIGNIFICANT_DIGITS = 15;
const MAX_DECIMALS = 10;

/** Significant digits and decimal places of a finite number's shortest decimal form. */
function digitsOf(n: number): { significant: number; decimals: number } {
  const text = String(Math.abs(n));
  if (text.includes("e")) {
    const [mantissa, exp] = text.split("e");
    const fraction = mantissa.split(".")[1] ?? "";
    return { significant: 1 + fraction.length, decimals: Math.max(0, fraction.length - Number(exp)) };
  }
  // The shortest round-trip form, as written: significant digits are those between the first and
  // the last non-zero digit (at least one); decimals, those after the point.
  const point = text.indexOf(".");
  const digits = point < 0 ? text : text.slice(0, point) + text.slice(point + 1);
  const first = digits.search(/[1-9]/);
  const significant = first < 0 ? 1 : digits.replace(/0+$/, "").length - first;
  return { significant, decimals: point < 0 ? 0 : text.length - point - 1 };
}

/**
 * A decimal (money, price, rate, VAT, percentage) as a JSON number: at most 15 significant digits
 * and 10 decimal places, so the number's shortest form is exactly what the client wrote and the
 * services receive those digits (analytics.common.v1.Decimal), never a rounded binary value.
 */
export const decimal = () =>
  z
    .number()
    .superRefine((n, ctx) => {
      if (!Number.isFinite(n)) return ctx.addIssue({ code: "custom", message: "must be a finite number" });
      const { significant, decimals } = digitsOf(n);
      if (significant > SIGNIFICANT_DIGITS) ctx.addIssue({ code: "custom", message: `at most ${SIGNIFICANT_DIGITS} significant digits` });
      if (decimals > MAX_DECIMALS) ctx.addIssue({ code: "custom", message: `at most ${MAX_DECIMALS} decimal places` });
    })
    .meta({ format: "decimal" });

/**
 * The first value in free JSON that neither proto's Struct nor Postgres can hold, and where it is.
 * Nothing is allocated per field until a problem is found; its path is built on the way back.
 */
function unstorable(value: unknown): { path: (string | number)[]; message: string } | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : { path: [], message: "must be a finite number" };
  if (typeof value === "string") return value.includes("\u0000") ? { path: [], message: "must be text without NUL characters" } : undefined;
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorable(value[i]);
      if (found) return (found.path.unshift(i), found);
    }
    return undefined;
  }
  for (const k in value) {
    if (k.includes("\u0000")) return { path: [], message: "has a field name with a NUL character" };
    const found = unstorable((value as Record<string, unknown>)[k]);
    if (found) return (found.path.unshift(k), found);
  }
  return undefined;
}

/**
 * Keys and array elements of one free JSON value, at any depth: each costs the gateway and the
 * owning service work at every step (validation, Struct conversion, jsonb), so a value of 200,000
 * fields kept the event loop busy for seconds. A product's published-client fields are ~20.
 */
export const MAX_FREE_JSON_FIELDS = 10_000;

/** What is left of `budget` after the fields of `value`; negative (and stopped there) when over it. */
function fieldsLeft(value: unknown, budget: number): number {
  if (value === null || typeof value !== "object") return budget;
  for (const k in value) {
    if (--budget < 0) return budget;
    budget = fieldsLeft((value as Record<string, unknown>)[k], budget);
    if (budget < 0) return budget;
  }
  return budget;
}

/** Free JSON: too many fields is a 400 found before any other rule walks them; then what cannot be stored. */
const freeJson = <T extends z.ZodType>(schema: T, maxFields: number) =>
  z.preprocess((value, ctx) => {
    if (fieldsLeft(value, maxFields) < 0) ctx.addIssue({ code: "custom", message: `has more than ${maxFields} fields (keys and array elements at any depth)` });
    return value;
  }, schema.superRefine((value, ctx) => {
    const found = unstorable(value);
    if (found) ctx.addIssue({ code: "custom", path: found.path, message: found.message });
  }));

/**
 * A free JSON object (externalAttributes, customFields, the published client's attributes): any
 * JSON, bounded by what travels as a proto Struct and is stored as jsonb, so a 1e309 or a NUL is
 * the item's 400 naming the field, never a 500 or a silently changed value; at most
 * MAX_FREE_JSON_FIELDS fields.
 */
export const jsonObject = () => freeJson(z.record(z.string().max(500), z.unknown()), MAX_FREE_JSON_FIELDS);

/**
 * One free JSON value (a field the published client sends that the contract does not have; an
 * event's payload, which travels as text, not as a Struct, takes `maxFields: Infinity`).
 */
export const jsonValue = ({ maxFields = MAX_FREE_JSON_FIELDS } = {}) => freeJson(z.unknown(), maxFields);

/**
 * An order's external number, which a GET path reads (`/purchaseorders/{externalPurchaseNo}`):
 * it may not be a name that the same path already means (`/purchaseorders/latest`), or the order
 * could be written but never read by it.
 */
export const pathNumber = (path: string, taken: readonly string[]) =>
  z
    .string()
    .trim()
    .min(1)
    .max(500)
    .refine((v) => !taken.includes(v), { message: `must not be ${taken.map((t) => `"${t}"`).join(" or ")}: GET ${path}/<that name> answers something else` });

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_OR_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})(?:[Tt](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;
/** A day of the calendar that Postgres' date holds: 2026-02-30 is none, nor is year 0000 (1 BC). */
const realDate = (v: string) => {
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v && !v.startsWith("0000");
};

/**
 * A date-only field (`startDate`, an FX rate's `fromDate`, planning's `fromDate`...): `YYYY-MM-DD`,
 * or an RFC 3339 timestamp read as the calendar date written in it, in its own offset
 * (`2026-03-01T00:00:00+01:00`, local midnight in Stockholm, is 2026-03-01), because clients in
 * typed languages send every date as a timestamp (Go's time.Time) of the day they mean. Answers
 * keep the documented `YYYY-MM-DD`.
 */
export function dateOnly() {
  return z
    .string()
    .max(40)
    .regex(DATE_OR_TIMESTAMP, "must be a date YYYY-MM-DD or an RFC 3339 timestamp")
    .describe("YYYY-MM-DD, or an RFC 3339 timestamp read as the date written in it (in its own offset)")
    .transform((v, ctx) => {
      const day = v.slice(0, 10);
      if (!realDate(day)) {
        ctx.addIssue({ code: "custom", message: "must be a real calendar date" });
        return z.NEVER;
      }
      return day;
    })
    .pipe(z.string().regex(CALENDAR_DATE).describe("YYYY-MM-DD"));
}
