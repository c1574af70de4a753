import { randomUUID } from "node:crypto";
import type { CopyValue, Db, Tx } from "@analytics/db";
import { copyRows, isIntegerId, isUuid, jsonArrayInSlices, lockedAtRevision, lockKeys, pageOfIds, pageWindow, REVISION_COLUMN, uuidsOfSeqs, withAccountVersion } from "@analytics/db";
import type { Page } from "@analytics/rpc";
import { DecimalSchema, PRODUCT_CLIENT_FIELDS, WHOLE_NUMBER_TEXT, catalogueV1 } from "@analytics/contracts";
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { DATE_FIELDS, brandsTable, categoriesTable, mappingTablesTable, productsTable, type MappingTableRow, type NamedRow, type ProductRow } from "./resources";

/**
 * The catalogue's SQL. Every statement is scoped by account_id, and every batch is a fixed
 * handful of statements whatever its size: rows travel as one jsonb parameter and are expanded
 * with jsonb_to_recordset / jsonb_populate_recordset, which also keeps clear of the 65535
 * parameter limit of one statement.
 */


export type { Page };

const asJson = (rows: unknown) => JSON.stringify(rows);

// ---------------------------------------------------------------------------------------------
// Products

/** What a write of an existing product sets: every written column but its id and key (a key changes only by key switch). */
const CHANGEABLE_COLUMNS = productsTable.columns.filter((c) => c !== "id" && c !== "key");

/** productsTable's columns, then the brand's and category's names and integer ids, the version and the old keys. */
const PRODUCT_SELECT = [
  productsTable.select("p"),
  "b.seq AS brand_seq",
  "c.seq AS category_seq",
  "p.version",
  "b.name AS brand_name",
  "c.name AS category_name",
  `COALESCE((SELECT array_agg(s.synonym ORDER BY s.created_at, s.synonym) FROM sku_synonyms s
     WHERE s.account_id = p.account_id AND s.product_id = p.id), '{}') AS sku_synonyms`,
].join(", ");

function products(db: Db | Tx) {
  return db("products as p")
    .leftJoin("brands as b", (on) => on.on("b.account_id", "p.account_id").andOn("b.id", "p.brand_id"))
    .leftJoin("categories as c", (on) => on.on("c.account_id", "p.account_id").andOn("c.id", "p.category_id"))
    .select(db.raw(PRODUCT_SELECT));
}

/** Only one of an account's product writes runs at a time, so a new key and a synonym never collide. */
export async function lockAccountProducts(tx: Tx, accountId: string): Promise<void> {
  await lockKeys(tx, [`catalogue.products:${accountId}`]);
}

export async function findProducts(db: Db | Tx, accountId: string, ids: string[]): Promise<ProductRow[]> {
  if (!ids.length) return [];
  return products(db).where("p.account_id", accountId).whereRaw("p.id = ANY(?::uuid[])", [ids]).orderBy(["p.seq", "p.id"]);
}

/** Every account's products in (account, seq) order, `limit` after `after` (catalogue migration 005 re-announces them). */
export async function productsPage(db: Db | Tx, after: { account_id: string; seq: number } | undefined, limit: number): Promise<(ProductRow & { account_id: string; seq: number })[]> {
  return products(db)
    .select("p.account_id")
    .whereRaw("(p.account_id, p.seq) > (?::uuid, ?::bigint)", [after?.account_id ?? "00000000-0000-0000-0000-000000000000", String(after?.seq ?? -1)])
    .orderBy(["p.account_id", "p.seq"])
    .limit(limit);
}

/*
 * GET /products' JSON of a product, built by Postgres: once parsed, what toRestJson writes for
 * the message productFromRow makes of the same row (field names in proto order, null when unset,
 * decimals with their stored digits, timestamps as UTC with milliseconds), minus `imageUrl` and
 * `prices`, which the gateway adds in their places. The text differs only in spacing inside the
 * JSON columns (Postgres writes jsonb as `{"a": 1}`). Generated from the Product descriptor, so a
 * new field cannot be forgotten here (a cost calculation value field of a kind without a rule
 * stops the service at start); the catalogue tests compare it with toRestJson field for field.
 */
const REST_TIMESTAMP = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const ADDED_BY_GATEWAY = new Set(["image_url", "prices"]);

