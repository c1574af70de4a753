import { z } from "zod";
import { int32 } from "../http/values";

/** zod shapes of the inventory's REST resources (CONTRACT.md, "Resources"). */

const shortText = z.string().max(500);
const timestamp = z.string().datetime({ offset: true }).describe("RFC 3339");

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

const stockFields = {
  key: shortText.optional(),
  sku: shortText.optional(),
  ean: shortText.optional(),
  supplier: shortText.optional(),
  availableQuantity: int32(),
  physicalQuantity: int32().default(0),
  date: timestamp,
  externalWarehouseID: z.string().min(1).max(500).optional().describe("required unless the path names the warehouse"),
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
