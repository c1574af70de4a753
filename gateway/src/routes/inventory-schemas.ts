import { z } from "zod";
import { fromRestJson, inventoryV1 } from "@analytics/contracts";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import { dateOnly } from "../http/values";

/**
 * zod shapes of the inventory's REST resources (CONTRACT.md, "Resources"): the Warehouse,
 * StockRow, Store, StoreTrafficEvent and StockTrigger messages' fields and rules, with what REST
 * does differently named here.
 */

const { StockRowSchema, StockTriggerSchema, StoreSchema, StoreTrafficEventSchema, WarehouseSchema } = inventoryV1;

const shortText = z.string().max(500);
/** The instants a proto Timestamp holds: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z. */
const TIMESTAMP_MIN_MS = new Date("0001-01-01T00:00:00Z").getTime();
const TIMESTAMP_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** RFC 3339 with any offset, sent on as its instant in UTC; a year 0000 or an offset past 9999 is the field's 400. */
const timestamp = z
  .string()
  .max(40)
  .datetime({ offset: true })
  .transform((v, ctx) => {
    const ms = new Date(v).getTime();
    if (!(ms >= TIMESTAMP_MIN_MS && ms <= TIMESTAMP_MAX_MS)) {
      ctx.addIssue({ code: "custom", message: "must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z" });
      return z.NEVER;
    }
    return new Date(ms).toISOString();
  })
  .meta({ format: "date-time" })
  .describe("RFC 3339");
/** Inventory's timestamps; null is refused for a field without presence (it takes its default when left out). */
const inventoryFields = { timestamp, nullForDefault: false };

/**
 * The message of a validated body: read-only fields (and `drop`) left out, null and undefined read
 * as not set (timestamps arrive as the UTC instants `timestamp` made of them).
 */
export function messageOfBody<D extends DescMessage>(schema: D, body: Record<string, unknown>, drop: readonly string[] = []): MessageShape<D> {
  const sent = Object.entries(withoutReadOnly(schema, body)).filter(([k, v]) => v !== undefined && v !== null && !drop.includes(k));
  return fromRestJson(schema, Object.fromEntries(sent));
}

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

export const warehouseSchema = z.object(answerShape(WarehouseSchema, { fields: { ID: z.string().uuid() } })).meta({ id: "Warehouse" });

const warehouseWriteFields = requestShape(WarehouseSchema, inventoryFields);
export const warehouseWriteSchema = caseless(Object.keys(warehouseWriteFields), z.strictObject(warehouseWriteFields)).meta({ id: "WarehouseUpsert" });
const warehousePutFields = { ...warehouseWriteFields, externalId: warehouseWriteFields.externalId.optional() };
export const warehousePutSchema = caseless(Object.keys(warehousePutFields), z.strictObject(warehousePutFields));

/** Text a GET answers as null when unset: null on input is the same as leaving it out. */
const nullableText = shortText.nullish().transform((v) => v ?? undefined);
// Read-only fields (a row as GET answers it can be sent back) are ignored on input. A row names
// its SKU by key, sku or ean: key is no more required than the others here.
export const stockFields = requestShape(StockRowSchema, {
  ...inventoryFields,
  fields: { key: nullableText, externalWarehouseID: z.string().min(1).max(500).optional().describe("required unless the path names the warehouse") },
});
export const stockWriteSchema = caseless(
  Object.keys(stockFields),
  z.strictObject(stockFields).refine((r) => r.key || r.sku || r.ean, { message: "one of key, sku or ean is required", path: ["key"] }),
).meta({ id: "StockRowWrite" });

/** A stock row as answered: its date is always there. */
export const stockRowSchema = z.object(answerShape(StockRowSchema, { fields: { date: z.string() } })).meta({ id: "StockRow" });

const storeFields = requestShape(StoreSchema, {
  ...inventoryFields,
  fields: {
    // 0 is the published client's unset.
    channelType: z
      .union([z.literal(0), z.literal(1), z.literal(2)])
      .nullish()
      .transform((v) => v || undefined),
    // The published client sends warehouses as {name, externalId} objects.
    warehouses: z
      .array(z.union([z.string().min(1).max(500), z.object({ externalId: z.string().min(1).max(500), name: z.unknown().optional() }).transform((w) => w.externalId)]))
      .max(1000)
      .nullish()
      .transform((v) => v ?? []),
  },
});

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
    ...answerShape(StoreSchema, {
      fields: { warehouses: z.array(z.object({ externalId: z.string(), name: z.string() })).describe("the store's warehouses as the published client reads them") },
    }),
    adress: z.string().nullable().meta({ deprecated: true, description: "the published client's spelling of address" }),
    adress2: z.string().nullable().meta({ deprecated: true, description: "the published client's spelling of address2" }),
  })
  .meta({ id: "Store" });

const trafficFields = requestShape(StoreTrafficEventSchema, inventoryFields);
export const trafficWriteSchema = caseless(Object.keys(trafficFields), z.strictObject(trafficFields)).meta({ id: "StoreTrafficEvent" });
/** A traffic event as answered: its time is always there. */
export const trafficSchema = z.object(answerShape(StoreTrafficEventSchema, { fields: { eventTime: z.string() } })).meta({ id: "StoreTrafficEventResource" });

/**
 * "" is the published client's unset text (its structs hold dates and the warehouse's names as
 * strings without omitempty): the same as leaving the field out.
 */
const emptyIsUnset = <T extends z.ZodType>(schema: T) => z.union([z.literal("").transform(() => undefined), schema]);
const restDate = emptyIsUnset(dateOnly()).nullish().transform((v) => v ?? undefined);
const triggerFields: Record<string, z.ZodType> = {
  ...requestShape(StockTriggerSchema, {
    ...inventoryFields,
    // skuSeq is the service's (answered as skuId).
    omit: ["skuSeq"],
    fields: {
      // The warehouse is named by either; the refinement below wants one. The published client
      // sends both, the one it does not use as "".
      warehouseId: emptyIsUnset(z.string().max(36).uuid()).optional(),
      warehouseExternalId: emptyIsUnset(z.string().min(1).max(500)).optional(),
      startDate: restDate,
      lastRestockDate: restDate,
    },
  }),
  skuUuid: z.unknown().optional().describe("read-only"),
};
export const triggerWriteSchema = caseless(
  Object.keys(triggerFields),
  z.strictObject(triggerFields).refine((t: Record<string, unknown>) => t.warehouseId || t.warehouseExternalId, { message: "warehouseId or warehouseExternalId is required", path: ["warehouseId"] }),
).meta({ id: "StockTriggerWrite" });
export const triggerSchema = z
  .object({
    ...answerShape(StockTriggerSchema, {
      omit: ["skuSeq"],
      fields: { skuId: z.number().int().nullable().describe("the product's integer id (null for a trigger not written since products had one)") },
    }),
    skuUuid: z.string().describe("the product's internal id"),
  })
  .meta({ id: "StockTriggerResource" });