/** A scalar or decimal field of a message stored as its proto JSON in jsonb `e`. */
function fromProtoJson(field: DescField, e: string): string {
  const at = `${e}->>'${field.jsonName}'`;
  if (field.fieldKind === "message" && field.message.typeName === DecimalSchema.typeName)
    return `CASE WHEN jsonb_typeof(${e}->'${field.jsonName}') = 'object' THEN COALESCE(NULLIF(${e}->'${field.jsonName}'->>'value', ''), '0')::numeric END`;
  if (field.fieldKind === "scalar") {
    const type = { [ScalarType.STRING]: "text", [ScalarType.INT32]: "int", [ScalarType.BOOL]: "boolean" }[field.scalar as number];
    // proto JSON leaves out a non-optional field at its default: "", 0, false.
    const zero = { text: "''", int: "0", boolean: "false" }[type ?? ""];
    if (type && zero) return field.proto.proto3Optional ? `(${at})::${type}` : `COALESCE((${at})::${type}, ${zero})`;
  }
  throw new Error(`no REST JSON rule for ${field.parent.typeName}.${field.name}`);
}

/** A list of messages stored as a jsonb array of their proto JSON, as a JSON array of REST objects. */
function restArrayOf(message: DescMessage, column: string): string {
  const fields = message.fields.map((f) => `${fromProtoJson(f, "x.e")} AS "${f.jsonName}"`).join(", ");
  // Most products have none: no subquery for those.
  return `CASE WHEN ${column} = '[]' THEN '[]'::json ELSE COALESCE((SELECT json_agg(row_to_json(v) ORDER BY x.n)
    FROM jsonb_array_elements(${column}) WITH ORDINALITY AS x(e, n), LATERAL (SELECT ${fields}) v), '[]'::json) END`;
}

function productJsonColumn(field: DescField): string {
  const column = `p.${field.name}`;
  if (field.name === "brand_name") return "b.name";
  if (field.name === "category_name") return "c.name";
  if (field.name === "sku_synonyms") return "COALESCE(s.synonyms, '{}')";
  if (DATE_FIELDS.has(field.name)) return `to_char(${column}, 'YYYY-MM-DD')`;
  if (field.fieldKind === "list" && field.listKind === "message") return restArrayOf(field.message, column);
  if (field.fieldKind === "message" && field.message.typeName === "google.protobuf.Timestamp") return `to_char(${column} AT TIME ZONE 'UTC', ${REST_TIMESTAMP})`;
  // numeric, jsonb (Struct), text, int, boolean and uuid columns are already their REST JSON.
  return column;
}

/**
 * A field's REST JSON columns, as productToRest (libs/contracts) writes them for the published
 * client: the integer ids as `id`, `brandId` and `categoryId` (the UUID as `uuid`), `year` as
 * text, a whole-number `productType` as a number. The client's additional fields that
 * externalAttributes holds follow `updatedAt` (clientFields below).
 */
function productJsonColumns(field: DescField): string[] {
  switch (field.name) {
    case "id":
      return [`p.seq AS "id"`, `p.id AS "uuid"`];
    case "brand_id":
      return [`b.seq AS "brandId"`];
    case "category_id":
      return [`c.seq AS "categoryId"`];
    case "year":
      return [`p.year::text AS "year"`];
    case "product_type":
      return [`CASE WHEN p.product_type ~ '${WHOLE_NUMBER_TEXT.source}' THEN to_jsonb(p.product_type::int) ELSE to_jsonb(p.product_type) END AS "productType"`];
    case "seq":
    case "brand_seq":
    case "category_seq":
      return [];
  }
  return [`${productJsonColumn(field)} AS "${field.jsonName}"`];
}

/**
 * The Product fields in proto order, cut where the gateway adds one (imageUrl, prices): each
 * part becomes a JSON object of its own, so that the gateway can put its fields in their places.
 */
const PRODUCT_JSON_PARTS: DescField[][] = [[]];
for (const field of catalogueV1.ProductSchema.fields) {
  if (ADDED_BY_GATEWAY.has(field.name)) PRODUCT_JSON_PARTS.push([]);
  else PRODUCT_JSON_PARTS[PRODUCT_JSON_PARTS.length - 1].push(field);
}
/**
 * The client's additional fields that externalAttributes holds, in PRODUCT_CLIENT_FIELDS order, as
 * a JSON object (NULL when it holds none): appended to the last part, so that a product without
 * them is not answered twenty nulls longer.
 */
