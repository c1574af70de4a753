import { z } from "zod";
import { dateOnly, int32 } from "../http/values";

/** zod shapes of the inventory's REST resources (CONTRACT.md, "Resources"). */

const shortText = z.string().max(500);
const timestamp = z.string().max(40).datetime({ offset: true }).describe("RFC 3339");

/**
 * Field names that differ only in letter case from the contract's are accepted (the published
 * client sends `externalWarehouseId`, `ID`, ...); answers use the contract's spelling. Both
 * spellings in one item is that item's 400 (the strict object then sees the unknown one).
 */
export function caseless<T extends z.ZodType>(fields: string[], schema: T) {
  const canonical = new Map(fields.map((f) => [f.toLowerCase(), f]));
  return z.preprocess((value) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const name = canonical.get(k.toLowerCase()) ?? k;
      out[name in out ? k : name] = v;
    }
    return out;
  }, schema);
}

export const warehouseSchema = z
  .object({
    ID: z.string().uuid(),
    externalId: z.string(),
    name: z.string(),
    centralWarehouse: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "Warehouse" });

const warehouseWriteFields = {
  externalId: z.string().min(1).max(500),
  name: shortText.default(""),
  centralWarehouse: z.boolean().default(false),
  // Read-only, ignored on input.
  ID: z.unknown().optional(),
  createdAt: z.unknown().optional(),
  updatedAt: z.unknown().optional(),
};
export const warehouseWriteSchema = caseless(Object.keys(warehouseWriteFields), z.strictObject(warehouseWriteFields)).meta({ id: "WarehouseUpsert" });
const warehousePutFields = { ...warehouseWriteFields, externalId: z.string().min(1).max(500).optional() };
export const warehousePutSchema = caseless(Object.keys(warehousePutFields), z.strictObject(warehousePutFields));

/** Text a GET answers as null when unset: null on input is the same as leaving it out. */
const nullableText = shortText.nullish().transform((v) => v ?? undefined);
const stockFields = {
  key: nullableText,
  sku: nullableText,
  ean: nullableText,
  supplier: nullableText,
  availableQuantity: int32(),
  physicalQuantity: int32().default(0),
  date: timestamp.describe("RFC 3339; the snapshot's time, at most a day in the future"),
  externalWarehouseID: z.string().min(1).max(500).optional().describe("required unless the path names the warehouse"),
  // Read-only (a row as GET answers it can be sent back), ignored on input.
  skuId: z.unknown().optional().describe("read-only, ignored"),
  warehouseId: z.unknown().optional().describe("read-only, ignored"),
  updatedAt: z.unknown().optional().describe("read-only, ignored"),
};
export const stockWriteSchema = caseless(
  Object.keys(stockFields),
  z.strictObject(stockFields).refine((r) => r.key || r.sku || r.ean, { message: "one of key, sku or ean is required", path: ["key"] }),
).meta({ id: "StockRowWrite" });

export const stockRowSchema = z
  .object({
    key: z.string(),
    sku: z.string().nullable(),
    ean: z.string().nullable(),
    supplier: z.string().nullable(),
    availableQuantity: z.number().int(),
    physicalQuantity: z.number().int(),
    date: z.string(),
    externalWarehouseID: z.string(),
    skuId: z.string(),
    warehouseId: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "StockRow" });

const optionalText = shortText.nullish().transform((v) => v ?? undefined);
const storeFields = {
  externalStoreId: z.string().min(1).max(500),
  name: shortText.default(""),
  trafficCounterID: optionalText,
  channelType: z
    .union([z.literal(0), z.literal(1), z.literal(2)])
    .nullish()
    .transform((v) => v || undefined)
    .describe("1 D2C, 2 B2B; 0 (the published client's unset) or null is none"),
  address: optionalText,
  address2: optionalText,
  zip: optionalText,
  city: optionalText,
  state: optionalText,
  countryCode: optionalText,
  currencyCode: optionalText.describe("ISO 4217 (e.g. SEK)"),
  warehouses: z
    .array(z.union([z.string().min(1).max(500), z.object({ externalId: z.string().min(1).max(500), name: z.unknown().optional() }).transform((w) => w.externalId)]))
    .max(1000)
    .nullish()
    .transform((v) => v ?? [])
    .describe("warehouses by externalId, or as the published client sends them ({name, externalId}, name ignored; null for none); an unknown one is a 400"),
  createdAt: z.unknown().optional(),
  updatedAt: z.unknown().optional(),
};

