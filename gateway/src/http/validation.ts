import type { z } from "zod";
import type { FieldViolation } from "@analytics/errors";

/** `items[3].sku` from a zod issue path. */
export function fieldPath(path: PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out ? `.${String(part)}` : String(part);
  return out || "(root)";
}

/** The contract's `details` of a failed zod parse. */
export function violations(error: z.ZodError, prefix = ""): FieldViolation[] {
  return error.issues.map((issue) => ({
    path: fieldPath(issue.path, prefix),
    message: issue.code === "unrecognized_keys" ? `unknown field(s): ${issue.keys.join(", ")}` : issue.message,
  }));
}

/** One line naming every wrong field, for a message. */
export function describe(details: FieldViolation[]): string {
  return details.map((v) => `${v.path}: ${v.message}`).join("; ");
}
