import { z } from "zod";
import { PRODUCT_CLIENT_FIELDS, catalogueV1 } from "@analytics/contracts";
import { compatible } from "../http/compat";
import { answerShape } from "../http/proto-schema";
import { dateOnly, decimal, int32, jsonObject } from "../http/values";

/** zod shapes of the catalogue's REST resources (CONTRACT.md, "Resources"). */

const text = z.string().max(10_000);
const shortText = z.string().max(500);
const count = z.number().int().min(0).max(2 ** 31 - 1);
export const isoDate = dateOnly();

export const costCalculationValueSchema = z.strictObject({
  key: z.string().min(1).max(500),
  sort: int32().default(0),
  type: z.union([z.literal(1), z.literal(2)]).describe("1 monetary, 2 percent"),
  // "" is the published client's currency of a value that has none (it sends every field); kept as sent.
  currency: z.union([z.literal(""), z.string().length(3).regex(/^[A-Z]{3}$/, "an ISO 4217 code")]).nullish().describe("an ISO 4217 code, or \"\""),
  monetaryValue: decimal().nullish(),
  percentageValue: decimal().nullish(),
  externalReference: shortText.nullish(),
  fxRate: decimal().nullish().describe("the published client's exchange rate of currency; kept and returned"),
});

/** Writable product fields with their types; input makes each nullish, output nullable. */
const writable = {
  sku: shortText,
  vendorSKU: shortText,
  ean: shortText,
  productName: text,
  variantName: text,
  status: z.number().int().min(1).max(7).describe("1 Inactive, 2 Active (default), 3 Outgoing, 4 Draft, 5 Placeholder, 6 Exclude, 7 Sample"),
  season: shortText,
  year: z
    .union([z.number().int().min(0).max(9999), z.string().max(4).regex(/^[0-9]{1,4}$/, "a year of up to 4 digits").transform(Number)])
    .describe("a number, or the published client's text (\"2026\"); answered as text"),
  department: text,
  gender: text,
  ageGroup: text,
  collection: text,
  color: text,
  size: text,
  brandName: shortText.describe("creates the brand when needed, matched case-insensitively"),
  categoryName: shortText.describe("creates the category when needed, matched case-insensitively"),
  subCategory: text,
  productType: z
    .union([text, z.number().int().min(0).max(999_999_999).transform(String)])
    .describe("text, or the published client's number (1 Standard, 2 Commission, 3 Local); answered as a number when it is a whole number"),
  merchandiseType: text,
  supplier: text,
  moq: count,
  ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`pimCustom${i + 1}`, text])),
  productGroupId: shortText,
  variantGroupId: shortText,
  imageUrl: text,
  startDate: isoDate,
  endDate: isoDate,
  productionLeadTimeDays: count,
  shippingLeadTimeDays: count,
  activePlanning: z.boolean().describe("default true"),
  costCalculationPrice: decimal(),
  costCalculationValues: z.array(costCalculationValueSchema).max(1000),
  externalAttributes: jsonObject(),
} as Record<string, z.ZodType>;

/** Read-only fields a client may send back; accepted and ignored. */
const readOnlyInput = Object.fromEntries(
  ["uuid", "brandId", "categoryId", "skuSynonyms", "prices", "createdAt", "updatedAt"].map((k) => [k, z.unknown().optional()]),
);
const writableInput = Object.fromEntries(Object.entries(writable).map(([k, s]) => [k, s.nullish()]));
const key = z.string().trim().min(1).max(500).describe("the business key, unique per account");

/** The published client's product fields (CONTRACT.md, "Compatibility with the published client"). */
const productCompatibility = {
  aliases: { productGroupID: "productGroupId", variantGroupID: "variantGroupId" },
  extras: [...PRODUCT_CLIENT_FIELDS],
  extrasInto: "externalAttributes",
};

