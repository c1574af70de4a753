import { isFieldSet, ScalarType, toBinary, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { catalogueV1, DecimalSchema, fieldRules, type Decimal } from "@analytics/contracts";
import { jsonProblems, unstorableText } from "@analytics/db";

const { CostCalculationValueSchema, ProductSchema } = catalogueV1;
import type { FieldViolation } from "@analytics/errors";
import { invalid } from "@analytics/errors";
import { announcedSizeProblem } from "@analytics/outbox";
import { DATE_FIELDS, WRITABLE_FIELDS, type Product } from "./resources";

/**
 * The service defends itself although the gateway validates: whatever reaches SQL must be
 * something Postgres accepts, so bad input is a 400 of its item and never a raw SQL error.
 */

/** Longest text of an indexed column: a btree entry must stay under ~2.7 kB even in 4-byte UTF-8. */
export const MAX_KEY_LENGTH = 500;
/** A text field's bound where its rules set none (max_len 0). */
const MAX_TEXT_LENGTH = 10_000;

/** Why `value` cannot be stored as text, if it cannot. */
export function textProblem(value: string, maxLength = MAX_TEXT_LENGTH): string | undefined {
  const unstorable = unstorableText(value);
  if (unstorable) return unstorable;
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  return undefined;
}

/** Throws 400 for a text argument (filter, name, path segment) that Postgres cannot take. */
export function checkText(path: string, value: string, maxLength = MAX_TEXT_LENGTH): string {
  const problem = textProblem(value, maxLength);
  if (problem) throw invalid(`${path} ${problem}`, [{ path, message: problem }]);
  return value;
}

/** A required key-like field: present, storable and indexable. */
export function keyProblem(value: string): string | undefined {
  if (!value.trim()) return "is required";
  return textProblem(value, MAX_KEY_LENGTH);
}

/** A message's text fields by their rules: a required one sent and not blank, each within its max_len. In field order. */
export function textViolations(desc: DescMessage, message: object): FieldViolation[] {
  const problems: FieldViolation[] = [];
  for (const field of desc.fields) {
    if (field.fieldKind !== "scalar" || field.scalar !== ScalarType.STRING) continue;
    const value = (message as Record<string, string | undefined>)[field.localName];
    const problem = fieldRules(field).required && !value?.trim() ? "is required" : value === undefined ? undefined : textProblem(value, maxLength(field));
    if (problem) problems.push({ path: field.jsonName, message: problem });
  }
  return problems;
}

export function isIsoDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** A field's text bound, from its rules (max_len): indexed columns and names matched against brands and categories take 500. */
const maxLength = (field: DescField) => fieldRules(field).maxLen || MAX_TEXT_LENGTH;

/** An integer field's range, from its rules (min, max); without them, a count of something (>= 0). */
function integerRange(field: DescField): [number, number] {
  const { min, max } = fieldRules(field);
  return [min === undefined ? 0 : Number(min), max === undefined ? 2 ** 31 - 1 : Number(max)];
}

function scalarProblem(field: DescField, value: unknown): string | undefined {
  if (typeof value === "string") {
    if (DATE_FIELDS.has(field.name)) return isIsoDate(value) ? undefined : "must be a date YYYY-MM-DD";
    return textProblem(value, maxLength(field));
  }
  if (typeof value !== "number") return undefined;
  if (field.scalar === ScalarType.DOUBLE) return Number.isFinite(value) ? undefined : "must be a finite number";
  const [min, max] = integerRange(field);
  return value < min || value > max ? `must be an integer from ${min} to ${max}` : undefined;
}

/** A decimal the service stores in a numeric column: plain digits, as the edge sends them. */
function decimalProblem(value: Decimal | undefined): string | undefined {
  if (value === undefined) return undefined;
  return /^-?[0-9]{1,20}(\.[0-9]{1,10})?$/.test(value.value) ? undefined : "must be a decimal number";
}

function costValueProblems(values: Product["costCalculationValues"], path: string): FieldViolation[] {
  return values.flatMap((v, i) => {
    const at = `${path}[${i}]`;
    const problems: FieldViolation[] = [];
    const key = keyProblem(v.key);
    if (key) problems.push({ path: `${at}.key`, message: key });
    const [min, max] = integerRange(CostCalculationValueSchema.field.type);
    if (v.type < min || v.type > max) problems.push({ path: `${at}.type`, message: "must be 1 (monetary) or 2 (percent)" });
    for (const field of [CostCalculationValueSchema.field.currency, CostCalculationValueSchema.field.externalReference]) {
      const text = (v as unknown as Record<string, string | undefined>)[field.localName];
      const problem = text === undefined ? undefined : textProblem(text, maxLength(field));
      if (problem) problems.push({ path: `${at}.${field.jsonName}`, message: problem });
    }
    for (const [name, n] of [["monetaryValue", v.monetaryValue], ["percentageValue", v.percentageValue], ["fxRate", v.fxRate]] as const) {
      const problem = decimalProblem(n);
      if (problem) problems.push({ path: `${at}.${name}`, message: problem });
    }
    return problems;
  });
}

/**
 * Problems of the writable fields a product write carries, with REST paths relative to the item
 * (`costCalculationValues[0].type`). Read-only fields are not looked at.
 */
export function productViolations(input: Product): FieldViolation[] {
  const problems: FieldViolation[] = [];
  for (const field of WRITABLE_FIELDS) {
    // Keys are checked where they are required (keyProblem).
    if (field.name === "key" || !isFieldSet(input, field)) continue;
    const value = (input as unknown as Record<string, unknown>)[field.localName];
    const path = field.jsonName;
    if (field.name === "cost_calculation_values") problems.push(...costValueProblems(input.costCalculationValues, path));
    else if (field.name === "external_attributes") problems.push(...jsonProblems(value, path));
    else if (field.fieldKind === "message" && field.message.typeName === DecimalSchema.typeName) {
      const problem = decimalProblem(value as Decimal | undefined);
      if (problem) problems.push({ path, message: problem });
    }
    else if (field.fieldKind === "scalar") {
      const problem = scalarProblem(field, value);
      if (problem) problems.push({ path, message: problem });
    }
  }
  return problems;
}

/** Rules across fields, checked on the product as it would be stored. */
export function storedProductViolations(product: Product): FieldViolation[] {
  const key = keyProblem(product.key);
  const problems: FieldViolation[] = key ? [{ path: "key", message: key }] : [];
  // Every change of a product is announced with the whole product.
  const tooLarge = announcedSizeProblem(toBinary(ProductSchema, product).length, "product");
  if (tooLarge) problems.push(tooLarge);
  if (product.startDate && product.endDate && product.endDate < product.startDate) {
    problems.push({ path: "endDate", message: "must not be before startDate" });
  }
  return problems;
}

/** A BatchResponse message for field problems: "invalid: path message; ...". */
export function violationMessage(problems: FieldViolation[]): string {
  return `invalid: ${problems.map((p) => (p.path ? `${p.path} ${p.message}` : p.message)).join("; ")}`;
}
