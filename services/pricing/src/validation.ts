import { isCurrencyCode } from "@analytics/contracts";
import { jsonProblems, unstorableText } from "@analytics/db";
import { invalid, type FieldViolation } from "@analytics/errors";

/** Field checks shared by pricing's writes; each names the field it refuses. */

export const MAX_TEXT = 500;
const DECIMAL = /^-?\d{1,20}(\.\d{1,10})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export class Problems {
  readonly list: FieldViolation[] = [];
  add(path: string, message: string) {
    this.list.push({ path, message });
  }
  text(path: string, value: string | undefined, required = false) {
    if (value === undefined || value === "") {
      if (required) this.add(path, "is required");
      return;
    }
    const problem = value.length > MAX_TEXT ? `at most ${MAX_TEXT} characters` : unstorableText(value);
    if (problem) this.add(path, problem);
  }
  /** A JSON value kept in jsonb (custom fields, attributes): no NUL in any string or key. */
  json(path: string, value: unknown) {
    this.list.push(...jsonProblems(value, path));
  }
  currency(path: string, value: string | undefined) {
    if (!value || !isCurrencyCode(value)) this.add(path, "must be an ISO 4217 currency code (e.g. EUR)");
  }
  /** A decimal text within [min, max] (either bound optional); `exclusiveMin` for `> min`. */
  decimal(path: string, value: string | undefined, bounds: { min?: number; max?: number; exclusiveMin?: boolean } = {}) {
    if (value === undefined) return this.add(path, "is required");
    if (!DECIMAL.test(value)) return this.add(path, "must be a decimal number");
    const n = Number(value);
    if (bounds.min !== undefined && (bounds.exclusiveMin ? !(n > bounds.min) : n < bounds.min)) {
      this.add(path, bounds.exclusiveMin ? `must be greater than ${bounds.min}` : `must be at least ${bounds.min}`);
    } else if (bounds.max !== undefined && n > bounds.max) this.add(path, `must be at most ${bounds.max}`);
  }
  date(path: string, value: string | undefined, required = false) {
    if (value === undefined || value === "") {
      if (required) this.add(path, "is required");
      return;
    }
    const d = new Date(`${value}T00:00:00Z`);
    if (!DATE.test(value) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) this.add(path, "must be a date YYYY-MM-DD");
  }
  get ok() {
    return this.list.length === 0;
  }
  message() {
    return this.list.map((v) => `${v.path}: ${v.message}`).join("; ");
  }
  /** Throws the 400 when anything was wrong. */
  check(what: string) {
    if (!this.ok) throw invalid(`invalid ${what}: ${this.message()}`.slice(0, 500), this.list);
  }
}
