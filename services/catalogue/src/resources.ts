import { ScalarType, clone, create, fromJson, isFieldSet, toJson, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DecimalSchema, catalogueV1, fieldRules, type Decimal } from "@analytics/contracts";

/**
 * The REST-shaped Product message and its rows. One rule keeps them together: a products column
 * has the name of the proto field it stores, so reading, writing and merging go field by field
 * over the message descriptor instead of three hand-written lists of fifty names.
 */

const { ProductSchema, CostCalculationValueSchema } = catalogueV1;
export type Product = catalogueV1.Product;
type ProductField = (typeof ProductSchema.fields)[number];

/** What a client writes: the fields its rules (proto) do not mark read-only, which the service fills. */
export const WRITABLE_FIELDS: ProductField[] = ProductSchema.fields.filter((f) => !fieldRules(f).readOnly);
/** Writable fields with a products column of their own (brand and category names live in their tables: not_stored). */
export const STORED_FIELDS = WRITABLE_FIELDS.filter((f) => !fieldRules(f).notStored);
/** `date` columns (column_type "date"), written and read as YYYY-MM-DD. */
export const DATE_FIELDS = new Set(ProductSchema.fields.filter((f) => fieldRules(f).columnType === "date").map((f) => f.name));

/** A products row as the repository reads it (dates already as YYYY-MM-DD text). */
export type ProductRow = Record<string, unknown> & { id: string; key: string; sku: string | null; ean: string | null };

const get = (product: Product, field: ProductField) => (product as unknown as Record<string, unknown>)[field.localName];

export function productFromRow(row: ProductRow): Product {
  const init: Record<string, unknown> = {};
  for (const field of ProductSchema.fields) {
    const value = row[field.name];
    if (value === null || value === undefined) continue;
    if (field.name === "cost_calculation_values") {
      init[field.localName] = (value as JsonValue[]).map((v) => fromJson(CostCalculationValueSchema, v));
    } else if (field.fieldKind === "message" && field.message.typeName === "google.protobuf.Timestamp") {
      init[field.localName] = timestampFromDate(value as Date);
    } else if (field.fieldKind === "message" && field.message.typeName === DecimalSchema.typeName) {
      // numeric comes back as its exact text
      init[field.localName] = { value: String(value) };
    } else if (field.fieldKind === "scalar" && field.scalar === ScalarType.INT64) {
      // bigint columns come back as text
      init[field.localName] = BigInt(value as string);
    } else {
      init[field.localName] = value;
    }
  }
  return create(ProductSchema, init as MessageInitShape<typeof ProductSchema>);
}

/** The stored columns of a complete product (unset means NULL, or the empty list/object). */
export function productColumns(product: Product): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const field of STORED_FIELDS) {
    const value = get(product, field);
    if (field.name === "cost_calculation_values") {
      columns[field.name] = product.costCalculationValues.map((v) => toJson(CostCalculationValueSchema, v));
    } else if (field.name === "external_attributes") {
      columns[field.name] = value ?? {};
    } else if (field.fieldKind === "message" && field.message.typeName === DecimalSchema.typeName) {
      columns[field.name] = (value as Decimal | undefined)?.value ?? null;
    } else {
      columns[field.name] = value ?? null;
    }
  }
  return columns;
}

/** `target` with every writable field that `patch` carries (proto presence decides "sent"). */
export function withSentFields(target: Product, patch: Product): Product {
  const merged = clone(ProductSchema, target) as unknown as Record<string, unknown>;
  for (const field of WRITABLE_FIELDS) {
    if (isFieldSet(patch, field)) merged[field.localName] = get(patch, field);
  }
  return merged as unknown as Product;
}

const DEFAULTS = create(ProductSchema, { status: 2, activePlanning: true });

/** A full create: what is not sent takes its default. */
export function newProduct(input: Product): Product {
  return withSentFields(clone(ProductSchema, DEFAULTS), input);
}

/** Writable fields by REST name (`imageUrl`). */
const BY_REST_NAME = new Map(WRITABLE_FIELDS.map((f) => [f.jsonName, f]));

/** REST names that are not writable fields, or cannot be cleared (the key). */
export function unclearable(jsonNames: string[]): string[] {
  return jsonNames.filter((name) => name === "key" || !BY_REST_NAME.has(name));
}

/** `target` with the named fields (REST names) back at their defaults: a field sent as null. */
export function withClearedFields(target: Product, jsonNames: string[]): Product {
  const out = clone(ProductSchema, target) as unknown as Record<string, unknown>;
  for (const name of jsonNames) {
    const field = BY_REST_NAME.get(name);
    if (!field || field.name === "key") continue;
    const fallback = (DEFAULTS as unknown as Record<string, unknown>)[field.localName];
    out[field.localName] = Array.isArray(fallback) ? [] : fallback;
  }
  return out as unknown as Product;
}

/** A brand's or category's row. */
export interface NamedRow {
  id: string;
  seq: string;
  name: string;
  synonyms?: string[];
}

/** A mapping table's row. */
export interface MappingTableRow {
  mapping_field: string;
  mapping_type: string;
  mapping_values: Record<string, string>;
  updated_at: Date;
}

export function brandFromRow(row: NamedRow): catalogueV1.Brand {
  return create(catalogueV1.BrandSchema, { id: row.id, seq: BigInt(row.seq), name: row.name, synonyms: row.synonyms ?? [] });
}

export function categoryFromRow(row: NamedRow): catalogueV1.Category {
  return create(catalogueV1.CategorySchema, { id: row.id, seq: BigInt(row.seq), name: row.name });
}

export function mappingTableFromRow(row: MappingTableRow): catalogueV1.MappingTable {
  return create(catalogueV1.MappingTableSchema, {
    mappingField: row.mapping_field,
    mappingType: row.mapping_type,
    mappingValues: row.mapping_values,
    updatedAt: timestampFromDate(row.updated_at),
  });
}
