import type { FieldViolation } from "@analytics/errors";

/**
 * The service defends itself although the gateway validates: whatever reaches SQL must be
 * something Postgres accepts, so bad input is a 400 of its order and never a raw SQL error. The
 * field rules are the proto's (resources.ts); this is how their problems read in a message.
 */
export const violationMessage = (violations: FieldViolation[]) => violations.map((v) => (v.path ? `${v.path}: ${v.message}` : v.message)).join("; ");
