import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { pricingV1, topics } from "@analytics/contracts";
import { inTransaction, pageOfIds, type Db } from "@analytics/db";
import { invalid } from "@analytics/errors";
import { enqueue, outboxEntry } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import type { ItemOutcome } from "./prices";
import type { Page } from "./repository";
import { Problems } from "./validation";

/**
 * Pricats (supplier price catalogues) and their SKU rows, keyed by (sku, season) within a pricat.
 * A row is kept as its proto JSON (exact decimals as text) beside the columns that key and filter it.
 */

interface PricatRow {
  id: string;
  external_id: string;
  name: string;
  supplier_gln: string | null;
  supplier_name: string | null;
  created_at: Date;
  updated_at: Date;
}

export function pricatFromRow(row: PricatRow): pricingV1.Pricat {
  return create(pricingV1.PricatSchema, {
    externalId: row.external_id,
    name: row.name,
    supplierGln: row.supplier_gln ?? undefined,
    supplierName: row.supplier_name ?? undefined,
    createdAt: timestampFromDate(new Date(row.created_at)),
    updatedAt: timestampFromDate(new Date(row.updated_at)),
  });
}

const skuFromRow = (row: { fields: JsonValue }) => fromJson(pricingV1.PricatSkuSchema, row.fields);

function filteredPricats(db: Db, accountId: string, req: pricingV1.ListPricatsRequest) {
  const q = db("pricats").where({ account_id: accountId });
  if (req.externalIds.length) q.whereIn("external_id", req.externalIds);
  if (req.supplierGlns.length) q.whereIn("supplier_gln", req.supplierGlns);
  if (req.suppliers.length) q.whereIn("supplier_name", req.suppliers);
  return q;
}