const clientFieldNames = `ARRAY[${PRODUCT_CLIENT_FIELDS.map((f) => `'${f}'`).join(", ")}]::text[]`;
// Any of the names (jsonb_exists_any, the `?|` operator) first: products without them skip the aggregate.
const clientFields = `LATERAL (SELECT CASE WHEN jsonb_exists_any(p.external_attributes, ${clientFieldNames}) THEN
         (SELECT json_object_agg(e.key, e.value ORDER BY array_position(${clientFieldNames}, e.key))
          FROM jsonb_each(p.external_attributes) e WHERE e.key = ANY(${clientFieldNames})) END AS fields) cf`;
const last = PRODUCT_JSON_PARTS.length - 1;
const partColumns = PRODUCT_JSON_PARTS.map((_, n) =>
  n === last
    ? `CASE WHEN cf.fields IS NULL THEN row_to_json(r${n})::text ELSE left(row_to_json(r${n})::text, -1) || ',' || substr(cf.fields::text, 2) END AS part${n}`
    : `row_to_json(r${n})::text AS part${n}`,
).join(", ");
const partRecords = [...PRODUCT_JSON_PARTS.map((fields, n) => `LATERAL (SELECT ${fields.flatMap(productJsonColumns).join(", ")}) r${n}`), clientFields].join(",\n     ");

/** Each product's REST JSON as its parts (PRODUCT_JSON_PARTS), in creation order (StreamProductsJson). */
export async function findProductsJson(db: Db, accountId: string, ids: string[]): Promise<{ id: string; parts: string[]; image_url: string | null }[]> {
  if (!ids.length) return [];
  // Named: each connection parses and plans these 3 KB of SQL once. Parsing and planning them
  // anew cost Postgres as much as running them for 500 products (about 4-5 ms a chunk).
  const { rows } = await db.raw(
    `SELECT p.id, p.image_url, ${partColumns}
     FROM products p
     LEFT JOIN brands b ON b.account_id = p.account_id AND b.id = p.brand_id
     LEFT JOIN categories c ON c.account_id = p.account_id AND c.id = p.category_id
     LEFT JOIN (SELECT product_id, array_agg(synonym ORDER BY created_at, synonym) AS synonyms FROM sku_synonyms
                WHERE account_id = ? AND product_id = ANY(?::uuid[]) GROUP BY product_id) s ON s.product_id = p.id,
     ${partRecords}
     WHERE p.account_id = ? AND p.id = ANY(?::uuid[])
     ORDER BY p.seq, p.id`,
    [accountId, ids, accountId, ids],
  ).options({ name: "catalogue.find_products_json" });
  return rows.map((r: Record<string, string | null>) => ({ id: r.id!, image_url: r.image_url, parts: PRODUCT_JSON_PARTS.map((_, n) => r[`part${n}`]!) }));
}

export interface ProductFilter {
  key?: string;
  ids: string[];
  skus: string[];
  seasons: string[];
  productGroupIds: string[];
  variantGroupIds: string[];
}

function filtered(db: Db, accountId: string, f: ProductFilter) {
  const q = db("products as p").where("p.account_id", accountId);
  if (f.key !== undefined) {
    // A key names at most one product, as its key or an old key: two unique-index lookups (an
    // OR of both would scan the account), run once as an array. An IN (subquery) let the planner,
    // before autovacuum has analyzed a freshly loaded account, re-run the lookup per product.
    q.whereRaw(
      "p.id = ANY(ARRAY(SELECT id FROM products WHERE account_id = ? AND key = ? UNION ALL SELECT product_id FROM sku_synonyms WHERE account_id = ? AND synonym = ?))",
      [accountId, f.key, accountId, f.key],
    );
  }
  // A sku_id is a product's UUID or its integer id; anything else names no product.
  if (f.ids.length) {
    const uuids = f.ids.filter(isUuid);
    const seqs = f.ids.filter(isIntegerId);
    q.where((w) => w.whereIn("p.id", uuids).orWhereIn("p.seq", seqs));
  }
  if (f.skus.length) q.whereIn("p.sku", f.skus);
  if (f.seasons.length) q.whereIn("p.season", f.seasons);
  if (f.productGroupIds.length) q.whereIn("p.product_group_id", f.productGroupIds);
  if (f.variantGroupIds.length) q.whereIn("p.variant_group_id", f.variantGroupIds);
  return q;
}

