import { randomUUID } from "node:crypto";
import type { Db, Tx } from "@analytics/db";
import { pageOfIds } from "@analytics/db";

/**
 * Pricing's SQL. Every statement is scoped by account_id, and every batch is a fixed handful of
 * statements whatever its size: rows travel as one jsonb parameter (jsonb_to_recordset).
 */

export interface Page {
  page: number;
  pageSize: number;
}

const asJson = (rows: unknown) => JSON.stringify(rows);

// ---------------------------------------------------------------------------------------------
// Price lists

export interface PriceListRow {
  id: string;
  external_id: string;
  name: string;
  currency: string;
  default_price_list: boolean;
  default_vat: string;
  version: number;
  created_at: Date;
  updated_at: Date;
  created?: boolean;
}

export interface PriceListWrite {
  external_id: string;
  name: string;
  currency: string;
  default_price_list: boolean;
  default_vat: string;
}

export async function listPriceLists(db: Db, accountId: string): Promise<PriceListRow[]> {
  return db("price_lists").where({ account_id: accountId }).orderBy("seq");
}

export async function findPriceList(db: Db | Tx, accountId: string, externalId: string): Promise<PriceListRow | undefined> {
  return db("price_lists").where({ account_id: accountId, external_id: externalId }).first();
}

/** Lists by external id, one unique-index probe per id. */
export async function findPriceLists(db: Db | Tx, accountId: string, externalIds: string[]): Promise<PriceListRow[]> {
  if (!externalIds.length) return [];
  return db("price_lists").where({ account_id: accountId }).whereRaw("external_id = ANY(?::text[])", [externalIds]);
}

/** Creates or updates a list by external id; one sent as stored is left alone (`changed` false). */
export async function upsertPriceList(tx: Tx, accountId: string, w: PriceListWrite): Promise<PriceListRow & { changed: boolean }> {
  const { rows } = await tx.raw(
    `INSERT INTO price_lists AS l (id, account_id, external_id, name, currency, default_price_list, default_vat)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, external_id) DO UPDATE SET name = excluded.name, currency = excluded.currency,
       default_price_list = excluded.default_price_list, default_vat = excluded.default_vat,
       version = l.version + 1, updated_at = now()
     WHERE (l.name, l.currency, l.default_price_list, l.default_vat)
       IS DISTINCT FROM (excluded.name, excluded.currency, excluded.default_price_list, excluded.default_vat)
     RETURNING *, (xmax = 0) AS created`,
    [randomUUID(), accountId, w.external_id, w.name, w.currency, w.default_price_list, w.default_vat],
  );
  if (rows[0]) return { ...rows[0], changed: true };
  return { ...(await findPriceList(tx, accountId, w.external_id))!, created: false, changed: false };
}

/** Updates an existing list (undefined: none); one sent as stored is left alone (`changed` false). */
export async function updatePriceList(tx: Tx, accountId: string, w: PriceListWrite): Promise<(PriceListRow & { changed: boolean }) | undefined> {
  const [row] = await tx("price_lists")
    .where({ account_id: accountId, external_id: w.external_id })
    .whereRaw("(name, currency, default_price_list, default_vat) IS DISTINCT FROM (?, ?, ?, ?::numeric)", [w.name, w.currency, w.default_price_list, w.default_vat])
    .update({ name: w.name, currency: w.currency, default_price_list: w.default_price_list, default_vat: w.default_vat, version: tx.raw("version + 1"), updated_at: tx.fn.now() })
    .returning("*");
  if (row) return { ...row, changed: true };
  const current = await findPriceList(tx, accountId, w.external_id);
  return current && { ...current, changed: false };
}

// ---------------------------------------------------------------------------------------------
// Prices

export interface PriceRow {
  id: string;
  product_id: string;
  list_external_id: string;
  key: string;
  sku: string | null;
  price: string;
  currency: string;
  vat: string;
  season: string;
  custom_prices: Record<string, string>;
  version: number;
  updated_at: Date;
  /** Creation orders of the list and the price: the order of a product's prices. */
  list_seq: string;
  price_seq: string;
}

const PRICE_SELECT = `p.id, p.product_id, l.external_id AS list_external_id, p.key, p.sku, p.price, l.currency,
  COALESCE(p.vat, l.default_vat) AS vat, p.season, p.custom_prices, p.version, p.updated_at, l.seq AS list_seq, p.seq AS price_seq`;

function prices(db: Db | Tx) {
  return db("prices as p").join("price_lists as l", "l.id", "p.price_list_id").select(db.raw(PRICE_SELECT));
}

function filteredPrices(db: Db, accountId: string, priceListId?: string) {
  const q = db("prices as p").where("p.account_id", accountId);
  if (priceListId) q.where("p.price_list_id", priceListId);
  return q;
}

