import type { JsonValue } from "@bufbuild/protobuf";
import { randomUUID } from "node:crypto";
import type { Db, Row, Tx } from "@analytics/db";
import { ACCOUNT_VERSION_SQL, lockedAtRevision, lockKeys, pageOfIds, REVISION_COLUMN } from "@analytics/db";
import type { Page } from "@analytics/rpc";
import { fxRatesTable, priceListsTable, priceSelect, pricatsTable, pricesTable } from "./resources";

/**
 * Pricing's SQL. Every statement is scoped by account_id, and every batch is a fixed handful of
 * statements whatever its size: rows travel as one jsonb parameter (jsonb_to_recordset).
 */

export type { Page };

const asJson = (rows: unknown) => JSON.stringify(rows);

/** Whether a stored row's writable columns differ from those sent: a row sent as stored is left alone. */
const changed = (table: { updated: readonly string[] }, stored: string, sent: string) =>
  `(${table.updated.map((c) => `${stored}.${c}`).join(", ")}) IS DISTINCT FROM (${table.updated.map((c) => `${sent}.${c}`).join(", ")})`;

// ---------------------------------------------------------------------------------------------
// Price lists

/** A price_lists row: priceListsTable's columns, typed where this service reads a column by name. */
export type PriceListRow = Row & { id: string; external_id: string; version: number; created?: boolean };

/** The columns of a list as written (`priceListsTable.rowOf` of the PriceList). */
export type PriceListWrite = Row & { external_id: string };

export async function listPriceLists(db: Db, accountId: string): Promise<PriceListRow[]> {
  return db("price_lists").where({ account_id: accountId }).orderBy("seq");
}

/** A list and its revision (If-Match). */
export async function findPriceList(db: Db | Tx, accountId: string, externalId: string): Promise<(PriceListRow & { revision: string }) | undefined> {
  return db("price_lists").select("*", db.raw(REVISION_COLUMN)).where({ account_id: accountId, external_id: externalId }).first();
}

/** Lists by external id, one unique-index probe per id. */
export async function findPriceLists(db: Db | Tx, accountId: string, externalIds: string[]): Promise<PriceListRow[]> {
  if (!externalIds.length) return [];
  return db("price_lists").where({ account_id: accountId }).whereRaw("external_id = ANY(?::text[])", [externalIds]);
}

const listColumns = priceListsTable.columns.join(", ");

/** Creates or updates a list by external id; one sent as stored is left alone (`changed` false). */
export async function upsertPriceList(tx: Tx, accountId: string, w: PriceListWrite): Promise<PriceListRow & { changed: boolean }> {
  const { rows } = await tx.raw(
    `INSERT INTO price_lists AS l (id, account_id, ${listColumns})
     SELECT ?, ?, ${listColumns} FROM json_to_recordset(?::json) AS x(${priceListsTable.recordType})
     ON CONFLICT (account_id, external_id) DO UPDATE SET ${priceListsTable.updateSet}, version = l.version + 1, updated_at = now()
     WHERE ${changed(priceListsTable, "l", "excluded")}
     RETURNING *, (xmax = 0) AS created`,
    [randomUUID(), accountId, asJson([w])],
  );
  if (rows[0]) return { ...rows[0], changed: true };
  return { ...(await findPriceList(tx, accountId, w.external_id))!, created: false, changed: false };
}

/** Updates an existing list (undefined: none); one sent as stored is left alone (`changed` false). */
export async function updatePriceList(tx: Tx, accountId: string, w: PriceListWrite): Promise<(PriceListRow & { changed: boolean }) | undefined> {
  const { rows } = await tx.raw(
    `UPDATE price_lists AS l SET ${priceListsTable.updated.map((c) => `${c} = x.${c}`).join(", ")}, version = l.version + 1, updated_at = now()
     FROM json_to_recordset(?::json) AS x(${priceListsTable.recordType})
     WHERE l.account_id = ? AND l.external_id = x.external_id AND ${changed(priceListsTable, "l", "x")}
     RETURNING l.*`,
    [asJson([w]), accountId],
  );
  if (rows[0]) return { ...rows[0], changed: true };
  const current = await findPriceList(tx, accountId, w.external_id);
  return current && { ...current, changed: false };
}

// ---------------------------------------------------------------------------------------------
// Prices

/** A price read with `priceSelect` (pricesTable's columns, its list's), typed where this service reads a column by name. */
export type PriceRow = Row & {
  id: string;
  product_id: string;
  list_external_id: string;
  currency: string;
  season: string;
  version: number;
  /** Creation orders of the list and the price: the order of a product's prices. */
  list_seq: string;
  price_seq: string;
};

