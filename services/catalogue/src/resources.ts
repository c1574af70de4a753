import { clone, create, isFieldSet } from "@bufbuild/protobuf";
import { catalogueV1, fieldRules } from "@analytics/contracts";
import { tableSpec, type Row } from "@analytics/db";

/**
 * The REST-shaped Product message and its rows. One rule keeps them together: a products column
 * has the name of the proto field it stores, so reading, writing and merging go field by field
 * over the message descriptor instead of three hand-written lists of fifty names.
 */

const { ProductSchema } = catalogueV1;
export type Product = catalogueV1.Product;
type ProductField = (typeof ProductSchema.fields)[number];

/**
 * products: the Product message's stored fields (brand and category names, old keys and prices
 * live elsewhere: not_stored). Postgres numbers and dates the row; cost calculation values stay
 * protobuf's JSON, as the table has kept them from the start (the streamed JSON reads that form).
 */
export const productsTable = tableSpec(ProductSchema, "products", { assigned: ["seq", "created_at", "updated_at"], protoJson: ["cost_calculation_values"] });

/** What a client writes: the fields its rules (proto) do not mark read-only, which the service fills. */
export const WRITABLE_FIELDS: ProductField[] = ProductSchema.fields.filter((f) => !fieldRules(f).readOnly);
/** `date` columns (column_type "date"), written and read as YYYY-MM-DD. */
export const DATE_FIELDS = new Set(ProductSchema.fields.filter((f) => fieldRules(f).columnType === "date").map((f) => f.name));

/** A products row as the repository reads it (productsTable's columns, then the brand's and category's and the old keys). */
export type ProductRow = Row & { id: string; key: string; sku: string | null; ean: string | null };

const get = (product: Product, field: ProductField) => (product as unknown as Record<string, unknown>)[field.localName];

export function productFromRow(row: ProductRow): Product {
  const product = productsTable.messageOf(row);
  // The fields kept in other tables, joined by the repository's read.
  if (row.brand_name != null) product.brandName = row.brand_name as string;
  if (row.category_name != null) product.categoryName = row.category_name as string;
  if (row.brand_seq != null) product.brandSeq = BigInt(row.brand_seq as string);
  if (row.category_seq != null) product.categorySeq = BigInt(row.category_seq as string);
  product.skuSynonyms = (row.sku_synonyms as string[] | undefined) ?? [];
  return product;
}

/** `target` with every writable field that `patch` carries (proto presence decides "sent"). */
export function withSentFields(target: Product, patch: Product): Product {
  const merged = clone(ProductSchema, target) as unknown as Record<string, unknown>;
  for (const field of WRITABLE_FIELDS) {
    if (isFieldSet(patch, field)) merged[field.localName] = get(patch, field);
  }
  return merged as unknown as Product;
}

// externalAttributes too: the column is never NULL, an empty object when nothing is sent.
const DEFAULTS = create(ProductSchema, { status: 2, activePlanning: true, externalAttributes: {} });

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
    // A copy: the empty externalAttributes object is not shared with DEFAULTS.
    out[field.localName] = Array.isArray(fallback) ? [] : structuredClone(fallback);
  }
  return out as unknown as Product;
}

/** brands, categories and mapping_tables: the columns of the Brand, Category and MappingTable messages (besides account_id, and a mapping table's seq). */
export const brandsTable = tableSpec(catalogueV1.BrandSchema, "brands", { assigned: ["id", "seq"] });
export const categoriesTable = tableSpec(catalogueV1.CategorySchema, "categories", { assigned: ["id", "seq"] });
export const mappingTablesTable = tableSpec(catalogueV1.MappingTableSchema, "mapping_tables", { assigned: ["updated_at"] });

/** A brand's or category's row. */
export interface NamedRow extends Row {
  id: string;
  seq: string;
  name: string;
  synonyms?: string[];
}

/** A mapping table's row. */
export interface MappingTableRow extends Row {
  mapping_field: string;
  mapping_type: string;
  mapping_values: Record<string, string>;
  updated_at: Date;
}

export const brandFromRow = (row: NamedRow): catalogueV1.Brand => brandsTable.messageOf(row);

export const categoryFromRow = (row: NamedRow): catalogueV1.Category => categoriesTable.messageOf(row);

export const mappingTableFromRow = (row: MappingTableRow): catalogueV1.MappingTable => mappingTablesTable.messageOf(row);