export async function listPricats(db: Db, accountId: string, req: pricingV1.ListPricatsRequest, page: Page) {
  const [rows, [{ count }]] = await Promise.all([
    db("pricats").whereIn("id", pageOfIds(filteredPricats(db, accountId, req), page)).orderBy("seq") as Promise<PricatRow[]>,
    filteredPricats(db, accountId, req).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { pricats: rows.map(pricatFromRow), total: Number(count) };
}

function filteredSkus(db: Db, accountId: string, req: pricingV1.ListPricatSkusRequest) {
  const q = db("pricat_skus as s").where("s.account_id", accountId);
  if (req.pricatExternalIds.length || req.supplierGlns.length || req.suppliers.length) {
    // The pricats named, found once, then their rows by id.
    const pricats = db("pricats").select("id").where({ account_id: accountId });
    if (req.pricatExternalIds.length) pricats.whereIn("external_id", req.pricatExternalIds);
    if (req.supplierGlns.length) pricats.whereIn("supplier_gln", req.supplierGlns);
    if (req.suppliers.length) pricats.whereIn("supplier_name", req.suppliers);
    q.whereRaw("s.pricat_id = ANY(ARRAY(?))", [pricats]);
  }
  if (req.skus.length) q.whereIn("s.sku", req.skus);
  if (req.seasons.length) q.whereIn("s.season", req.seasons);
  return q;
}

export async function listPricatSkus(db: Db, accountId: string, req: pricingV1.ListPricatSkusRequest, page: Page) {
  const [rows, [{ count }]] = await Promise.all([
    db("pricat_skus").select("fields").whereIn("id", pageOfIds(filteredSkus(db, accountId, req), page, "s.seq", "s.id")).orderBy("seq"),
    filteredSkus(db, accountId, req).count({ count: "*" }) as unknown as Promise<[{ count: number }]>,
  ]);
  return { skus: rows.map(skuFromRow), total: Number(count) };
}

const outcome = (statusCode: number, reference: string, message: string, violations: ItemOutcome["violations"] = []): ItemOutcome => ({
  statusCode,
  message,
  reference,
  referenceField: "sku",
  violations,
});

/**
 * POST /pricats/products/batch: the pricat is created or updated, then its valid rows are upserted
 * by (sku, season) in one statement; a bad row is its own 400. Four statements whatever the size.
 */
export async function upsertPricatSkus(ctx: ServiceContext, accountId: string, req: pricingV1.UpsertPricatSkusRequest): Promise<ItemOutcome[]> {
  const pricat = req.pricat;
  const p = new Problems();
  p.text("pricat.externalId", pricat?.externalId, true);
  p.text("pricat.name", pricat?.name);
  p.text("pricat.supplierGln", pricat?.supplierGln);
  p.text("pricat.supplierName", pricat?.supplierName);
  p.check("pricat");
  if (!req.items.length) throw invalid("items must not be empty", [{ path: "items", message: "at least one item is required" }]);
  const outcomes: (ItemOutcome | undefined)[] = req.items.map((item) => {
    const q = new Problems();
    q.text("sku", item.sku, true);
    for (const f of ["ean", "season", "productName", "variantName", "brand", "category", "color", "size", "gender", "productGroupId", "variantGroupId", "imageUrl"] as const) q.text(f, item[f]);
    if (item.vat) q.decimal("vat", item.vat.value, { min: 0, max: 100 });
    if (item.currency !== undefined) q.currency("currency", item.currency);
    for (const [name, price] of Object.entries(item.prices)) {
      q.text(`prices.${name}`, name, true);
      // A price, as on a price list: never negative.
      q.decimal(`prices.${name}`, price.value, { min: 0 });
    }
    q.json("customFields", item.customFields);
    q.json("externalAttributes", item.externalAttributes);
    return q.ok ? undefined : outcome(400, item.sku, q.message(), q.list);
  });
  const byKey = new Map<string, { index: number[]; item: pricingV1.PricatSku }>();
  req.items.forEach((item, index) => {
    if (outcomes[index]) return;
    const key = `${item.sku}\u0000${item.season ?? ""}`;
    // A row sent twice: the later one is stored, and the rows are answered as if they ran in
    // order (as products are): only the first of a new row is "created", the rest "updated".
    byKey.set(key, { index: [...(byKey.get(key)?.index ?? []), index], item });
  });
  const done = await inTransaction(ctx.db, async (tx) => {
    const result = [...outcomes];
    const { rows } = await tx.raw(
      `INSERT INTO pricats (id, account_id, external_id, name, supplier_gln, supplier_name) VALUES (gen_random_uuid(), ?, ?, ?, ?, ?)
       ON CONFLICT (account_id, external_id) DO UPDATE SET name = excluded.name, supplier_gln = excluded.supplier_gln,
         supplier_name = excluded.supplier_name, updated_at = now()
       WHERE (pricats.name, pricats.supplier_gln, pricats.supplier_name) IS DISTINCT FROM (excluded.name, excluded.supplier_gln, excluded.supplier_name)
       RETURNING *`,
      [accountId, pricat!.externalId, pricat!.name, pricat!.supplierGln ?? null, pricat!.supplierName ?? null],
    );
    // Sent as stored: the pricat is left alone (its updatedAt kept).
    const row = (rows[0] ?? (await tx("pricats").where({ account_id: accountId, external_id: pricat!.externalId }).first())) as PricatRow;
    const items = [...byKey.values()].map(({ item }) => ({ ...item, pricatExternalId: row.external_id }));
    if (!items.length) return result;
    const { rows: written } = await tx.raw(
      `INSERT INTO pricat_skus AS s (id, account_id, pricat_id, sku, season, fields)
       SELECT gen_random_uuid(), ?, ?, sku, season, fields FROM jsonb_to_recordset(?::jsonb) AS x(sku text, season text, fields jsonb)
       ON CONFLICT (account_id, pricat_id, sku, season) DO UPDATE SET fields = excluded.fields, updated_at = now()
       WHERE s.fields IS DISTINCT FROM excluded.fields
       RETURNING s.sku, s.season, s.fields, (s.xmax = 0) AS created`,
      [accountId, row.id, JSON.stringify(items.map((i) => ({ sku: i.sku, season: i.season ?? "", fields: toJson(pricingV1.PricatSkuSchema, create(pricingV1.PricatSkuSchema, i)) })))],
    );
    const apiPricat = pricatFromRow(row);
    await enqueue(
      tx,
      written.map((w: { sku: string; season: string; fields: JsonValue }) =>
        outboxEntry(topics.pricingPricatSkuUpserted, accountId, `${row.id}/${w.sku}/${w.season}`, { accountId, pricat: apiPricat, sku: skuFromRow(w) }),
      ),
    );
    for (const w of written as { sku: string; season: string; created: boolean }[]) {
      byKey.get(`${w.sku}\u0000${w.season}`)!.index.forEach((index, n) => {
        result[index] = w.created && n === 0 ? outcome(201, w.sku, "created") : outcome(200, w.sku, "updated");
      });
    }
    // Rows not written were stored as sent: nothing changed, nothing announced.
    for (const { index, item } of byKey.values()) for (const i of index) result[i] ??= outcome(200, item.sku, "unchanged");
    return result;
  });
  ctx.relay.kick();
  return done.map((o, i) => o ?? outcome(500, req.items[i].sku, "item not answered"));
}
