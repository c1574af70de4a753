import { z } from "zod";
import { ERROR_CODE_NAMES, ERROR_CODES } from "@analytics/errors";

/** Shapes shared by every resource's routes. */
export const generalResponseSchema = z
  .object({
    statusCode: z.number().int(),
    error: z.string().describe("reason phrase of the status; empty on success"),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    code: z
      .enum(ERROR_CODE_NAMES)
      .optional()
      .describe(
        `what the error is, stable and machine-readable; on every error answer (absent on a success). A code is never renamed; new ones may be added. ${ERROR_CODE_NAMES.map((c) => `\`${c}\` (${ERROR_CODES[c].status}): ${ERROR_CODES[c].meaning}`).join("; ")}`,
      ),
  })
  .meta({ id: "GeneralResponse" });

export const batchResponseSchema = z
  .object({
    message: z.string(),
    reference: z.string().describe("the item's business key value as sent (its first 500 characters, where an invalid one is longer)"),
    referenceField: z.string().describe("the business key's field name"),
    statusCode: z.number().int().describe("200 updated, 201 created, 400 invalid, 404 reference missing, 409 conflict"),
  })
  .meta({ id: "BatchResponse" });

/**
 * The 500, 503 and 504 of a batch: one BatchResponse per item when its service failed (for a 500
 * or 503 nothing of the batch was written; a 504's items may have been: http/batch.ts
 * serverFailure), or a GeneralResponse when the gateway did.
 */
export const batchFailureResponses = {
  500: { description: "the service failed, nothing was written: one BatchResponse per item (or a GeneralResponse)", schema: z.union([z.array(batchResponseSchema), generalResponseSchema]) },
  503: {
    description: "a service was unavailable, nothing was written: one BatchResponse per item (or a GeneralResponse); retry after `Retry-After` seconds",
    schema: z.union([z.array(batchResponseSchema), generalResponseSchema]),
  },
  504: {
    description:
      "`outcome_unknown`: the service did not answer in time, and the items sent may still have been applied: one BatchResponse per item (the invalid ones keep their 400; or a GeneralResponse); read them before sending them again under a new Idempotency-Key",
    schema: z.union([z.array(batchResponseSchema), generalResponseSchema]),
  },
};