/** The published client spells address `adress`/`adress2`; both spellings with different values is a 400. */
function storeAliases(value: unknown) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [alias, name] of [["adress", "address"], ["adress2", "address2"]]) {
    const key = Object.keys(out).find((k) => k.toLowerCase() === alias);
    if (!key) continue;
    const aliasValue = out[key];
    delete out[key];
    if (name in out && out[name] !== aliasValue) out[`${alias} (differs from ${name})`] = aliasValue;
    else out[name] = aliasValue;
  }
  return out;
}
export const storeWriteSchema = z.preprocess(storeAliases, caseless(Object.keys(storeFields), z.strictObject(storeFields))).meta({ id: "StoreUpsert" });
const storePutFields = { ...storeFields, externalStoreId: storeFields.externalStoreId.optional() };
export const storePutSchema = z.preprocess(storeAliases, caseless(Object.keys(storePutFields), z.strictObject(storePutFields)));

export const storeSchema = z
  .object({
    externalStoreId: z.string(),
    name: z.string(),
    trafficCounterID: z.string().nullable(),
    channelType: z.number().int().nullable(),
    address: z.string().nullable(),
    address2: z.string().nullable(),
    zip: z.string().nullable(),
    city: z.string().nullable(),
    state: z.string().nullable(),
    countryCode: z.string().nullable(),
    currencyCode: z.string().nullable(),
    warehouses: z.array(z.object({ externalId: z.string(), name: z.string() })).describe("the store's warehouses as the published client reads them"),
    adress: z.string().nullable().meta({ deprecated: true, description: "the published client's spelling of address" }),
    adress2: z.string().nullable().meta({ deprecated: true, description: "the published client's spelling of address2" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: "Store" });

const count = z.number().int().min(0, "must not be negative").max(2 ** 31 - 1);
const trafficFields = {
  storeTrafficCounterID: z.string().min(1).max(500),
  eventTime: timestamp,
  incomingTraffic: count,
  outgoingTraffic: count,
  name: optionalText,
  storeID: optionalText,
};
export const trafficWriteSchema = caseless(Object.keys(trafficFields), z.strictObject(trafficFields)).meta({ id: "StoreTrafficEvent" });
export const trafficSchema = z
  .object({
    storeTrafficCounterID: z.string(),
    eventTime: z.string(),
    incomingTraffic: z.number().int(),
    outgoingTraffic: z.number().int(),
    name: z.string().nullable(),
    storeID: z.string().nullable(),
  })
  .meta({ id: "StoreTrafficEventResource" });

const isoDate = dateOnly();
const limit = count.nullish().transform((v) => v ?? undefined);
const triggerFields = {
  warehouseId: z.string().max(36).uuid().optional(),
  warehouseExternalId: z.string().min(1).max(500).optional(),
  key: z.string().min(1).max(500).describe("the SKU's key (or an old key)"),
  sku: optionalText,
  season: optionalText,
  // "" is the published client's unset date (its struct holds the dates as strings).
  startDate: z.union([z.literal("").transform(() => undefined), isoDate]).nullish().transform((v) => v ?? undefined),
  lastRestockDate: z.union([z.literal("").transform(() => undefined), isoDate]).nullish().transform((v) => v ?? undefined),
  preventRestock: z.boolean().default(false),
  lowerLimit: limit,
  min: limit,
  max: limit,
  upperLimit: limit,
  allowMinAuto: z.boolean().default(false),
  allowMaxAuto: z.boolean().default(false),
  minMaxSource: optionalText,
  minMaxUpdatedAt: timestamp.nullish().transform((v) => v ?? undefined),
  ID: z.unknown().optional(),
  skuId: z.unknown().optional(),
  skuUuid: z.unknown().optional(),
};
export const triggerWriteSchema = caseless(
  Object.keys(triggerFields),
  z.strictObject(triggerFields).refine((t) => t.warehouseId || t.warehouseExternalId, { message: "warehouseId or warehouseExternalId is required", path: ["warehouseId"] }),
).meta({ id: "StockTriggerWrite" });
export const triggerSchema = z
  .object({
    ID: z.number().int(),
    warehouseId: z.string(),
    warehouseExternalId: z.string(),
    skuId: z.number().int().nullable().describe("the product's integer id (null for a trigger not written since products had one)"),
    skuUuid: z.string().describe("the product's internal id"),
    sku: z.string().nullable(),
    key: z.string(),
    season: z.string().nullable(),
    startDate: z.string().nullable(),
    lastRestockDate: z.string().nullable(),
    preventRestock: z.boolean(),
    lowerLimit: z.number().int().nullable(),
    min: z.number().int().nullable(),
    max: z.number().int().nullable(),
    upperLimit: z.number().int().nullable(),
    allowMinAuto: z.boolean(),
    allowMaxAuto: z.boolean(),
    minMaxSource: z.string().nullable(),
    minMaxUpdatedAt: z.string().nullable(),
  })
  .meta({ id: "StockTriggerResource" });
