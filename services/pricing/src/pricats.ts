import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { pricingV1, topics } from "@analytics/contracts";
import { fieldViolations, type Db } from "@analytics/db";
import { invalid, type FieldViolation } from "@analytics/errors";
import { enqueue, outboxEntry } from "@analytics/outbox";
import { commit, itemOutcome, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import type { Page, PricatRow } from "./repository";
import { pricatsTable } from "./resources";
import { Problems } from "./validation";

const { PricatSchema, PricatSkuSchema } = pricingV1;

/**
 * Pricats (supplier price catalogues) and their SKU rows, keyed by (sku, season) within a pricat.
 * A row is kept as its proto JSON (exact decimals as text) beside the columns that key and filter it.
 */

export function pricatFromRow(row: PricatRow): pricingV1.Pricat {
  return pricatsTable.messageOf(row);
}

const skuFromRow = (row: { fields: JsonValue }) => fromJson(pricingV1.PricatSkuSchema, row.fields);

export async function listPricats(db: Db, accountId: string, req: pricingV1.ListPricatsRequest, page: Page) {
  const { rows, total } = await repo.listPricats(db, accountId, req, page);
  return { pricats: rows.map(pricatFromRow), total };
}

export async function listPricatSkus(db: Db, accountId: string, req: pricingV1.ListPricatSkusRequest, page: Page) {
  const { rows, total } = await repo.listPricatSkus(db, accountId, req, page);
  return { skus: rows.map(skuFromRow), total };
}

const outcome = (statusCode: number, reference: string, message: string, violations: FieldViolation[] = []) => itemOutcome(statusCode, reference, "sku", message, violations);

/**
 * POST /pricats/products/batch: the pricat is created or updated, then its valid rows are upserted
 * by (sku, season) in one statement; a bad row is its own 400. Four statements whatever the size.
 */
export async function upsertPricatSkus(ctx: ServiceContext, accountId: string, req: pricingV1.UpsertPricatSkusRequest): Promise<ItemOutcome[]> {
  const pricat = req.pricat ?? create(PricatSchema);
  const p = new Problems();
  p.list.push(...pricatsTable.violations(pricat, "pricat"));
  p.check("pricat");
  if (!req.items.length) throw invalid("items must not be empty", [{ path: "items", message: "at least one item is required" }]);
  const outcomes: (ItemOutcome | undefined)[] = req.items.map((item) => {
    // The PricatSku's rules (pricing.proto), then the currency's code.
    const q = new Problems();
    q.list.push(...fieldViolations(PricatSkuSchema, item));
    if (item.currency !== undefined) q.currency("currency", item.currency);
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
  const done = await commit(ctx, async (tx) => {
    const result = [...outcomes];
    const row = await repo.upsertPricat(tx, accountId, pricatsTable.rowOf(pricat) as repo.PricatWrite);
    const items = [...byKey.values()].map(({ item }) => ({ ...item, pricatExternalId: row.external_id }));
    if (!items.length) return result;
    const written = await repo.upsertPricatSkus(
      tx,
      accountId,
      row.id,
      items.map((i) => ({ sku: i.sku, season: i.season ?? "", fields: toJson(pricingV1.PricatSkuSchema, create(pricingV1.PricatSkuSchema, i)) })),
    );
    const apiPricat = pricatFromRow(row);
    await enqueue(
      tx,
      written.map((w) =>
        outboxEntry(topics.pricingPricatSkuUpserted, accountId, `${row.id}/${w.sku}/${w.season}`, { accountId, pricat: apiPricat, sku: skuFromRow(w) }),
      ),
    );
    for (const w of written) {
      byKey.get(`${w.sku}\u0000${w.season}`)!.index.forEach((index, n) => {
        result[index] = w.created && n === 0 ? outcome(201, w.sku, "created") : outcome(200, w.sku, "updated");
      });
    }
    // Rows not written were stored as sent: nothing changed, nothing announced.
    for (const { index, item } of byKey.values()) for (const i of index) result[i] ??= outcome(200, item.sku, "unchanged");
    return result;
  });
  return done.map((o, i) => o ?? outcome(500, req.items[i].sku, "item not answered"));
}
