import type { z } from "zod";
import type { FieldViolation } from "@analytics/errors";

/** The longest field name an answer repeats, and how many wrong fields it names. */
const NAME_SHOWN = 100;
const VIOLATIONS_SHOWN = 20;

/** A client's field name as an answer repeats it: cut short, so a huge unknown key is not echoed whole. */
const shown = (name: string) => (name.length > NAME_SHOWN ? `${name.slice(0, NAME_SHOWN)}…` : name);

/** `items[3].sku` from a zod issue path. */
export function fieldPath(path: PropertyKey[], prefix = ""): string {
  let out = prefix;
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out ? `.${shown(String(part))}` : shown(String(part));
  return out || "(root)";
}

/** The contract's `details` of a failed zod parse (at most the first 20 wrong fields). */
export function violations(error: z.ZodError, prefix = ""): FieldViolation[] {
  return error.issues.slice(0, VIOLATIONS_SHOWN).map((issue) => ({
    path: fieldPath(issue.path, prefix),
    message:
      issue.code === "unrecognized_keys"
        ? `unknown field(s): ${issue.keys.slice(0, VIOLATIONS_SHOWN).map(shown).join(", ")}${issue.keys.length > VIOLATIONS_SHOWN ? ` and ${issue.keys.length - VIOLATIONS_SHOWN} more` : ""}`
        : issue.message,
  }));
}

/** One line naming every wrong field, for a message. */
export function describe(details: FieldViolation[]): string {
  return details.map((v) => `${v.path}: ${v.message}`).join("; ");
}
