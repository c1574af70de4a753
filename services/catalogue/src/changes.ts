import { topics, type catalogueMessagesV1, type catalogueV1, type Topic } from "@analytics/contracts";
import { mapInSlices, type Db, type Tx } from "@analytics/db";
import { enqueue, enqueueInPages, outboxEntry, type OutboxEntry } from "@analytics/outbox";
import { commit, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import { productFromRow, type Product, type ProductRow } from "./resources";

/**
 * How a change leaves the catalogue: in one transaction with its outbox rows, each a typed
 * message (proto/catalogue/v1/messages.proto) on its topic (libs/contracts/src/topics.ts); the
 * relay is woken after the commit.
 */

export type ProductVerb = "created" | "updated" | "key_switched" | "image_set";

const skuTopics: Record<ProductVerb, Topic<typeof catalogueMessagesV1.SkuChangedSchema>> = {
  created: topics.catalogueSkuCreated,
  updated: topics.catalogueSkuUpdated,
  key_switched: topics.catalogueSkuKeySwitched,
  image_set: topics.catalogueSkuImageSet,
};

/** A product write: as commit, holding the account's product lock (see lockAccountProducts). */
export function commitProductWrite<T>(ctx: ServiceContext, accountId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  return commit(ctx, async (tx) => {
    await repo.lockAccountProducts(tx, accountId);
    return work(tx);
  });
}

export const brandCreated = (accountId: string, brand: catalogueV1.Brand) =>
  outboxEntry(topics.catalogueBrandCreated, accountId, brand.id, { accountId, brand });

export const categoryCreated = (accountId: string, category: catalogueV1.Category) =>
  outboxEntry(topics.catalogueCategoryCreated, accountId, category.id, { accountId, category });

/**
 * Reads the changed products back as stored and writes one SkuChanged for each (after `extra`),
 * in the caller's transaction. Returns them by id.
 */
export async function announceProducts(
  tx: Tx,
  accountId: string,
  verbs: Map<string, ProductVerb>,
  extra: OutboxEntry[] = [],
): Promise<Map<string, Product>> {
  const rows = await repo.findProducts(tx, accountId, [...verbs.keys()]);
  return announceRows(tx, accountId, rows, (row) => verbs.get(row.id)!, extra);
}

/** One SkuChanged for each of `rows` (products as stored, as findProducts reads them), in their order, after `extra`. Returns them by id. */
export async function announceRows<R extends ProductRow>(tx: Tx, accountId: string, rows: R[], verbOf: (row: R) => ProductVerb, extra: OutboxEntry[] = []): Promise<Map<string, Product>> {
  const products = await mapInSlices(rows, (row) => ({ product: productFromRow(row), version: BigInt(row.version as number), verb: verbOf(row) }));
  const entries = products.map(({ product, version, verb }) => skuChanged(skuTopics[verb], accountId, product, version));
  await enqueue(tx, [...extra, ...entries]);
  return new Map(products.map(({ product }) => [product.id, product]));
}

/** A product's SkuChanged on `topic`: the product as stored, with its version. */
const skuChanged = (topic: Topic<typeof catalogueMessagesV1.SkuChangedSchema>, accountId: string, product: Product, version: bigint) =>
  outboxEntry(topic, accountId, product.id, { accountId, skuId: product.id, version, product });

/**
 * Re-announces every stored product, as it is and with its version, on
 * analytics.catalogue.sku.backfilled (planning's replica reads it; it is no change for anyone
 * else), `pageSize` at a time. Answers how many it announced.
 */
export async function announceStoredProducts(db: Db | Tx, pageSize = 500): Promise<number> {
  return enqueueInPages(
    db,
    (last: Awaited<ReturnType<typeof repo.productsPage>>[number] | undefined) => repo.productsPage(db, last, pageSize),
    async (rows) =>
      mapInSlices(rows, (row) => skuChanged(topics.catalogueSkuBackfilled, row.account_id, productFromRow(row), BigInt(row.version as number))),
  );
}
