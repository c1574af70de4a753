import { z } from "zod";
import { RestDecimal, pricingV1, toRestJson } from "@analytics/contracts";
import type { BatchResponse } from "../http/batch";
import { decimal } from "../http/values";
import { answerShape, requestShape } from "../http/proto-schema";

const { PriceListSchema, PriceSchema } = pricingV1;

/** zod shapes of pricing's REST resources (CONTRACT.md, "Resources"), and proto to REST. */

const id = z.string().trim().min(1).max(500);
export const currency = z.string().length(3).regex(/^[A-Z]{3}$/, "an ISO 4217 code (e.g. EUR)");

/**
 * The published client's spellings: names that differ only in letter case, and renamed fields,
 * become the contract's name before validation; both spellings with different values is a 400.
 */
export function canonicalNames(names: string[], renamed: Record<string, string> = {}) {
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  for (const [from, to] of Object.entries(renamed)) byLower.set(from.toLowerCase(), to);
  return (value: unknown, ctx: z.RefinementCtx) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const name = byLower.get(k.toLowerCase()) ?? k;
      if (name in out && JSON.stringify(out[name]) !== JSON.stringify(v)) {
        ctx.addIssue({ code: "custom", path: [name], message: `sent twice with different values (as ${name} and ${k})` });
      }
      out[name] = v;
    }
    return out;
  };
}

/** How REST differs from the PriceList message: the code's form, and the defaults of a list sent without them. */
const priceListFields = requestShape(PriceListSchema, {
  timestamp: z.unknown(),
  trim: true,
  fields: { currency, defaultPriceList: z.boolean().default(false), defaultVat: decimal().refine((n) => n >= 0 && n <= 100, "must be 0..100").default(0) },
});
const priceListNames = canonicalNames(Object.keys(priceListFields), { externalId: "externalPriceListId" });
/** PriceListUpsert; `externalId` is the published client's name of `externalPriceListId`. */
export const priceListUpsertSchema = z.preprocess(priceListNames, z.strictObject(priceListFields));
/** PUT: the id is the path's; the body may repeat it. */
export const priceListPutSchema = z.preprocess(priceListNames, z.strictObject({ ...priceListFields, externalPriceListId: priceListFields.externalPriceListId.optional() }));
export const priceListSchema = z
  .object({
    ...answerShape(PriceListSchema, { fields: { defaultVat: z.number().meta({ format: "decimal" }) } }),
    externalId: z.string().meta({ deprecated: true, description: "externalPriceListId, under the published client's name" }),
  })
  .meta({ id: "PriceList" });

/** The published client's customPrice1..customPrice4. */
export const CUSTOM_PRICE_NUMBERS = [1, 2, 3, 4] as const;

const priceUpdateFields = {
  ...requestShape(PriceSchema, { timestamp: z.unknown(), trim: true, omit: ["productId"] }),
  ...Object.fromEntries(
    CUSTOM_PRICE_NUMBERS.map((n) => [
      `customPrice${n}`,
      decimal()
        .nullish()
        .meta({ deprecated: true, description: `the published client's custom price ${n}: the account's ${n}. customPriceField (a 400 when it has fewer); merged like customPrices` }),
    ]),
  ) as Record<`customPrice${1 | 2 | 3 | 4}`, z.ZodOptional<z.ZodNullable<ReturnType<typeof decimal>>>>,
};
export const priceUpdateSchema = z.preprocess(canonicalNames(Object.keys(priceUpdateFields)), z.strictObject(priceUpdateFields)).meta({ id: "PriceUpdateRequest" });
/** An import's prices line (CONTRACT "Imports"): a PriceUpdateRequest whose list may also be named `externalPriceListId`. */
export const priceLineSchema = z.preprocess(canonicalNames(Object.keys(priceUpdateFields), { externalPriceListId: "listExternalID" }), z.strictObject(priceUpdateFields));
/** The fields a prices line may name (its CSV's columns). */
export const priceLineFields = z.object({ ...priceUpdateFields, externalPriceListId: id });
const deleteFields = {
  listExternalID: id,
  keys: z.array(id).min(1).max(1000),
  season: z.string().max(500).nullish(),
};
export const priceDeleteSchema = z.preprocess(canonicalNames(Object.keys(deleteFields)), z.strictObject(deleteFields)).meta({ id: "PriceDeleteRequest" });

export const priceSchema = z
  .object({
    ...answerShape(PriceSchema, { omit: ["productId", "updatedAt"], fields: { vat: z.number() } }),
    ...Object.fromEntries(
      CUSTOM_PRICE_NUMBERS.map((n) => [`customPrice${n}`, z.number().nullable().meta({ deprecated: true, description: `customPrices of the account's ${n}. customPriceField, as the published client reads it` })]),
    ),
    updatedAt: answerShape(PriceSchema).updatedAt,
  })
  .meta({ id: "PriceResponse" });

const customPrices = (m: Record<string, { value: string }>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, new RestDecimal(v.value)]));

/** A price list, its id also under the published client's name `externalId`. */
export const priceListToRest = (l?: pricingV1.PriceList) => ({ ...toRestJson(pricingV1.PriceListSchema, l!), externalId: l!.externalPriceListId });

/** PriceResponse: the product id stays inside; custom prices also as customPrice<n> by the account's customPriceFields. */
export function priceToRest(p: pricingV1.Price, customPriceFields: string[]) {
  const { productId: _, ...rest } = toRestJson(pricingV1.PriceSchema, p);
  const numbered = Object.fromEntries(
    CUSTOM_PRICE_NUMBERS.map((n) => {
      const value = p.customPrices[customPriceFields[n - 1]];
      return [`customPrice${n}`, value ? new RestDecimal(value.value) : null];
    }),
  );
  return { ...rest, customPrices: customPrices(p.customPrices), ...numbered };
}

/** A pricing BatchResult as the contract's BatchResponse (an item the service did not answer is a 500). */
export const batchResult = (r?: pricingV1.BatchResult): BatchResponse => ({
  message: r?.message ?? "",
  reference: r?.reference ?? "",
  referenceField: r?.referenceField ?? "",
  statusCode: r?.statusCode ?? 500,
});
