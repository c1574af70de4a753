import { z } from "zod";

/** Shapes shared by every resource's routes. */
export const generalResponseSchema = z
  .object({
    statusCode: z.number().int(),
    error: z.string().describe("reason phrase of the status; empty on success"),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
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
