import type { z } from "zod";
import type { FieldViolation } from "@analytics/errors";
import { HttpError } from "./errors";

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

/**
 * A path or query value with a NUL character: no resource can have one (Postgres cannot store
 * it), so it is that parameter's 400 here rather than an unnamed failure further in.
 */
export function refuseNul(values: unknown, where: string): void {
  for (const [name, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
    if ((Array.isArray(value) ? value : [value]).some((v) => typeof v === "string" && v.includes("\u0000"))) {
      const details = [{ path: name, message: "must be text without NUL characters" }];
      throw new HttpError(400, `invalid ${where}: ${describe(details)}`.slice(0, 500), details);
    }
  }
}

/**
 * A query parameter the route does not take is a 400 naming it: ignored, a misspelt filter
 * (`?pagesize=5`, `?key=` where the route takes `keys`) would answer unfiltered data as if it
 * were the answer asked for.
 */
export function refuseUnknownQuery(values: unknown, known: string[]): void {
  const unknown = Object.keys((values ?? {}) as Record<string, unknown>).filter((name) => !known.includes(name));
  if (!unknown.length) return;
  const takes = known.length ? `this route takes ${known.join(", ")}` : "this route takes no query parameters";
  const details = unknown.map((name) => ({ path: name, message: `is not a query parameter of this route (${takes})` }));
  throw new HttpError(400, `invalid query: ${describe(details)}`.slice(0, 500), details, {}, "unknown_field");
}

export function parse<T extends z.ZodType>(schema: T, value: unknown, where: string, prefix = ""): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = violations(result.error, prefix);
  // Only fields the route does not take: a client written for another version drops them and sends again.
  const unknownOnly = result.error.issues.every((issue) => issue.code === "unrecognized_keys");
  throw new HttpError(400, `invalid ${where}: ${describe(details)}`.slice(0, 500), details, {}, unknownOnly ? "unknown_field" : undefined);
}
