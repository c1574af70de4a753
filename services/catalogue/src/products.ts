import type { Db, Tx } from "@analytics/db";
import { isIntegerId, isUuid, mapInSlices } from "@analytics/db";
import type { ServiceContext } from "@analytics/rpc";
import type { OutboxEntry } from "@analytics/outbox";
import { answer, invalidItem, productBatch, type ItemOutcome } from "./batch";
import { announceProducts, announceRows, brandCreated, categoryCreated, type ProductVerb } from "./changes";
import * as repo from "./repository";
import type { Page, ProductFilter, SkuRef } from "./repository";
import { brandFromRow, categoryFromRow, newProduct, productFromRow, productsTable, unclearable, withClearedFields, withSentFields, type Product } from "./resources";
import { checkText, keyProblem, productViolations, storedProductViolations, textProblem } from "./validation";

/**
 * Products as plain functions. A batch is validated item by item first; the valid items are then
 * written set-based in one transaction with their outbox rows, so a failing item never stops the
 * others and never half-writes itself.
 */

function checkFilter(filter: ProductFilter): void {
  if (filter.key !== undefined) checkText("key", filter.key);
  const lists = { sku_id: filter.ids, skus: filter.skus, seasons: filter.seasons, productgroupids: filter.productGroupIds, variantgroupids: filter.variantGroupIds };
  for (const [name, values] of Object.entries(lists)) values.forEach((v, i) => checkText(`${name}[${i}]`, v));
}

export function listProducts(db: Db, accountId: string, filter: ProductFilter, page: Page) {
  checkFilter(filter);
  return repo.listProducts(db, accountId, filter, page);
}

/** Rows per chunk of a streamed page: about 0.5 MB of JSON, whatever the page size. */
export const STREAM_CHUNK = 500;

/**
 * One page read in chunks of STREAM_CHUNK rows, so a 10,000-product page is never held whole:
 * the page's ids first (an index-only scan), then the rows of each chunk. The first chunk carries
 * the total (`totalCount`, 0 on the others); an empty page is one empty chunk.
 */
export function streamProducts(db: Db, accountId: string, filter: ProductFilter, page: Page, versionRead?: VersionRead) {
  return pageInChunks(db, accountId, filter, page, (ids) => repo.findProducts(db, accountId, ids), versionRead);
}

/** The same page as REST JSON built by Postgres (repo.findProductsJson), chunk by chunk. */
export async function* streamProductsJson(db: Db, accountId: string, filter: ProductFilter, page: Page, versionRead?: VersionRead) {
  for await (const { rows, totalCount } of pageInChunks(db, accountId, filter, page, (ids) => repo.findProductsJson(db, accountId, ids), versionRead)) {
    yield { ...jsonChunk(rows), totalCount };
  }
}

/** The products' JSON parts one after the other, with the byte offset past each part, and their stored imageUrls. */
function jsonChunk(rows: { id: string; parts: string[]; image_url: string | null }[]) {
  // Each part is encoded straight into one buffer and its end read off the write: one pass over
  // ~0.5 MB of text instead of three (measure, join, encode). UTF-8 takes at most 3 bytes per
  // UTF-16 unit, so the buffer always holds it.
  let units = 0;
  for (const r of rows) for (const part of r.parts) units += part.length;
  const json = Buffer.allocUnsafe(units * 3);
  let end = 0;
  const ends: number[] = [];
  for (const r of rows) for (const part of r.parts) ends.push((end += json.write(part, end)));
  const imageUrls: Record<number, string> = {};
  rows.forEach((r, i) => r.image_url !== null && (imageUrls[i] = r.image_url));
  return { productsJson: json.subarray(0, end), ids: rows.map((r) => r.id), ends, imageUrls };
}

/** Takes the account's data version read with a page's ids, before its first chunk (libs/rpc answerDataVersion). */
type VersionRead = (version: string) => void;

