import { isCurrencyCode } from "@analytics/contracts";
import { invalid, type FieldViolation } from "@analytics/errors";

/**
 * Field checks of pricing's writes that the messages' rules (pricing.proto, read by the table
 * specs) cannot say: currency codes, exclusive bounds, the published client's custom prices.
 * Each names the field it refuses.
 */

const DECIMAL = /^-?\d{1,20}(\.\d{1,10})?$/;

export class Problems {
  readonly list: FieldViolation[] = [];
  add(path: string, message: string) {
    this.list.push({ path, message });
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