const PRICE_SELECT = `p.id, ${priceSelect("p")}, p.version, l.seq AS list_seq, p.seq AS price_seq`;

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
 * (numeric::text); the fields are those of the contract's product price entry. With them the
 * account's data version, read by the same statement (their snapshot): the page's weak ETag.
 */
export async function productPricesJson(db: Db | Tx, accountId: string, productIds: string[]): Promise<{ rows: { product_id: string; prices: string }[]; version: string }> {
  // Named: parsed and planned once per connection, not for each chunk of a streamed page.
  const { rows }: { rows: { data_version: string; product_id: string | null; prices: string }[] } = await db.raw(
    `SELECT v.data_version, r.product_id, r.prices
     FROM (SELECT ${ACCOUNT_VERSION_SQL} AS data_version) v
     LEFT JOIN (
       SELECT p.product_id::text AS product_id,
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
       GROUP BY p.product_id
     ) r ON true`,
    [accountId, accountId, productIds],
  ).options({ name: "pricing.product_prices_json" });
  return { rows: rows[0].product_id === null ? [] : (rows as { product_id: string; prices: string }[]), version: rows[0].data_version };
}

export async function customPriceFields(db: Db | Tx, accountId: string): Promise<string[]> {
  const row = await db("account_settings").where({ account_id: accountId }).first("custom_price_fields");
  return row?.custom_price_fields ?? [];
}

/** Stores each account's settings unless the stored version is as new (one row per account). */
export async function storeNewerAccountSettings(tx: Tx, rows: { account_id: string; version: number; custom_price_fields: string[] }[]): Promise<void> {
  await tx.raw(
    `INSERT INTO account_settings (account_id, version, custom_price_fields)
     SELECT account_id, version, ARRAY(SELECT jsonb_array_elements_text(custom_price_fields))
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, version bigint, custom_price_fields jsonb)
     ON CONFLICT (account_id) DO UPDATE SET version = excluded.version, custom_price_fields = excluded.custom_price_fields
     WHERE account_settings.version < excluded.version`,
    [JSON.stringify(rows)],
  );
}

/** The columns of a price as written (`pricesTable.rowOf` of the Price with its list's id; season '' for none). */
export type PriceUpsertRow = Row & {
  price_list_id: string;
  product_id: string;
  season: string;
  vat: string | null;
  custom_prices: Record<string, string>;
};

const priceColumns = pricesTable.columns.join(", ");
/** A price's key (its conflict target); every other column is set by a write, vat and custom prices merged. */
const PRICE_KEY = ["price_list_id", "product_id", "season"];
const MERGED: Record<string, string> = { vat: "COALESCE(excluded.vat, p.vat)", custom_prices: "p.custom_prices || excluded.custom_prices" };
const priceSet = pricesTable.columns.filter((c) => !PRICE_KEY.includes(c)).map((c) => [c, MERGED[c] ?? `excluded.${c}`] as const);

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
       INSERT INTO prices AS p (id, account_id, ${priceColumns})
       SELECT gen_random_uuid(), ?, ${priceColumns}
       FROM jsonb_to_recordset(?::jsonb) AS x(${pricesTable.recordType})
       ON CONFLICT (account_id, price_list_id, product_id, season) DO UPDATE SET
         ${priceSet.map(([c, v]) => `${c} = ${v}`).join(", ")}, version = p.version + 1, updated_at = now()
       WHERE (${priceSet.map(([c]) => `p.${c}`).join(", ")}) IS DISTINCT FROM (${priceSet.map(([, v]) => v).join(", ")})
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

// ---------------------------------------------------------------------------------------------
// Pricats

/** A pricats row: pricatsTable's columns, typed where this service reads a column by name. */
export type PricatRow = Row & { id: string; external_id: string };

/** The columns of a pricat as written (`pricatsTable.rowOf` of the Pricat). */
export type PricatWrite = Row & { external_id: string };

/** A pricat SKU row: its (sku, season) key and its proto JSON. */
export interface PricatSkuWrite {
  sku: string;
  season: string;
  fields: JsonValue;
}

export interface PricatFilter {
  externalIds: string[];
  supplierGlns: string[];
  suppliers: string[];
}

function filteredPricats(db: Db, accountId: string, f: PricatFilter) {
  const q = db("pricats").where({ account_id: accountId });
  if (f.externalIds.length) q.whereIn("external_id", f.externalIds);
  if (f.supplierGlns.length) q.whereIn("supplier_gln", f.supplierGlns);
  if (f.suppliers.length) q.whereIn("supplier_name", f.suppliers);
  return q;
}