async function* pageInChunks<R>(db: Db, accountId: string, filter: ProductFilter, page: Page, read: (ids: string[]) => Promise<R[]>, versionRead?: VersionRead) {
  checkFilter(filter);
  const { ids, total, version } = await repo.pageOfProductIds(db, accountId, filter, page);
  versionRead?.(version);
  if (!ids.length) yield { rows: [] as R[], totalCount: total };
  let totalCount = total;
  for await (const rows of readAhead(ids, read)) {
    yield { rows, totalCount };
    totalCount = 0;
  }
}

/**
 * The rows of `ids` chunk by chunk, the next chunk's query already running while the current
 * chunk is sent (Postgres works on its own core meanwhile); never more than one chunk ahead.
 */
export async function* readAhead<R>(ids: string[], read: (ids: string[]) => Promise<R[]>, size = STREAM_CHUNK) {
  const chunk = (from: number) => {
    const rows = read(ids.slice(from, from + size));
    // Awaited below, unless the caller stops first: then its failure is nobody's to handle.
    rows.catch(() => undefined);
    return rows;
  };
  let next = ids.length ? chunk(0) : undefined;
  for (let from = 0; from < ids.length; from += size) {
    const rows = await next!;
    if (from + size < ids.length) next = chunk(from + size);
    yield rows;
  }
}

/** Fields sent as null must be writable fields other than the key. */
const clearedViolations = (names: string[]) => unclearable(names).map((path) => ({ path, message: "cannot be null" }));

const trimmedName = (name: string | undefined) => name?.trim() || undefined;

/**
 * The brands and categories `products` name (created when new): each product's row as written
 * (with its brand's and category's ids; the repository gives a new product its id), and the
 * messages of those created.
 */
async function namedRows(tx: Tx, accountId: string, products: Product[]) {
  const brandNames = products.map((p) => trimmedName(p.brandName)).filter((n) => n !== undefined);
  const categoryNames = products.map((p) => trimmedName(p.categoryName)).filter((n) => n !== undefined);
  const brands = await repo.ensureNamed(tx, "brands", accountId, brandNames);
  const categories = await repo.ensureNamed(tx, "categories", accountId, categoryNames);
  const idOf = (ids: Map<string, string>, name: string | undefined) => (name ? ids.get(name.trim().toLowerCase()) : undefined) ?? null;
  const rowOf = (p: Product) => ({ ...productsTable.rowOf(p), brand_id: idOf(brands.ids, p.brandName), category_id: idOf(categories.ids, p.categoryName) });
  const messages = [
    ...brands.created.map((b) => brandCreated(accountId, brandFromRow(b))),
    ...categories.created.map((c) => categoryCreated(accountId, categoryFromRow(c))),
  ];
  return { rowOf, messages };
}

/**
 * Writes complete products by key: first the brands and categories they name (created when new),
 * then the products. Returns what was written and the messages of created brands and categories.
 */
async function storeProducts(tx: Tx, accountId: string, products: Product[]) {
  const { rowOf, messages } = await namedRows(tx, accountId, products);
  const written = await repo.writeProducts(tx, accountId, await mapInSlices(products, rowOf));
  return { written, messages };
}

/**
 * Announces the written products that changed (a product sent as stored is no change: nothing is
 * queued for it) and returns every written product as stored.
 */
async function announceChanged(tx: Tx, accountId: string, written: { id: string; created: boolean }[], changed: Set<string>, messages: OutboxEntry[]) {
  const verbs = new Map<string, ProductVerb>(written.filter((w) => changed.has(w.id)).map((w) => [w.id, w.created ? "created" : "updated"]));
  const products = await announceProducts(tx, accountId, verbs, messages);
  const unchanged = written.filter((w) => !changed.has(w.id)).map((w) => w.id);
  for (const row of await repo.findProducts(tx, accountId, unchanged)) products.set(row.id, productFromRow(row));
  return products;
}

