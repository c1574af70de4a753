import { z } from "zod";
import { mapInSlices } from "@analytics/db";
import { httpErrorOf } from "@analytics/errors";
import { HttpError } from "./errors";
import { describe, violations } from "./validation";

/** Items a batch route takes (CONTRACT "Limits"): 1000, and 500 purchase orders (the spec's). */
export const BATCH_MAX = 1000;
export const PURCHASE_ORDER_BATCH_MAX = 500;

export interface BatchResponse {
  message: string;
  reference: string;
  referenceField: string;
  statusCode: number;
}

/**
 * Batch bodies are validated item by item: an invalid item becomes that item's 400 and the valid
 * ones still go to the service, so one bad row never stops the others. In slices: 1000 items
 * validated and converted in one go held every other request of the gateway waiting.
 */
async function validateItems<T extends z.ZodType>(
  items: unknown[],
  schema: T,
  referenceOf: (item: unknown) => { reference: string; referenceField: string },
) {
  const results: (BatchResponse | undefined)[] = [];
  const valid: { index: number; value: z.infer<T> }[] = [];
  await mapInSlices(items, (item, index) => {
    const checked = checkItem(schema, item, referenceOf);
    if ("value" in checked) valid.push({ index, value: checked.value });
    results.push("value" in checked ? undefined : checked);
  });
  return { valid, results };
}

/** One item of a batch (or a line of an import): its value, or its 400 BatchResponse. */
export function checkItem<T extends z.ZodType>(schema: T, item: unknown, referenceOf: (item: unknown) => { reference: string; referenceField: string }): { value: z.infer<T> } | BatchResponse {
  const parsed = schema.safeParse(item);
  return parsed.success ? { value: parsed.data } : { ...referenceOf(item), statusCode: 400, message: describe(violations(parsed.error)) };
}

/**
 * `schema`, whose valid values are also converted (to proto): a value zod lets through but the
 * conversion refuses is that item's 400 naming the field, never a failure of the whole batch.
 */
export function converting<S extends z.ZodType, P>(schema: S, convert: (value: z.output<S>) => P) {
  return schema.transform((value, ctx) => {
    try {
      return convert(value);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: conversionMessage(error), path: conversionPath(error) });
      return z.NEVER;
    }
  });
}

/** Converts a validated single body; a value proto cannot hold is a 400 naming the field. */
export function convertBody<P>(convert: () => P): P {
  try {
    return convert();
  } catch (error) {
    const path = conversionPath(error).join(".");
    throw new HttpError(400, `invalid body: ${path ? `${path}: ` : ""}${conversionMessage(error)}`, [{ path, message: conversionMessage(error) }]);
  }
}

/** protobuf-es names the field in its message: `cannot decode field x.v1.Product.sort from JSON: ...`. */
function conversionPath(error: unknown): string[] {
  const field = /field [\w.]+\.(\w+) from JSON/.exec(String((error as Error)?.message))?.[1];
  return field ? [field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] : [];
}

function conversionMessage(error: unknown): string {
  const text = String((error as Error)?.message ?? error);
  return `cannot be stored (${text.replace(/^.*from JSON: /, "").slice(0, 200)})`;
}

/** The status of a batch whose service call failed (500, 503), if it did. */
export function serverFailure(results: BatchResponse[]): number | undefined {
  const worst = Math.max(...results.map((r) => r.statusCode));
  return worst >= 500 ? worst : undefined;
}

/** The status of a whole batch: a server failure, else 400 when any item failed, else `ok`. */
export function batchStatus(results: BatchResponse[], ok: number): number {
  return serverFailure(results) ?? (results.some((r) => r.statusCode === 400) ? 400 : ok);
}

/** Puts the service's results for the valid items back in request order. */
function mergeResults<R>(results: (R | undefined)[], valid: { index: number }[], fromService: R[]): R[] {
  valid.forEach((v, n) => (results[v.index] = fromService[n]));
  return results as R[];
}

/**
 * A whole batch: validate each item, send the valid ones to `write` in one call, answer one
 * BatchResponse per item in request order.
 */
export async function runBatch<T extends z.ZodType>(
  items: unknown[],
  schema: T,
  reference: string,
  write: (valid: z.infer<T>[]) => Promise<BatchResponse[]>,
): Promise<BatchResponse[]> {
  const { valid, results } = await validateItems(items, schema, referenceField(reference));
  if (!valid.length) return results as BatchResponse[];
  let written: BatchResponse[];
  try {
    written = await write(valid.map((v) => v.value));
  } catch (error) {
    // The service call failed as a whole: every item sent says so. A 503 committed nothing (send
    // those items again); a 504 outcome_unknown may have committed them (read them first).
    const { statusCode, message } = httpErrorOf(error);
    written = valid.map((v) => ({ ...referenceField(reference)(items[v.index]), statusCode, message }));
  }
  return mergeResults(results, valid, written);
}

/** The longest business key any resource takes; a longer one is that item's 400. */
const MAX_REFERENCE_LENGTH = 500;

/** The string value of `field` of a raw item, for the BatchResponse of an invalid one. */
export function referenceField(field: string) {
  return (item: unknown) => {
    const value = item && typeof item === "object" ? (item as Record<string, unknown>)[field] : undefined;
    // Echoed at most as long as a valid key: a 1 MB key made each of its answers 1 MB.
    const reference = typeof value === "string" || typeof value === "number" ? String(value).slice(0, MAX_REFERENCE_LENGTH) : "";
    return { reference, referenceField: field };
  };
}