export async function listPricats(db: Db, accountId: string, f: PricatFilter, page: Page) {
  const [rows, [{ count }]] = await Promise.all([
    db("pricats").whereIn("id", pageOfIds(filteredPricats(db, accountId, f), page)).orderBy("seq") as Promise<PricatRow[]>,
    filteredPricats(db, accountId, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

export interface PricatSkuFilter {
  pricatExternalIds: string[];
  supplierGlns: string[];
  suppliers: string[];
  skus: string[];
  seasons: string[];
}

function filteredPricatSkus(db: Db, accountId: string, f: PricatSkuFilter) {
  const q = db("pricat_skus as s").where("s.account_id", accountId);
  if (f.pricatExternalIds.length || f.supplierGlns.length || f.suppliers.length) {
    // The pricats named, found once, then their rows by id.
    const pricats = db("pricats").select("id").where({ account_id: accountId });
    if (f.pricatExternalIds.length) pricats.whereIn("external_id", f.pricatExternalIds);
    if (f.supplierGlns.length) pricats.whereIn("supplier_gln", f.supplierGlns);
    if (f.suppliers.length) pricats.whereIn("supplier_name", f.suppliers);
    q.whereRaw("s.pricat_id = ANY(ARRAY(?))", [pricats]);
  }
  if (f.skus.length) q.whereIn("s.sku", f.skus);
  if (f.seasons.length) q.whereIn("s.season", f.seasons);
  return q;
}

export async function listPricatSkus(db: Db, accountId: string, f: PricatSkuFilter, page: Page) {
  const [rows, [{ count }]] = await Promise.all([
    db("pricat_skus").select("fields").whereIn("id", pageOfIds(filteredPricatSkus(db, accountId, f), page, "s.seq", "s.id")).orderBy("seq") as Promise<{ fields: JsonValue }[]>,
    filteredPricatSkus(db, accountId, f).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { rows, total: Number(count) };
}

/** Creates or updates a pricat by external id; one sent as stored is left alone (its updatedAt kept). */
export async function upsertPricat(tx: Tx, accountId: string, w: PricatWrite): Promise<PricatRow> {
  const columns = pricatsTable.columns.join(", ");
  const { rows } = await tx.raw(
    `INSERT INTO pricats AS p (id, account_id, ${columns})
     SELECT gen_random_uuid(), ?, ${columns} FROM json_to_recordset(?::json) AS x(${pricatsTable.recordType})
     ON CONFLICT (account_id, external_id) DO UPDATE SET ${pricatsTable.updateSet}, updated_at = now()
     WHERE ${changed(pricatsTable, "p", "excluded")}
     RETURNING *`,
    [accountId, asJson([w])],
  );
  return rows[0] ?? (await tx("pricats").where({ account_id: accountId, external_id: w.external_id }).first());
}

/** Upserts a pricat's rows by (sku, season); returns only those written (a row sent as stored is not). */
export async function upsertPricatSkus(tx: Tx, accountId: string, pricatId: string, rows: PricatSkuWrite[]): Promise<(PricatSkuWrite & { created: boolean })[]> {
  const { rows: written } = await tx.raw(
    `INSERT INTO pricat_skus AS s (id, account_id, pricat_id, sku, season, fields)
     SELECT gen_random_uuid(), ?, ?, sku, season, fields FROM jsonb_to_recordset(?::jsonb) AS x(sku text, season text, fields jsonb)
     ON CONFLICT (account_id, pricat_id, sku, season) DO UPDATE SET fields = excluded.fields, updated_at = now()
     WHERE s.fields IS DISTINCT FROM excluded.fields
     RETURNING s.sku, s.season, s.fields, (s.xmax = 0) AS created`,
    [accountId, pricatId, asJson(rows)],
  );
  return written;
}

// ---------------------------------------------------------------------------------------------
// FX rates

/** An fx_rates row (fxRatesTable's columns, dates as YYYY-MM-DD), typed where this service reads a column by name. */
/** The columns of a rate as written (`fxRatesTable.rowOf`), typed where this service reads a column by name. */
export type NewRate = Row & { external_reference: string; from_currency: string; to_currency: string; from_date: string; to_date: string | null };

/** An fx_rates row (fxRatesTable's columns, dates as YYYY-MM-DD). */
export type FxRow = NewRate & { id: number };

/** The columns of an FxRow, of table alias `t`. */
const fxColumns = (t: string) => fxRatesTable.select(t);
const fxWritten = fxRatesTable.columns.join(", ");

export function listFxRates(db: Db, accountId: string, f: { externalReferences: string[]; fromCurrencies: string[]; toCurrencies: string[] }): Promise<FxRow[]> {
  const q = db("fx_rates").select(db.raw(fxColumns("fx_rates"))).where({ account_id: accountId }).orderBy("id");
  if (f.externalReferences.length) q.whereIn("external_reference", f.externalReferences);
  if (f.fromCurrencies.length) q.whereIn("from_currency", f.fromCurrencies);
  if (f.toCurrencies.length) q.whereIn("to_currency", f.toCurrencies);
  return q;
}

/** Transaction locks on the keys, taken in one order (writers of one triple run one after the other). */
export async function lockFxTriples(tx: Tx, keys: string[]): Promise<void> {
  await lockKeys(tx, keys);
}

/** The rates stored exactly as sent (a client's retry), by their position in `sent`. */
export async function storedFxRates(tx: Tx, accountId: string, sent: NewRate[]): Promise<Map<number, FxRow>> {
  const { rows } = await tx.raw(
    `SELECT r.ord, ${fxColumns("f")}
     FROM jsonb_to_recordset(?::jsonb) AS r(ord int, ${fxRatesTable.recordType})
     JOIN fx_rates f ON f.account_id = ? AND f.from_currency = r.from_currency AND f.to_currency = r.to_currency
       AND f.external_reference = r.external_reference AND f.from_date = r.from_date AND f.to_date IS NOT DISTINCT FROM r.to_date
       AND f.rate = r.rate AND f.exchange_date IS NOT DISTINCT FROM r.exchange_date`,
    [asJson(sent.map((r, ord) => ({ ...r, ord }))), accountId],
  );
  return new Map(rows.map(({ ord, ...row }: FxRow & { ord: number }) => [ord, row]));
}

/** Closes each triple's stored open range at the earliest new start after it began; returns those closed. */
export async function closeOpenFxRanges(tx: Tx, accountId: string, rates: NewRate[]): Promise<FxRow[]> {
  const { rows } = await tx.raw(
    `UPDATE fx_rates f SET to_date = x.from_date
     FROM (SELECT from_currency, to_currency, external_reference, min(from_date) AS from_date
           FROM jsonb_to_recordset(?::jsonb) AS r(${fxRatesTable.recordType})
           GROUP BY 1, 2, 3) x
     WHERE f.account_id = ? AND f.from_currency = x.from_currency AND f.to_currency = x.to_currency
       AND f.external_reference = x.external_reference AND f.to_date IS NULL AND f.from_date < x.from_date
     RETURNING ${fxColumns("f")}`,
    [asJson(rates), accountId],
  );
  return rows;
}

/** The stored rate (lowest id) whose range overlaps one of `rates` of the same triple, if any. */
export async function firstOverlappingFxRate(tx: Tx, accountId: string, rates: NewRate[]): Promise<FxRow | undefined> {
  const { rows } = await tx.raw(
    `SELECT ${fxColumns("f")} FROM fx_rates f WHERE f.account_id = ? AND EXISTS (
       SELECT 1 FROM jsonb_to_recordset(?::jsonb) AS r(${fxRatesTable.recordType})
       WHERE f.from_currency = r.from_currency AND f.to_currency = r.to_currency AND f.external_reference = r.external_reference
         AND daterange(f.from_date, f.to_date, '[)') && daterange(r.from_date, r.to_date, '[)'))
     ORDER BY id LIMIT 1`,
    [accountId, asJson(rates)],
  );
  return rows[0];
}

/** Inserts the rates; returns them as stored, in order. */
export async function insertFxRates(tx: Tx, accountId: string, rates: NewRate[]): Promise<FxRow[]> {
  const { rows } = await tx.raw(
    `INSERT INTO fx_rates (account_id, ${fxWritten})
     SELECT ?, ${fxWritten} FROM jsonb_to_recordset(?::jsonb) AS r(${fxRatesTable.recordType})
     RETURNING ${fxColumns("fx_rates")}`,
    [accountId, asJson(rates)],
  );
  return rows;
}

export async function deleteFxRate(tx: Tx, accountId: string, id: number): Promise<FxRow | undefined> {
  const { rows } = await tx.raw(`DELETE FROM fx_rates WHERE account_id = ? AND id = ? RETURNING ${fxColumns("fx_rates")}`, [accountId, id]);
  return rows[0];
}

/** Locks a price list's row for a write; false when it is gone or (If-Match) at another revision. */
export const lockPriceListAt = (tx: Tx, accountId: string, externalId: string, ifRevision: string | undefined) =>
  lockedAtRevision(tx, "price_lists", { account_id: accountId, external_id: externalId }, ifRevision);
