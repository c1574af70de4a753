import { z } from "zod";
import type { DescField } from "@bufbuild/protobuf";
import { PRODUCT_CLIENT_FIELDS, catalogueV1, fieldRules, restValues } from "@analytics/contracts";
import { compatible } from "../http/compat";
import { answerShape, requestShape, type ProtoSchemaOptions } from "../http/proto-schema";
import { dateOnly } from "../http/values";

/** zod shapes of the catalogue's REST resources (CONTRACT.md, "Resources"). */

const { BrandSchema, CategorySchema, CostCalculationValueSchema, ImageUploadSchema, KeySwitchSchema, MappingTableSchema, ProductPriceSchema, ProductSchema, UploadedImageSchema } = catalogueV1;

export const isoDate = dateOnly();

/**
 * The catalogue's resources are declared once, as their proto messages with their fields' rules
 * (proto/catalogue/v1/catalogue.proto): the schemas below are read from them. What REST does
 * differently from a message is named here, each with its reason.
 */
const catalogueFields: ProtoSchemaOptions = {
  // Only the service's own timestamps (read-only) are Timestamps in the catalogue.
  timestamp: z.string().datetime(),
  date: isoDate,
  // A business key is trimmed, and blank is refused.
  trim: true,
};

/** The first of a field's values that is not undefined or null: the value inside `.nullish()`. */
const inner = (schema: z.ZodType): z.ZodType => (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable ? inner(schema.unwrap() as z.ZodType) : schema);
const derived = requestShape(ProductSchema, catalogueFields);
/** An integer field of a few values (its rule's min..max), each a literal. */
function valuesOf(field: DescField) {
  const { min = 0n, max = 0n } = fieldRules(field);
  const values = Array.from({ length: Number(max - min) + 1 }, (_, i) => z.literal(Number(min) + i));
  return z.union(values as unknown as [z.ZodLiteral<number>, z.ZodLiteral<number>]);
}

export const costCalculationValueSchema = z.strictObject(
  requestShape(CostCalculationValueSchema, {
    ...catalogueFields,
    // The key is a name within the product, sent on as written; `sort` left out is 0, null refused.
    trim: false,
    nullForDefault: false,
    fields: {
      // Documented as its values, as the document always was: the rule's bounds listed.
      type: valuesOf(CostCalculationValueSchema.field.type),
      // A pattern is no field rule: "" is the published client's currency of a value that has none (it sends every field); kept as sent.
      currency: z.union([z.literal(""), z.string().length(3).regex(/^[A-Z]{3}$/, "an ISO 4217 code")]).nullish().describe("an ISO 4217 code, or \"\""),
    },
  }),
);

/** Fields REST does not show under their JSON name: `seq` is answered as `id`, the brand's and category's as brandId and categoryId. */
const SEQUENCES = ["seq", "brandSeq", "categorySeq"];

/** The product's writable fields as a request takes them (`key` aside: POST requires it, PUT may name the product by `id`). */
const productRequest = requestShape(ProductSchema, {
  ...catalogueFields,
  omit: [...SEQUENCES, "key"],
  fields: {
    // The published client sends `year` as text ("2026"): digits within the field's bounds.
    year: z
      .union([inner(derived.year), z.string().max(4).regex(/^[0-9]{1,4}$/, "a year of up to 4 digits").transform(Number)])
      .nullish()
      .describe("a number, or the published client's text (\"2026\"); answered as text"),
    // The published client sends productType as a number (1 Standard, 2 Commission, 3 Local).
    productType: z
      .union([inner(derived.productType), z.number().int().min(0).max(999_999_999).transform(String)])
      .nullish()
      .describe("text, or the published client's number (1 Standard, 2 Commission, 3 Local); answered as a number when it is a whole number"),
    // A list's length is no field rule: CONTRACT's limit for cost values.
    costCalculationValues: z.array(costCalculationValueSchema).max(1000).nullish(),
  },
});
/** The internal id, a REST name of no field (the message's `id`, answered as `uuid`): a product sent back as GET answered it carries it. */
const uuidInput = { uuid: z.unknown().optional() };
const key = derived.key;

/** The published client's product fields (CONTRACT.md, "Compatibility with the published client"). */
const productCompatibility = {
  aliases: { productGroupID: "productGroupId", variantGroupID: "variantGroupId" },
  extras: [...PRODUCT_CLIENT_FIELDS],
  extrasInto: "externalAttributes",
};

/** POST /products, /products/batch: `key` required; `id` ignored. */
const productCreate = compatible({ key, ...productRequest, ...uuidInput }, productCompatibility);
export const productCreateSchema = productCreate.runtime;
export const productCreateDocumented = productCreate.documented;
/** PUT /products: found by `id` (the integer id, or the UUID) when sent, else by `key` (or an old key); fields not sent are kept. */
const productUpdate = compatible(
  {
    key: key.optional(),
    ...productRequest,
    id: z.union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).transform(String), z.string().max(100)]).optional(),
    ...uuidInput,
  },
  productCompatibility,
  (p) => p.id !== undefined || p.key !== undefined,
  { message: "id or key is required", path: ["key"] },
);
export const productUpdateSchema = productUpdate.runtime;
export const productUpdateDocumented = productUpdate.documented;