/** One page in creation order and the filtered total (libs/db pageOfIds). */
export async function listProducts(db: Db, accountId: string, f: ProductFilter, page: Page) {
  const ids = pageOfIds(filtered(db, accountId, f), page, "p.seq", "p.id");
  const [rows, [{ count }]] = await Promise.all([
    products(db).whereIn("p.id", ids).orderBy("p.seq") as Promise<ProductRow[]>,
    filtered(db, accountId, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

/**
 * The ids of one page in creation order, the filtered total, for reading the rows in chunks, and
 * the account's data version read with the ids (their snapshot: the page's weak ETag).
 */
export async function pageOfProductIds(db: Db, accountId: string, f: ProductFilter, page: Page) {
  const [{ rows, version }, [{ count }]] = await Promise.all([
    withAccountVersion<{ id: string }>(db, accountId, pageOfIds(filtered(db, accountId, f), page, "p.seq", "p.id").select("p.seq"), "seq"),
    filtered(db, accountId, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { ids: rows.map((r) => r.id), total: Number(count), version };
}

/** Brand or category ids by lower-cased name, creating the names that do not exist yet. */
export async function ensureNamed(tx: Tx, table: "brands" | "categories", accountId: string, names: string[]) {
  const wanted = new Map<string, string>();
  for (const name of names) if (!wanted.has(name.toLowerCase())) wanted.set(name.toLowerCase(), name);
  if (!wanted.size) return { ids: new Map<string, string>(), created: [] as NamedRow[] };
  const fresh = [...wanted.values()].map((name) => ({ id: randomUUID(), account_id: accountId, name }));
  const created: { rows: NamedRow[] } = await tx.raw(
    `INSERT INTO ${table} (id, account_id, name)
     SELECT id, account_id, name FROM jsonb_to_recordset(?::jsonb) AS x(id uuid, account_id uuid, name text)
     ON CONFLICT (account_id, lower(name)) DO NOTHING
     RETURNING *`,
    [asJson(fresh)],
  );
  const rows: NamedRow[] = await tx(table).where({ account_id: accountId }).whereRaw("lower(name) = ANY(?)", [[...wanted.keys()]]);
  return { ids: new Map(rows.map((r) => [r.name.toLowerCase(), r.id])), created: created.rows };
}

const WRITTEN_COLUMNS = ["account_id", ...productsTable.columns];
const incoming = (c: string) => (c === "image_url" ? "COALESCE(EXCLUDED.image_url, products.image_url)" : `EXCLUDED.${c}`);
/**
 * A full write's conflict clause: an existing product of the key takes the incoming columns (an
 * image kept unless one is sent) and a new version, unless they are what it stores already.
 */
const UPSERT_BY_KEY = `ON CONFLICT (account_id, key) DO UPDATE SET ${CHANGEABLE_COLUMNS.map((c) => `${c} = ${incoming(c)}`).join(", ")}, updated_at = now(), version = products.version + 1
       WHERE (${CHANGEABLE_COLUMNS.map((c) => `products.${c}`).join(", ")}) IS DISTINCT FROM (${CHANGEABLE_COLUMNS.map(incoming).join(", ")})`;

/**
 * Creates or fully updates products by (account, key) in one statement. `image_url` is kept
 * when a write does not carry one: it is normally set by an image upload, and a system that
 * re-sends its products without knowing about images must not erase them. A product sent as it
 * is stored is left alone (`changed` false: no new version, `updated_at` kept).
 */
export async function writeProducts(tx: Tx, accountId: string, rows: Record<string, unknown>[]) {
  if (!rows.length) return [];
  const columns = WRITTEN_COLUMNS.join(", ");
  const result: { rows: { id: string; key: string; created: boolean; changed: boolean }[] } = await tx.raw(
    `WITH input AS (SELECT ${columns} FROM jsonb_populate_recordset(NULL::products, ?::jsonb)),
     written AS (
       INSERT INTO products (${columns})
       SELECT ${columns} FROM input
       ${UPSERT_BY_KEY}
       RETURNING id, key, (xmax = 0) AS created
     )
     SELECT COALESCE(w.id, p.id) AS id, i.key, COALESCE(w.created, false) AS created, w.id IS NOT NULL AS changed
     FROM input i
     LEFT JOIN written w ON w.key = i.key
     LEFT JOIN products p ON p.account_id = i.account_id AND p.key = i.key`,
    [await jsonArrayInSlices(rows, (r) => JSON.stringify({ ...r, id: randomUUID(), account_id: accountId }))],
  );
  return result.rows;
}

/**
 * The staging table of full product writes (docs/imports.md, "The staging engine"), one per
 * connection (temporary): a line's request position (`ord`) and its row. Emptied at each commit,
 * and at the start of each write, for a chunk whose lines repeat a key writes more than once in
 * one transaction (a DELETE costs nothing on the usual empty table, where TRUNCATE would make a
 * new file each time).
 */
const STAGE = `
  CREATE TEMP TABLE IF NOT EXISTS staged_products (ord integer NOT NULL, ${productsTable.recordType}) ON COMMIT DELETE ROWS;
  DELETE FROM staged_products`;

/**
 * `rows` (each its position `ord` and its products row but the account) COPYed into
 * staged_products, each with a new id (which only a new product keeps).
 */
export async function stageProducts(tx: Tx, rows: { ord: number; row: Record<string, unknown> }[]): Promise<void> {
  await tx.raw(STAGE);
  const row = (r: Record<string, unknown>, c: string) => (c === "id" ? randomUUID() : (r[c] as CopyValue));
  await copyRows(tx, "staged_products", ["ord", ...productsTable.columns], rows, ({ ord, row: r }) => [ord, ...productsTable.columns.map((c) => row(r, c))]);
}

/**
 * Writes the staged products (one a key) by key in one statement, as writeProducts writes, in
 * `ord` order (new products take their integer ids in it). Answers each product created or
 * changed as stored (findProducts' row, in its order), with `created`; a product sent as stored
 * is left alone and not answered.
 */
export async function writeStagedProducts(tx: Tx, accountId: string): Promise<(ProductRow & { created: boolean })[]> {
  const columns = productsTable.columns.join(", ");
  const { rows } = await tx.raw(
    `WITH written AS (
       INSERT INTO products (${WRITTEN_COLUMNS.join(", ")})
       SELECT ?::uuid, ${columns} FROM staged_products ORDER BY ord
       ${UPSERT_BY_KEY}
       RETURNING products.*, (xmax = 0) AS created
     )
     SELECT ${PRODUCT_SELECT}, p.created
     FROM written p
     LEFT JOIN brands b ON b.account_id = p.account_id AND b.id = p.brand_id
     LEFT JOIN categories c ON c.account_id = p.account_id AND c.id = p.category_id
     ORDER BY p.seq, p.id`,
    [accountId],
  );
  return rows;
}

export interface SkuRef {
  key?: string;
  sku?: string;
  ean?: string;
  seq?: bigint;
  /** The product's UUID (checked as one by the caller). */
  id?: string;
}

export interface SkuMatch {
  id: string;
  seq: string;
  key: string;
  sku: string | null;
  ean: string | null;
}

/**
 * Resolves references in one query. The first identifier a reference carries decides: a key
 * matches a current key, then an old key; a sku or an ean the oldest product carrying it; an
 * integer id or a UUID the product of that id.
 */
export async function resolveReferences(db: Db | Tx, accountId: string, refs: SkuRef[]): Promise<(SkuMatch | undefined)[]> {
  if (!refs.length) return [];
  const input = refs.map((r, ord) => ({
    ord,
    key: r.key ?? null,
    sku: r.key === undefined ? (r.sku ?? null) : null,
    ean: r.key === undefined && r.sku === undefined ? (r.ean ?? null) : null,
    seq: r.key === undefined && r.sku === undefined && r.ean === undefined && r.seq !== undefined ? String(r.seq) : null,
    id: r.key === undefined && r.sku === undefined && r.ean === undefined && r.seq === undefined ? (r.id ?? null) : null,
  }));
  const result: { rows: (SkuMatch & { ord: number })[] } = await db.raw(
    `SELECT r.ord, m.id, m.seq, m.key, m.sku, m.ean
     FROM jsonb_to_recordset(:refs::jsonb) AS r(ord int, key text, sku text, ean text, seq bigint, id uuid)
     JOIN LATERAL (
       (SELECT p.id, p.seq, p.key, p.sku, p.ean FROM products p WHERE p.account_id = :account AND p.key = r.key)
       UNION ALL
       (SELECT p.id, p.seq, p.key, p.sku, p.ean FROM sku_synonyms s JOIN products p ON p.id = s.product_id
         WHERE s.account_id = :account AND s.synonym = r.key)
       UNION ALL
       (SELECT p.id, p.seq, p.key, p.sku, p.ean FROM products p WHERE p.account_id = :account AND p.sku = r.sku ORDER BY p.seq LIMIT 1)
       UNION ALL
       (SELECT p.id, p.seq, p.key, p.sku, p.ean FROM products p WHERE p.account_id = :account AND p.ean = r.ean ORDER BY p.seq LIMIT 1)
       UNION ALL
       (SELECT p.id, p.seq, p.key, p.sku, p.ean FROM products p WHERE p.account_id = :account AND p.seq = r.seq)
       UNION ALL
       (SELECT p.id, p.seq, p.key, p.sku, p.ean FROM products p WHERE p.account_id = :account AND p.id = r.id)
       LIMIT 1
     ) m ON true`,
    { refs: asJson(input), account: accountId },
  );
  const byOrd = new Map(result.rows.map(({ ord, ...match }) => [ord, match]));
  return refs.map((_, ord) => byOrd.get(ord));
}

/** Product UUIDs by integer id (as text). */
export async function productIdsOfSeqs(db: Db | Tx, accountId: string, seqs: string[]): Promise<Map<string, string>> {
  return uuidsOfSeqs(db, "products", accountId, seqs);
}

/**
 * The product each of `keys` names, as its current key or an old one: its id and its current key
 * (a key naming no product is left out). Probes of the unique indexes by the keys themselves: the
 * general lookup (resolveReferences), planned on a growing account's stale statistics, scanned
 * all of the account's products for each key, seconds a 1000-line chunk (docs/benchmarks.md).
 */
export async function keyOwners(tx: Tx, accountId: string, keys: string[]): Promise<Map<string, { id: string; key: string }>> {
  if (!keys.length) return new Map();
  const result: { rows: { named: string; id: string; key: string }[] } = await tx.raw(
    `SELECT key AS named, id, key FROM products WHERE account_id = :account AND key = ANY(:keys)
     UNION ALL
     SELECT s.synonym, p.id, p.key FROM sku_synonyms s JOIN products p ON p.id = s.product_id WHERE s.account_id = :account AND s.synonym = ANY(:keys)`,
    { account: accountId, keys },
  );
  return new Map(result.rows.map((r) => [r.named, { id: r.id, key: r.key }]));
}

export interface KeySwitchRow {
  id: string;
  /** The product's key before the switch; it becomes a synonym. */
  previous_key: string;
  key: string;
  sku: string;
  ean?: string;
  season?: string;
  product_group_id?: string;
  variant_group_id?: string;
}

/** Applies validated key switches: old keys become synonyms, a new key stops being one. */
/**
 * Applies key switches; returns the ids of the products that changed (a switch that sets what the
 * product has already, a re-send, changes nothing: no new version).
 */
export async function switchKeys(tx: Tx, accountId: string, switches: KeySwitchRow[]): Promise<Set<string>> {
  if (!switches.length) return new Set();
  await tx("sku_synonyms")
    .where({ account_id: accountId })
    .whereIn("synonym", switches.map((s) => s.key))
    .delete();
  const switched = `x.key, x.sku, COALESCE(x.ean, p.ean), COALESCE(x.season, p.season), COALESCE(x.product_group_id, p.product_group_id),
    COALESCE(x.variant_group_id, p.variant_group_id)`;
  const changed: { rows: { id: string }[] } = await tx.raw(
    `UPDATE products p SET (key, sku, ean, season, product_group_id, variant_group_id) = (${switched}), updated_at = now(), version = p.version + 1
     FROM jsonb_to_recordset(?::jsonb)
       AS x(id uuid, key text, sku text, ean text, season text, product_group_id text, variant_group_id text)
     WHERE p.account_id = ? AND p.id = x.id
       AND (p.key, p.sku, p.ean, p.season, p.product_group_id, p.variant_group_id) IS DISTINCT FROM (${switched})
     RETURNING p.id`,
    [asJson(switches), accountId],
  );
  const synonyms = switches
    .filter((s) => s.previous_key !== s.key)
    .map((s) => ({ account_id: accountId, synonym: s.previous_key, product_id: s.id }));
  if (synonyms.length) await tx("sku_synonyms").insert(synonyms).onConflict(["account_id", "synonym"]).ignore();
  return new Set(changed.rows.map((r) => r.id));
}

// ---------------------------------------------------------------------------------------------
// Images

export interface ImageRow {
  sha256: string;
  content_type: string;
  bytes: Buffer;
}

export async function storeImages(tx: Tx, accountId: string, images: ImageRow[]): Promise<void> {
  if (!images.length) return;
  await tx("images")
    .insert(images.map((i) => ({ ...i, account_id: accountId })))
    .onConflict(["account_id", "sha256"])
    .ignore();
}

export interface ImageTarget {
  /** Position in the request: of two uploads reaching one product, the later wins. */
  ord: number;
  product_id: string;
  image_url: string;
  /** Also every product of this variant group (and season, when given). */
  variant_group_id: string | null;
  season: string | null;
}

/**
 * Removes products' images (a full write that sent imageUrl: null); returns the ids of the
 * products that had one. A product `versioned` already (written by this transaction) keeps its
 * new version: one write is one version, so consumers holding a version for the one before it
 * (the events queue) never wait for a version no message carries.
 */
export async function clearImageUrls(tx: Tx, accountId: string, ids: string[], versioned: string[] = []): Promise<string[]> {
  if (!ids.length) return [];
  const cleared: { id: string }[] = await tx("products")
    .where({ account_id: accountId })
    .whereRaw("id = ANY(?::uuid[])", [ids])
    .whereNotNull("image_url")
    .update({ image_url: null, updated_at: tx.fn.now(), version: tx.raw("CASE WHEN id = ANY(?::uuid[]) THEN version ELSE version + 1 END", [versioned]) }, ["id"]);
  return cleared.map((r) => r.id);
}

/**
 * Sets image URLs. Returns the ids of the products that changed (one that has the image already
 * does not) and the `ord`s of the targets that reach one of them (the others changed nothing).
 */
export async function setImageUrls(tx: Tx, accountId: string, targets: ImageTarget[]): Promise<{ changed: string[]; setting: Set<number> }> {
  if (!targets.length) return { changed: [], setting: new Set() };
  const result: { rows: { id: string; ords: number[] }[] } = await tx.raw(
    `WITH reach AS (
       SELECT x.ord, q.id, x.image_url
       FROM jsonb_to_recordset(:targets::jsonb) AS x(ord int, product_id uuid, image_url text, variant_group_id text, season text)
       JOIN products q ON q.account_id = :account AND (q.id = x.product_id
         OR (q.variant_group_id = x.variant_group_id AND (x.season IS NULL OR q.season = x.season)))
     ), changed AS (
       UPDATE products p SET image_url = t.image_url, updated_at = now(), version = p.version + 1
       FROM (SELECT DISTINCT ON (id) id, image_url FROM reach ORDER BY id, ord DESC) t
       WHERE p.id = t.id AND p.image_url IS DISTINCT FROM t.image_url
       RETURNING p.id
     )
     SELECT c.id, array_agg(r.ord) AS ords FROM changed c JOIN reach r ON r.id = c.id GROUP BY c.id`,
    { targets: asJson(targets), account: accountId },
  );
  return { changed: result.rows.map((r) => r.id), setting: new Set(result.rows.flatMap((r) => r.ords)) };
}

export async function findImage(db: Db, accountId: string, sha256: string): Promise<ImageRow | undefined> {
  return db("images").select("sha256", "content_type", "bytes").where({ account_id: accountId, sha256 }).first();
}

// ---------------------------------------------------------------------------------------------
// Brands and categories

export interface BrandFilter {
  name?: string;
  id?: string;
}

function filteredBrands(db: Db, accountId: string, f: BrandFilter) {
  const q = db("brands").where({ account_id: accountId });
  if (f.name !== undefined) {
    const name = f.name.toLowerCase();
    q.where((w) => w.whereRaw("lower(name) = ?", [name]).orWhereRaw("? = ANY(SELECT lower(s) FROM unnest(synonyms) s)", [name]));
  }
  if (f.id !== undefined) {
    if (isUuid(f.id)) q.where({ id: f.id });
    else if (isIntegerId(f.id)) q.where({ seq: f.id });
    else q.whereRaw("false");
  }
  return q;
}

export async function listBrands(db: Db, accountId: string, f: BrandFilter, page: Page) {
  const { limit, offset } = pageWindow(page);
  const [rows, [{ count }]] = await Promise.all([
    filteredBrands(db, accountId, f).select(db.raw(brandsTable.select())).orderBy(["seq", "id"]).limit(limit).offset(offset) as Promise<NamedRow[]>,
    filteredBrands(db, accountId, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

/** A brand or category by its UUID or its integer id. */
export async function findNamed(db: Db, table: "brands" | "categories", accountId: string, id: string): Promise<NamedRow | undefined> {
  if (isUuid(id)) return db(table).select("*").where({ account_id: accountId, id }).first();
  if (isIntegerId(id)) return db(table).select("*").where({ account_id: accountId, seq: id }).first();
  return undefined;
}

export async function listCategories(db: Db, accountId: string): Promise<NamedRow[]> {
  return db("categories").select(db.raw(categoriesTable.select())).where({ account_id: accountId }).orderBy(["seq", "id"]);
}

// ---------------------------------------------------------------------------------------------
// Mapping tables

/** A mapping table's columns (mappingTablesTable's), as its statements select and return them. */
const MAPPING_COLUMNS = mappingTablesTable.fields.map(mappingTablesTable.column);

export interface MappingTableId {
  accountId: string;
  mappingType: string;
  mappingField: string;
}

/** A table's row, by its key. */
export const mappingWhere = (id: MappingTableId) => ({ account_id: id.accountId, mapping_type: id.mappingType, mapping_field: id.mappingField });

/** Locks a mapping table's row for a write; false when it is gone or (If-Match) at another revision. */
export const lockMappingTableAt = (tx: Tx, id: MappingTableId, ifRevision: string | undefined) => lockedAtRevision(tx, "mapping_tables", mappingWhere(id), ifRevision);

export async function listMappingTables(db: Db, accountId: string, mappingType?: string): Promise<MappingTableRow[]> {
  const q = db("mapping_tables").select(MAPPING_COLUMNS).where({ account_id: accountId });
  if (mappingType !== undefined) q.andWhere({ mapping_type: mappingType });
  return q.orderBy("seq");
}

/** A table and its revision (If-Match). */
export async function findMappingTable(db: Db, id: MappingTableId): Promise<(MappingTableRow & { revision: string }) | undefined> {
  return db("mapping_tables").select([...MAPPING_COLUMNS, db.raw(REVISION_COLUMN)]).where(mappingWhere(id)).first();
}

/** Adds or replaces the keys of `values` in an existing table; undefined when there is none. */
/** Adds or replaces the keys sent (undefined: no such table); `changed` false when all were stored as sent. */
export async function mergeMappingTable(tx: Tx, id: MappingTableId, values: Record<string, string>) {
  const [row] = await tx("mapping_tables")
    .where(mappingWhere(id))
    .whereRaw("mapping_values IS DISTINCT FROM mapping_values || ?::jsonb", [asJson(values)])
    .update({ mapping_values: tx.raw("mapping_values || ?::jsonb", [asJson(values)]), updated_at: tx.fn.now() })
    .returning(MAPPING_COLUMNS);
  if (row) return { ...(row as MappingTableRow), changed: true };
  const current = await findMappingTable(tx, id);
  return current && { ...current, changed: false };
}

/** Creates the table or replaces its values; `changed` false when they were stored as sent. */
export async function upsertMappingTable(tx: Tx, id: MappingTableId, values: Record<string, string>) {
  const [row] = await tx("mapping_tables")
    .insert({ ...mappingWhere(id), mapping_values: asJson(values) })
    .onConflict(["account_id", "mapping_type", "mapping_field"])
    .merge({ mapping_values: asJson(values), updated_at: tx.fn.now() })
    .whereRaw("mapping_tables.mapping_values IS DISTINCT FROM excluded.mapping_values")
    .returning([...MAPPING_COLUMNS, tx.raw("(xmax = 0) AS created")]);
  if (row) return { ...(row as MappingTableRow & { created: boolean }), changed: true };
  return { ...(await findMappingTable(tx, id))!, created: false, changed: false };
}

export async function deleteMappingTable(tx: Tx, id: MappingTableId) {
  const [row] = await tx("mapping_tables").where(mappingWhere(id)).delete().returning(MAPPING_COLUMNS);
  return row as MappingTableRow | undefined;
}
