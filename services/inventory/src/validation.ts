import { unstorableText } from "@analytics/db";
import type { FieldViolation } from "@analytics/errors";

export const MAX_TEXT = 500;

/** A text field: required ones must not be blank; none longer than MAX_TEXT or unstorable (libs/db unstorableText). */
export function checkText(path: string, value: string | undefined, required: boolean): FieldViolation[] {
  if (value === undefined || value === "") return required ? [{ path, message: "is required" }] : [];
  if (required && !value.trim()) return [{ path, message: "must not be blank" }];
  if (value.length > MAX_TEXT) return [{ path, message: `must be at most ${MAX_TEXT} characters` }];
  const unstorable = unstorableText(value);
  return unstorable ? [{ path, message: unstorable }] : [];
}
