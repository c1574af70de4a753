import type { FieldViolation } from "@analytics/errors";
import { unstorableText } from "@analytics/db";

/**
 * The service defends itself although the gateway validates: whatever reaches SQL must be
 * something Postgres accepts, so bad input is a 400 of its order and never a raw SQL error.
 */

export const MAX_KEY_LENGTH = 500;
const MAX_TEXT_LENGTH = 10_000;
export function textProblem(value: string, maxLength = MAX_TEXT_LENGTH): string | undefined {
  const unstorable = unstorableText(value);
  if (unstorable) return unstorable;
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  return undefined;
}

export const violationMessage = (violations: FieldViolation[]) => violations.map((v) => (v.path ? `${v.path}: ${v.message}` : v.message)).join("; ");