/**
 * Full create or update by key (POST /products, /products/batch, a products import's chunk): 201
 * created, 200 updated (or unchanged: a product sent as stored), 400 invalid. An old key writes
 * to the product it was switched from. When a batch names one product twice, the later item wins,
 * as if the items ran in order. `withValues` false: outcomes without the product (an import's, a
 * batch answered with results only), so that nothing is read back for unchanged products.
 *
 * A staged write (docs/imports.md, "The staging engine"): the products to write COPYed into a
 * staging table, one upsert from it that answers the products it wrote as stored, and their
 * messages from that answer, nothing read back.
 */
export async function upsertProducts(ctx: ServiceContext, accountId: string, inputs: Product[], cleared: string[][] = [], withValues = true): Promise<ItemOutcome[]> {
  const items = await mapInSlices(inputs, (input, n) => ({ input, product: newProduct(input), cleared: cleared[n] ?? [] }));
  const check = ({ input, product, cleared }: (typeof items)[number]) => {
    const problems = [...storedProductViolations(product), ...productViolations(input), ...clearedViolations(cleared)];
    return problems.length ? invalidItem(input.key, "key", problems) : undefined;
  };
  return productBatch(ctx, accountId, items, check, async (tx, valid, reply) => {
    const owners = await repo.keyOwners(tx, accountId, [...new Set(valid.map((v) => v.item.product.key))]);
    valid.forEach(({ item }) => (item.product.key = owners.get(item.product.key)?.key ?? item.product.key));
    // Of items naming one product the last is written, at the place of the first.
    const last = new Map(valid.map(({ item }) => [item.product.key, item]));
    const { rowOf, messages } = await namedRows(tx, accountId, [...last.values()].map((item) => item.product));
    await repo.stageProducts(tx, [...last.values()].map((item, ord) => ({ ord, row: rowOf(item.product) })));
    const rows = new Map((await repo.writeStagedProducts(tx, accountId)).map((r) => [r.key, r]));
    const created = new Set([...rows.values()].filter((r) => r.created).map((r) => r.key));
    // A full write keeps an uploaded image unless imageUrl is sent (a value, or null to remove it):
    // the removals (rare) are a write of their own after the upsert, and their products read back.
    const removing = [...last].filter(([, item]) => item.cleared.includes("imageUrl")).map(([key]) => key);
    if (removing.length) {
      const ids = (await repo.resolveReferences(tx, accountId, removing.map((key) => ({ key })))).map((m) => m!.id);
      const removed = await repo.clearImageUrls(tx, accountId, ids, [...rows.values()].map((r) => r.id));
      for (const row of await repo.findProducts(tx, accountId, removed)) rows.set(row.key, { ...row, created: created.has(row.key) });
    }
    const written = [...rows.values()].sort((a, b) => Number(a.seq) - Number(b.seq));
    const products = await announceRows(tx, accountId, written, (r) => (r.created ? "created" : "updated"), messages);
    const unchanged = withValues ? [...last.keys()].filter((key) => !rows.has(key)) : [];
    if (unchanged.length) {
      const ids = (await repo.resolveReferences(tx, accountId, unchanged.map((key) => ({ key })))).map((m) => m!.id);
      for (const row of await repo.findProducts(tx, accountId, ids)) products.set(row.id, productFromRow(row));
    }
    const idOfKey = new Map([...products.values()].map((p) => [p.key, p.id]));
    const answered = new Set<string>();
    for (const { i, item } of valid) {
      const key = item.product.key;
      const isNew = created.has(key) && !answered.has(key);
      answered.add(key);
      const message = isNew ? "created" : rows.has(key) ? "updated" : "unchanged";
      const id = idOfKey.get(key);
      reply(i, { ...answer(isNew ? 201 : 200, item.input.key, "key", message), value: id === undefined ? undefined : products.get(id) });
    }
  });
}