/** One page in creation order and the total (libs/db pageOfIds). */
export async function listPrices(db: Db, accountId: string, page: Page, priceListId?: string) {
  const ids = pageOfIds(filteredPrices(db, accountId, priceListId), page, "p.seq", "p.id");
  const [rows, [{ count }]] = await Promise.all([
    prices(db).where("p.account_id", accountId).whereIn("p.id", ids).orderBy("p.seq") as Promise<PriceRow[]>,
    filteredPrices(db, accountId, priceListId).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

/** The next chunk after `afterSeq` in creation order (keyset, so chunk N never rereads 1..N-1). */
export async function pricesAfter(db: Db, accountId: string, afterSeq: number, limit: number, priceListId?: string) {
  const q = db("prices as p")
    .join("price_lists as l", "l.id", "p.price_list_id")
    .select(db.raw(`${PRICE_SELECT}, p.seq`))
    .where("p.account_id", accountId)
    .where("p.seq", ">", afterSeq)
    .orderBy("p.seq")
    .limit(limit);
  if (priceListId) q.where("p.price_list_id", priceListId);
  return q as Promise<(PriceRow & { seq: number })[]>;
}

export async function pricesOfProducts(db: Db | Tx, accountId: string, productIds: string[]): Promise<PriceRow[]> {
  if (!productIds.length) return [];
  return prices(db).where("p.account_id", accountId).whereRaw("p.product_id = ANY(?::uuid[])", [productIds]).orderBy(["l.seq", "p.seq"]);
}

/**
 * Each product's prices as the JSON array GET /products shows, built by Postgres: one text per
 * product instead of a row and a conversion per price. Decimals print with their stored digits
 * (numeric::text); the fields are those of the contract's product price entry.
 */
export async function productPricesJson(db: Db | Tx, accountId: string, productIds: string[]): Promise<{ product_id: string; prices: string }[]> {
  if (!productIds.length) return [];
  // Named: parsed and planned once per connection, not for each chunk of a streamed page.
  const { rows } = await db.raw(
    `SELECT p.product_id::text AS product_id,
       '[' || string_agg(
         '{"listExternalID":' || to_json(l.external_id)::text ||
         ',"price":' || p.price::text ||
         ',"currency":' || to_json(l.currency)::text ||
         ',"vat":' || COALESCE(COALESCE(p.vat, l.default_vat)::text, 'null') ||
         ',"customPrices":' || COALESCE(
           (SELECT '{' || string_agg(to_json(e.key)::text || ':' || e.value::numeric::text, ',') || '}' FROM jsonb_each_text(p.custom_prices) e),
           '{}') ||
         '}', ',' ORDER BY l.seq, p.seq) || ']' AS prices
     FROM prices p JOIN price_lists l ON l.account_id = p.account_id AND l.id = p.price_list_id
     WHERE p.account_id = ? AND p.product_id = ANY(?::uuid[])
     GROUP BY p.product_id`,
    [accountId, productIds],
  ).options({ name: "pricing.product_prices_json" });
  return rows;
}

export async function customPriceFields(db: Db | Tx, accountId: string): Promise<string[]> {
  const row = await db("account_settings").where({ account_id: accountId }).first("custom_price_fields");
  return row?.custom_price_fields ?? [];
}

export interface PriceUpsertRow {
  price_list_id: string;
  product_id: string;
  key: string;
  sku: string | null;
  season: string;
  price: string;
  vat: string | null;
  custom_prices: Record<string, string>;
}

/**
 * Upserts prices by (list, product, season) in one statement: custom prices are merged (keys not
 * sent are kept), vat not sent keeps the stored one. Returns the written prices as every read
 * answers them (PRICE_SELECT), each with whether it is new, in creation order: their messages
 * need no second read. A price sent as stored is not written, so not returned.
 */
export async function upsertPrices(tx: Tx, accountId: string, rows: PriceUpsertRow[]) {
  if (!rows.length) return [];
  const { rows: written } = await tx.raw(
    `WITH written AS (
       INSERT INTO prices AS p (id, account_id, price_list_id, product_id, key, sku, season, price, vat, custom_prices)
       SELECT gen_random_uuid(), ?, price_list_id, product_id, key, sku, season, price, vat, custom_prices
       FROM jsonb_to_recordset(?::jsonb) AS x(price_list_id uuid, product_id uuid, key text, sku text, season text,
         price numeric, vat numeric, custom_prices jsonb)
       ON CONFLICT (account_id, price_list_id, product_id, season) DO UPDATE SET
         key = excluded.key, sku = excluded.sku, price = excluded.price, vat = COALESCE(excluded.vat, p.vat),
         custom_prices = p.custom_prices || excluded.custom_prices, version = p.version + 1, updated_at = now()
       WHERE (p.key, p.sku, p.price, p.vat, p.custom_prices)
         IS DISTINCT FROM (excluded.key, excluded.sku, excluded.price, COALESCE(excluded.vat, p.vat), p.custom_prices || excluded.custom_prices)
       RETURNING p.*, (p.xmax = 0) AS created)
     SELECT ${PRICE_SELECT}, p.price_list_id, p.created
     FROM written p JOIN price_lists l ON l.account_id = p.account_id AND l.id = p.price_list_id
     ORDER BY p.seq`,
    [accountId, asJson(rows)],
  );
  return written as (PriceRow & { price_list_id: string; created: boolean })[];
}

/** Deletes the prices of the products in one list (one season, when given); returns them as they were. */
export async function deletePrices(tx: Tx, accountId: string, priceListId: string, productIds: string[], season: string | undefined) {
  if (!productIds.length) return [];
  const rows = await prices(tx)
    .where("p.account_id", accountId)
    .where("p.price_list_id", priceListId)
    .whereRaw("p.product_id = ANY(?::uuid[])", [productIds])
    .modify((q) => (season === undefined ? q : q.where("p.season", season)))
    .forUpdate("p");
  if (rows.length) await tx("prices").where({ account_id: accountId }).whereRaw("id = ANY(?::uuid[])", [rows.map((r: PriceRow) => r.id)]).delete();
  return rows as PriceRow[];
}
