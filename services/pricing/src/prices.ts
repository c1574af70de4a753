import { topics, type pricingV1 } from "@analytics/contracts";
import { isUuid, type Db } from "@analytics/db";
import { notFound, type FieldViolation } from "@analytics/errors";
import { enqueue, outboxEntry } from "@analytics/outbox";
import { commit, itemOutcome, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import { priceFromRow, pricesTable } from "./resources";
import { Problems } from "./validation";

const outcome = (statusCode: number, reference: string, message: string, violations: FieldViolation[] = []) => itemOutcome(statusCode, reference, "key", message, violations);

/**
 * The published client's customPrice<n> as the account's n-th customPriceField; a position the
 * account has no field for, or one that names a field customPrices sends with another value, is
 * the item's 400.
 */
function numberedCustomPrices(item: pricingV1.PriceWrite, fields: string[]): { prices: Record<string, string> } | { violations: { path: string; message: string }[] } {
  const prices: Record<string, string> = {};
  const violations: { path: string; message: string }[] = [];
  for (const [n, v] of Object.entries(item.numberedCustomPrices)) {
    const field = fields[Number(n) - 1];
    const path = `customPrice${n}`;
    if (!field) violations.push({ path, message: `the account has ${fields.length} customPriceFields (${fields.join(", ") || "none"}), so no custom price ${n}` });
    else if (item.customPrices[field] && Number(item.customPrices[field].value) !== Number(v.value)) violations.push({ path, message: `differs from customPrices.${field}; send one of them` });
    else prices[field] = v.value;
  }
  return violations.length ? { violations } : { prices };
}

/** What each item would write once checked: the row and the item it came from. */
interface Pending {
  index: number;
  row: repo.PriceUpsertRow;
}

/**
 * POST /prices/batch. Each item is checked alone (400 for bad fields or a custom price key
 * outside the account's customPriceFields, 404 for an unknown SKU or list); the rest are written
 * in one transaction of a fixed handful of statements: the settings, the lists, one upsert, one
 * read-back, one outbox insert. Items naming the same (list, SKU, season) are applied in
 * request order (last price wins, custom prices merged).
 */
export async function upsertPrices(ctx: ServiceContext, accountId: string, items: pricingV1.PriceWrite[]): Promise<ItemOutcome[]> {
  const outcomes: (ItemOutcome | undefined)[] = items.map((item) => {
    const p = new Problems();
    // The item as the Price it writes: its fields' rules are the Price message's (pricing.proto).
    p.list.push(...pricesTable.violations({ listExternalId: item.listExternalId, key: item.key, price: item.price, vat: item.vat, season: item.season, customPrices: item.customPrices }));
    for (const [n, v] of Object.entries(item.numberedCustomPrices)) p.decimal(`customPrice${n}`, v.value, { min: 0 });
    return p.ok ? undefined : outcome(400, item.key, p.message(), p.list);
  });
  const result = await commit(ctx, async (tx) => {
    const done = [...outcomes];
    const [fields, lists] = await Promise.all([
      repo.customPriceFields(tx, accountId),
      repo.findPriceLists(tx, accountId, [...new Set(items.filter((_, i) => !done[i]).map((i) => i.listExternalId))]),
    ]);
    const allowed = new Set(fields);
    const listByExternal = new Map(lists.map((l) => [l.external_id, l]));
    const pending = new Map<string, Pending>();
    const indexOf = new Map<number, string>();
    items.forEach((item, index) => {
      if (done[index]) return;
      const list = listByExternal.get(item.listExternalId);
      if (!list) return void (done[index] = outcome(404, item.key, `price list ${item.listExternalId} not found`));
      if (!item.productId || !isUuid(item.productId)) return void (done[index] = outcome(404, item.key, `SKU ${item.key} not found`));
      const numbered = numberedCustomPrices(item, fields);
      if ("violations" in numbered) return void (done[index] = outcome(400, item.key, numbered.violations.map((v) => `${v.path}: ${v.message}`).join("; "), numbered.violations));
      const outside = allowed.size ? Object.keys(item.customPrices).filter((k) => !allowed.has(k)) : [];
      if (outside.length) {
        const violations = outside.map((k) => ({ path: `customPrices.${k}`, message: `is not one of the account's customPriceFields (${fields.join(", ")})` }));
        return void (done[index] = outcome(400, item.key, violations.map((v) => `${v.path}: ${v.message}`).join("; "), violations));
      }
      const season = item.season ?? "";
      const id = `${list.id}/${item.productId}/${season}`;
      const custom = { ...numbered.prices, ...Object.fromEntries(Object.entries(item.customPrices).map(([k, v]) => [k, v.value])) };
      const earlier = pending.get(id);
      // The Price it writes, as the init of one (no message made: 1000 a batch).
      const price = {
        key: item.productKey || item.key,
        sku: item.sku,
        price: item.price,
        vat: item.vat ?? (earlier?.row.vat ? { value: earlier.row.vat } : undefined),
        customPrices: Object.fromEntries(Object.entries({ ...earlier?.row.custom_prices, ...custom }).map(([k, v]) => [k, { value: v }])),
        productId: item.productId,
      };
      pending.set(id, { index, row: { ...pricesTable.rowOf(price), price_list_id: list.id, season } as repo.PriceUpsertRow });
      indexOf.set(index, id);
    });
    const written = await repo.upsertPrices(tx, accountId, [...pending.values()].map((p) => p.row));
    const byId = new Map(written.map((w) => [`${w.price_list_id}/${w.product_id}/${w.season}`, w]));
    await enqueue(
      tx,
      written.map((row) => priceChanged(topics.pricingPriceUpserted, accountId, row, BigInt(row.version))),
    );
    for (const [index, id] of indexOf) {
      // Not written: sent as stored, so nothing changed and nothing is announced.
      const w = byId.get(id);
      done[index] = !w ? outcome(200, items[index].key, "unchanged") : w.created ? outcome(201, items[index].key, "created") : outcome(200, items[index].key, "updated");
    }
    return done;
  }, (result) => result.some((o) => o && o.statusCode < 300));
  return result.map((o, i) => o ?? outcome(500, items[i].key, "item not answered"));
}

/**
 * A PriceChanged of one price alone (a product's other prices are not read: the consumers keep
 * them by price_id), with where it stands among the product's prices.
 */
const priceChanged = (topic: typeof topics.pricingPriceUpserted, accountId: string, row: repo.PriceRow, version: bigint) =>
  outboxEntry(topic, accountId, row.product_id, {
    accountId,
    productId: row.product_id,
    version,
    price: priceFromRow(row),
    priceId: row.id,
    listOrder: BigInt(row.list_seq),
    priceOrder: BigInt(row.price_seq),
  });

/** DELETE /prices/batch: each key's prices of one list (and season, when sent); 404 when it had none. */
export async function deletePrices(ctx: ServiceContext, accountId: string, req: pricingV1.DeletePricesRequest): Promise<ItemOutcome[]> {
  const result = await commit(ctx, async (tx) => {
    const list = await repo.findPriceList(tx, accountId, req.listExternalId);
    if (!list) return req.keys.map((k) => outcome(404, k.key, `price list ${req.listExternalId} not found`));
    const ids = req.keys.filter((k) => isUuid(k.productId)).map((k) => k.productId);
    const deleted = await repo.deletePrices(tx, accountId, list.id, [...new Set(ids)], req.season);
    await enqueue(
      tx,
      deleted.map((row) => priceChanged(topics.pricingPriceDeleted, accountId, row, BigInt(row.version) + 1n)),
    );
    const count = new Map<string, number>();
    for (const row of deleted) count.set(row.product_id, (count.get(row.product_id) ?? 0) + 1);
    return req.keys.map((k) => {
      if (!isUuid(k.productId)) return outcome(404, k.key, `SKU ${k.key} not found`);
      const n = count.get(k.productId) ?? 0;
      count.set(k.productId, 0);
      return n ? outcome(200, k.key, `deleted ${n} price${n === 1 ? "" : "s"}`) : outcome(404, k.key, `no price for ${k.key} in price list ${req.listExternalId}`);
    });
  }, (result) => result.some((o) => o.statusCode === 200));
  return result;
}

export async function listPrices(db: Db, accountId: string, page: repo.Page, listExternalId?: string) {
  const listId = listExternalId === undefined ? undefined : (await listOrMissing(db, accountId, listExternalId)).id;
  return repo.listPrices(db, accountId, page, listId);
}

export async function listOrMissing(db: Db, accountId: string, externalId: string) {
  const list = await repo.findPriceList(db, accountId, externalId);
  if (!list) throw notFound(`price list ${externalId} not found`);
  return list;
}

/** Every price, chunk by chunk (keyset on seq): neither the service nor the gateway holds them all. */
export async function* streamPrices(db: Db, accountId: string, listExternalId: string | undefined, chunk = 2000) {
  const listId = listExternalId === undefined ? undefined : (await listOrMissing(db, accountId, listExternalId)).id;
  let after = 0;
  for (;;) {
    const rows = await repo.pricesAfter(db, accountId, after, chunk, listId);
    if (rows.length) yield rows;
    if (rows.length < chunk) return;
    after = rows[rows.length - 1].seq;
  }
}