/**
 * Partial update (PUT /products): each item names an existing product by `id`, else by `key` (or
 * an old key); the fields it carries replace the stored ones, the others are kept. 200 updated,
 * 400 invalid, 404 unknown product. A key is changed only by a key switch.
 */
export function updateProducts(ctx: ServiceContext, accountId: string, patches: Product[], cleared: string[][] = []): Promise<ItemOutcome[]> {
  const referenceOf = (p: Product) => (p.id && !p.key ? { reference: p.id, field: "id" } : { reference: p.key, field: "key" });
  const check = (patch: Product, i: number) => {
    const { reference, field } = referenceOf(patch);
    const key = patch.id && !patch.key ? textProblem(patch.id) : keyProblem(patch.key);
    const problems = [...(key ? [{ path: field, message: key }] : []), ...productViolations(patch), ...clearedViolations(cleared[i] ?? [])];
    return problems.length ? invalidItem(reference, field, problems) : undefined;
  };
  return productBatch(ctx, accountId, patches, check, async (tx, valid, reply) => {
    const byKey = await repo.resolveReferences(tx, accountId, valid.map((v) => ({ key: v.item.key || undefined })));
    // `id` is the product's UUID or its integer id (what REST answers as `id`).
    const bySeq = await repo.productIdsOfSeqs(tx, accountId, valid.map((v) => v.item.id).filter(isIntegerId));
    const targetIds = valid.map(({ item }, n) => (item.id ? (isUuid(item.id) ? item.id : bySeq.get(item.id)) : byKey[n]?.id));
    const rows = await repo.findProducts(tx, accountId, [...new Set(targetIds.filter((id) => id !== undefined))]);
    const stored = new Map(rows.map((r) => [r.id, productFromRow(r)]));
    const drafts = new Map<string, Product>();
    const applied: { i: number; id: string }[] = [];
    valid.forEach(({ i, item: patch }, n) => {
      const { reference, field } = referenceOf(patch);
      const id = targetIds[n];
      const existing = id === undefined ? undefined : (drafts.get(id) ?? stored.get(id));
      if (id === undefined || !existing) return reply(i, answer(404, reference, field, `product ${reference} not found`));
      if (patch.id && patch.key && byKey[n]?.id !== id) {
        const message = "does not name the product of this id; keys change only by key switch";
        return reply(i, invalidItem(reference, field, [{ path: "key", message }]));
      }
      const merged = withClearedFields(withSentFields(existing, patch), cleared[i] ?? []);
      merged.key = existing.key;
      const problems = storedProductViolations(merged);
      if (problems.length) return reply(i, invalidItem(reference, field, problems));
      drafts.set(id, merged);
      applied.push({ i, id });
    });
    if (!drafts.size) return;
    const { written, messages } = await storeProducts(tx, accountId, [...drafts.values()]);
    const changed = new Set(written.filter((w) => w.changed).map((w) => w.id));
    const products = await announceChanged(tx, accountId, written, changed, messages);
    for (const { i, id } of applied) {
      const { reference, field } = referenceOf(patches[i]);
      reply(i, { ...answer(200, reference, field, changed.has(id) ? "updated" : "unchanged"), value: products.get(id) });
    }
  });
}

/** ResolveSkus: one SKU (or none) per reference, in order; a reference Postgres cannot take finds nothing. */
export function resolveSkus(db: Db, accountId: string, refs: SkuRef[]) {
  const usable = refs.map((r): SkuRef => {
    const ref = { key: r.key || undefined, sku: r.sku || undefined, ean: r.ean || undefined };
    if (Object.values(ref).some((v) => v !== undefined && textProblem(v))) return {};
    return { ...ref, seq: r.seq && r.seq > 0n && r.seq <= BigInt(Number.MAX_SAFE_INTEGER) ? r.seq : undefined, id: r.id && isUuid(r.id) ? r.id : undefined };
  });
  return repo.resolveReferences(db, accountId, usable);
}