/** A product's `prices` entry: the ProductPrice message (customPrices documented as nullable, as it always was). */
const priceSchema = z.object(answerShape(ProductPriceSchema, { fields: { customPrices: z.record(z.string(), z.number()).nullable() } }));

/** `id` (the integer id) first, where the document has always listed it. */
const { id: productId, ...productAnswer } = answerShape(ProductSchema, {
  omit: ["brandId", "categoryId"],
  names: { id: "uuid", seq: "id", brandSeq: "brandId", categorySeq: "categoryId" },
  bounds: catalogueFields,
  fields: {
    // A UUID, as the document has always said.
    id: z.string().uuid().describe(fieldRules(ProductSchema.field.id).description),
    costCalculationValues: z.array(costCalculationValueSchema).max(1000).nullable(),
    // productToRest: year as text, productType as a number when it is a whole number (the published client's types).
    year: z.string().nullable().describe("text, as the published client reads it"),
    productType: z.union([z.number().int(), z.string()]).nullable().describe("a number when the stored type is a whole number"),
    prices: z.array(priceSchema).describe(fieldRules(ProductSchema.field.prices).description),
  },
});

export const productSchema = z
  .object({
    id: productId,
    ...productAnswer,
    ...Object.fromEntries(PRODUCT_CLIENT_FIELDS.map((f) => [f, z.unknown().optional().meta({ deprecated: true, description: "sent by the published client, answered from externalAttributes under its name (when kept)" })])),
  })
  .meta({ id: "Product" });

/** REST names a client may send back from GET that the service fills: accepted and ignored. */
const readOnlyInput = new Set([...Object.keys(uuidInput), ...ProductSchema.fields.filter((f) => fieldRules(f).readOnly && f.jsonName !== "id").map((f) => f.jsonName)]);

/** The writable fields a client sent as null: a partial update clears them. */
export function nullFields(product: Record<string, unknown>): string[] {
  return Object.keys(product).filter((k) => product[k] === null && k !== "id" && !readOnlyInput.has(k));
}

/** Only the writable fields (and `id` on update) go to the service. */
export function writableFields(product: Record<string, unknown>, keepId: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(product)) {
    if (readOnlyInput.has(k)) continue;
    if (k === "id" && !keepId) continue;
    out[k] = v;
  }
  return out;
}

export const keySwitchSchema = z
  .strictObject(
    requestShape(KeySwitchSchema, {
      ...catalogueFields,
      // The new sku is sent on as written (only keys are trimmed).
      fields: { sku: z.string().min(1).max(fieldRules(KeySwitchSchema.field.sku).maxLen) },
    }),
  )
  .meta({ id: "KeySwitchRequest" });

const MiB = 1024 * 1024;
const base64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
export const imageUploadSchema = z.strictObject(
  requestShape(ImageUploadSchema, {
    ...catalogueFields,
    fields: {
      // Bytes are base64 in JSON: the image's limits are on its decoded size, no field rule.
      imageData: z
        .string()
        .min(1)
        .max(Math.ceil((10 * MiB) / 3) * 4 + 4)
        .regex(base64, "base64-encoded image data")
        .refine((v) => Math.floor((v.replace(/=+$/, "").length * 3) / 4) <= 10 * MiB, "at most 10 MiB decoded")
        .describe("base64 PNG, JPEG, WebP or GIF, at most 10 MiB decoded"),
    },
  }),
);

export const imageResponseSchema = z.object(answerShape(UploadedImageSchema)).meta({ id: "ImageUploadResponse" });

/** A brand's or category's answer: `id` its integer id (first), `uuid` the internal one (not in the published client's SKU struct). */
export function namedAnswer(desc: typeof BrandSchema | typeof CategorySchema, { uuid = true } = {}) {
  const { id, ...rest } = answerShape(desc, { names: { id: "uuid", seq: "id" }, omit: uuid ? [] : ["id"] });
  return { id, ...rest };
}
export const brandSchema = z.object(namedAnswer(BrandSchema)).meta({ id: "Brand" });
export const categorySchema = z.object(namedAnswer(CategorySchema)).meta({ id: "Category" });

/** The mapping types: the MappingType enum's REST names (MappingTable.mapping_type's values_of). */
export const mappingType = z.enum(restValues(MappingTableSchema.field.mappingType) as [string, ...string[]]);
export const mappingValues = z.record(z.string().max(500), z.string().max(10_000));
export const mappingTableSchema = z
  .object(answerShape(MappingTableSchema, { fields: { mappingValues, updatedAt: z.string().datetime() } }))
  .meta({ id: "MappingTableResponse" });
