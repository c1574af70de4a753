import { z } from "zod";

/**
 * zod types of values that cross into proto, bounded exactly as the proto types are, so that a
 * value the edge accepts always converts (CONTRACT: zod and proto never disagree).
 */

/** proto int32. */
export const int32 = () => z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1);
/** proto int64 with jstype JS_NUMBER: a JS number, so within the safe integers. */
export const int64 = () => z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

const SIGNIFICANT_DIGITS = 15;
const MAX_DECIMALS = 10;

/** Significant digits and decimal places of a finite number's shortest decimal form. */
function digitsOf(n: number): { significant: number; decimals: number } {
  const [mantissa, exp = "0"] = Math.abs(n).toExponential().split("e");
  const fraction = mantissa.split(".")[1] ?? "";
  return { significant: 1 + fraction.length, decimals: Math.max(0, fraction.length - Number(exp)) };
}

/**
 * A decimal (money, price, rate, VAT, percentage) as a JSON number: at most 15 significant digits
 * and 10 decimal places, so the number's shortest form is exactly what the client wrote and the
 * services receive those digits (analytics.common.v1.Decimal), never a rounded binary value.
 */
export const decimal = () =>
  z
    .number()
    .refine((n) => Number.isFinite(n), "must be a finite number")
    .refine((n) => digitsOf(n).significant <= SIGNIFICANT_DIGITS, `at most ${SIGNIFICANT_DIGITS} significant digits`)
    .refine((n) => digitsOf(n).decimals <= MAX_DECIMALS, `at most ${MAX_DECIMALS} decimal places`)
    .meta({ format: "decimal" });