/** POST /products, /products/batch: `key` required; `id` ignored. */
const productCreate = compatible({ key, id: z.unknown().optional(), ...writableInput, ...readOnlyInput }, productCompatibility);
export const productCreateSchema = productCreate.runtime;
export const productCreateDocumented = productCreate.documented;
/** PUT /products: found by `id` (the integer id, or the UUID) when sent, else by `key` (or an old key); fields not sent are kept. */
const productUpdate = compatible(
  { id: z.union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).transform(String), z.string().max(100)]).optional(), key: key.optional(), ...writableInput, ...readOnlyInput },
  productCompatibility,
  (p) => p.id !== undefined || p.key !== undefined,
  { message: "id or key is required", path: ["key"] },
);
export const productUpdateSchema = productUpdate.runtime;
export const productUpdateDocumented = productUpdate.documented;

/** A product's `prices` entry: the ProductPrice message (customPrices documented as nullable, as it always was). */
const priceSchema = z.object(answerShape(catalogueV1.ProductPriceSchema, { fields: { customPrices: z.record(z.string(), z.number()).nullable() } }));

export const productSchema = z
  .object({
    id: z.number().int().describe("the integer id (accepted wherever a product id is)"),
    uuid: z.string().uuid().describe("the internal id; also accepted wherever a product id is"),
    key: z.string(),
    ...Object.fromEntries(Object.entries(writable).map(([k, s]) => [k, s.nullable()])),
    year: z.string().nullable().describe("text, as the published client reads it"),
    productType: z.union([z.number().int(), z.string()]).nullable().describe("a number when the stored type is a whole number"),
    brandId: z.number().int().nullable().describe("the brand's integer id"),
    categoryId: z.number().int().nullable().describe("the category's integer id"),
    skuSynonyms: z.array(z.string()).describe("the product's old keys"),
    prices: z.array(priceSchema).describe("prices from all price lists"),
    createdAt: z.string().datetime(),
    updatedAt: z.string().datetime(),
    ...Object.fromEntries(PRODUCT_CLIENT_FIELDS.map((f) => [f, z.unknown().optional().meta({ deprecated: true, description: "sent by the published client, answered from externalAttributes under its name (when kept)" })])),
  })
  .meta({ id: "Product" });

/** The writable fields a client sent as null: a partial update clears them. */
export function nullFields(product: Record<string, unknown>): string[] {
  return Object.keys(product).filter((k) => product[k] === null && k !== "id" && !(k in readOnlyInput));
}

/** Only the writable fields (and `id` on update) go to the service. */
export function writableFields(product: Record<string, unknown>, keepId: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(product)) {
    if (k in readOnlyInput) continue;
    if (k === "id" && !keepId) continue;
    out[k] = v;
  }
  return out;
}

export const keySwitchSchema = z.strictObject({
  oldKey: key,
  key,
  sku: z.string().min(1).max(500),
  ean: shortText.nullish(),
  season: shortText.nullish(),
  productGroupId: shortText.nullish(),
  variantGroupId: shortText.nullish(),
}).meta({ id: "KeySwitchRequest" });

const MiB = 1024 * 1024;
const base64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
export const imageUploadSchema = z.strictObject({
  key,
  filename: z.string().min(1).max(500),
  imageData: z
    .string()
    .min(1)
    .max(Math.ceil((10 * MiB) / 3) * 4 + 4)
    .regex(base64, "base64-encoded image data")
    .refine((v) => Math.floor((v.replace(/=+$/, "").length * 3) / 4) <= 10 * MiB, "at most 10 MiB decoded")
    .describe("base64 PNG, JPEG, WebP or GIF, at most 10 MiB decoded"),
  season: shortText.nullish(),
  variantGroupId: shortText.nullish(),
});

export const brandSchema = z
  .object({ id: z.number().int().describe("the integer id"), uuid: z.string().describe("the internal id"), name: z.string(), synonyms: z.array(z.string()) })
  .meta({ id: "Brand" });
export const categorySchema = z.object({ id: z.number().int().describe("the integer id"), uuid: z.string().describe("the internal id"), name: z.string() }).meta({ id: "Category" });

export const MAPPING_TYPES = ["products", "transactions", "purchaseOrders", "distributionOrders", "stocks", "suppliers", "costCalculationValues"] as const;
export const mappingType = z.enum(MAPPING_TYPES);
export const mappingValues = z.record(z.string().max(500), z.string().max(10_000));
export const mappingTableSchema = z
  .object({ mappingField: z.string(), mappingType, mappingValues, updatedAt: z.string().datetime() })
  .meta({ id: "MappingTableResponse" });
