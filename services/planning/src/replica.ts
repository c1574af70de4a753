import { timestampDate } from "@bufbuild/protobuf/wkt";
import { topics, type accountsMessagesV1, type catalogueMessagesV1, type inventoryMessagesV1, type ordersMessagesV1, type ordersV1 } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { dispatch, on, type ConsumerDefinition, type Delivery } from "@analytics/rpc";
import * as repo from "./repository";

/**
 * The replica's consumers. Each message carries the whole state of its aggregate and a version
 * that grows with every write; a row is replaced only by a newer version (last writer wins), so
 * duplicates, replays and any interleaving converge to the state of the newest versions. A batch
 * is a fixed handful of set-based statements whatever its size.
 *
 * Warehouses, stock, orders, transactions and account settings are stored as their messages' fields
 * (repository.ts, the tables' `only`); SKUs and order lines are rows of their own (renamed,
 * defaulted, derived fields), mapped here.
 */

/** Keeps, per key, the message with the highest version (a batch may hold several). */
function newestByKey<T extends { version: bigint }>(items: T[], key: (item: T) => string): T[] {
  const newest = new Map<string, T>();
  for (const item of items) {
    const seen = newest.get(key(item));
    if (!seen || seen.version < item.version) newest.set(key(item), item);
  }
  return [...newest.values()];
}

const orNull = (s: string | undefined) => (s === undefined ? null : s);

export async function applySkus(tx: Tx, messages: catalogueMessagesV1.SkuChanged[]): Promise<void> {
  const rows = newestByKey(
    messages.filter((m) => m.product),
    (m) => `${m.accountId}/${m.skuId}`,
  ).map(({ accountId, skuId, version, product: p }) => ({
    account_id: accountId,
    sku_id: skuId,
    version,
    key: p!.key,
    sku: orNull(p!.sku),
    ean: orNull(p!.ean),
    status: p!.status ?? 2,
    active_planning: p!.activePlanning ?? true,
    season: orNull(p!.season),
    product_group_id: orNull(p!.productGroupId),
    variant_group_id: orNull(p!.variantGroupId),
    brand: orNull(p!.brandName),
    category: orNull(p!.categoryName),
    size: orNull(p!.size),
    department: orNull(p!.department),
    gender: orNull(p!.gender),
    collection: orNull(p!.collection),
    color: orNull(p!.color),
    sub_category: orNull(p!.subCategory),
    product_type: orNull(p!.productType),
    merchandise_type: orNull(p!.merchandiseType),
    sku_seq: p!.seq ? String(p!.seq) : null,
    pim_custom: [p!.pimCustom1, p!.pimCustom2, p!.pimCustom3, p!.pimCustom4, p!.pimCustom5, p!.pimCustom6, p!.pimCustom7, p!.pimCustom8, p!.pimCustom9, p!.pimCustom10].map(orNull),
  }));
  // A SKU that changes group moves its figures: both groups changed.
  await repo.recordRegroupedSkus(
    tx,
    rows.map(({ account_id, sku_id, version, season, product_group_id, variant_group_id, key, sku, ean }) => ({ account_id, sku_id, version, season, product_group_id, variant_group_id, key, sku, ean })),
  );
  // A SKU whose group, status or names change takes its figures off its groups before the change
  // and adds them after (one that is not stored, an older version, moves nothing).
  const before = await repo.storedSkuPlaces(tx, rows);
  const moved = rows.filter((r) => {
    const was = before.get(`${r.account_id}/${r.sku_id}`);
    return !was || repo.placeDiffers(was, r);
  });
  // (A SKU new to the replica has nothing in any group yet.)
  await repo.moveGroupFigures(tx, moved.filter((r) => before.has(`${r.account_id}/${r.sku_id}`)), -1, "all");
  const written = new Set((await repo.storeNewerSkus(tx, rows)).map((r) => `${r.account_id}/${r.sku_id}`));
  // A SKU new to the replica, or named by another key, sku or EAN, is matched to its sales again.
  const renamed = moved.filter((r) => {
    const was = before.get(`${r.account_id}/${r.sku_id}`);
    return written.has(`${r.account_id}/${r.sku_id}`) && (!was || was.key !== r.key || was.sku !== r.sku || was.ean !== r.ean);
  });
  await repo.rematchSkuMonths(tx, renamed.map(({ account_id, sku_id }) => ({ account_id, sku_id })));
  await repo.moveGroupFigures(tx, moved, 1, "all");
}

/**
 * Runs a change of these SKUs' stock, triggers, PO lines or warehouses with their figures taken off
 * their groups (group_stock, group_po_months) before and added back after, as they are then.
 */
async function movingGroupFigures(tx: Tx, skus: { account_id: string; sku_id: string }[], change: () => Promise<unknown>): Promise<void> {
  await repo.moveGroupFigures(tx, skus, -1, "stock");
  await change();
  await repo.moveGroupFigures(tx, skus, 1, "stock");
}

export async function applyWarehouses(tx: Tx, messages: inventoryMessagesV1.WarehouseChanged[]): Promise<void> {
  if (!messages.length) return;
  // A warehouse deleted (or back) moves the stock and triggers held in it.
  const warehouses = messages.map((m) => ({ account_id: m.accountId, warehouse_id: m.warehouseId }));
  const skus = [...(await repo.skusOf(tx, "stock", "warehouse_id", warehouses)), ...(await repo.skusOf(tx, "stock_trigger_minimums", "warehouse_id", warehouses))];
  await movingGroupFigures(tx, skus, () => repo.storeNewerWarehouses(tx, newestByKey(messages, (m) => `${m.accountId}/${m.warehouseId}`)));
}

export async function applyStock(tx: Tx, messages: inventoryMessagesV1.StockUpdated[]): Promise<void> {
  if (!messages.length) return;
  const skus = messages.map((m) => ({ account_id: m.accountId, sku_id: m.skuId }));
  await movingGroupFigures(tx, skus, () => repo.storeNewerStock(tx, newestByKey(messages, (m) => `${m.accountId}/${m.skuId}/${m.warehouseId}`)));
}

/** What a purchase order's lines count as: cancelled (3), draft (4, or flagged draft), else PO volume. */
export function lineKind(m: ordersMessagesV1.PurchaseOrderChanged): "po" | "draft" | "cancelled" {
  if (m.deliveryStatus === 3) return "cancelled";
  if (m.deliveryStatus === 4 || m.isDraft) return "draft";
  return "po";
}

export async function applyPurchaseOrders(tx: Tx, messages: ordersMessagesV1.PurchaseOrderChanged[]): Promise<void> {
  const orders = newestByKey(messages, (m) => `${m.accountId}/${m.purchaseOrderId}`);
  if (!orders.length) return;
  // The SKUs of the orders' stored lines and of their new ones.
  const skus = [
    ...(await repo.skusOf(tx, "purchase_order_lines", "purchase_order_id", orders.map((m) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId })))),
    ...orders.flatMap((m) => m.lines.filter((l) => l.skuId).map((l) => ({ account_id: m.accountId, sku_id: l.skuId }))),
  ];
  await movingGroupFigures(tx, skus, () => replacePurchaseOrders(tx, orders));
}

/** Stores the orders newer than the replica's, with their lines. */
async function replacePurchaseOrders(tx: Tx, orders: ordersMessagesV1.PurchaseOrderChanged[]): Promise<void> {
  const changedAt = (m: ordersMessagesV1.PurchaseOrderChanged) => (m.updatedAt ? timestampDate(m.updatedAt).toISOString() : null);
  // 1. The orders whose version is newer than the stored one (new orders included).
  const applied = await repo.storeNewerPurchaseOrders(tx, orders);
  if (!applied.length) return;
  const won = new Set(applied.map((r) => `${r.account_id}/${r.purchase_order_id}`));
  const winners = orders.filter((m) => won.has(`${m.accountId}/${m.purchaseOrderId}`));
  // 2. Their lines are replaced by the new version's lines. A (SKU, warehouse) of the old lines
  // that the new ones no longer have leaves no line behind: its group is recorded as changed.
  const at = new Map(winners.map((m) => [`${m.accountId}/${m.purchaseOrderId}`, changedAt(m)]));
  const kept = winners.flatMap((m) => m.lines.map((l) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId, sku_id: l.skuId, external_warehouse_id: l.externalWarehouseId })));
  await repo.recordDroppedLines(
    tx,
    winners.map((m) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId, changed_at: at.get(`${m.accountId}/${m.purchaseOrderId}`) ?? null })),
    kept,
  );
  await repo.deleteOrderLines(
    tx,
    winners.map((m) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId })),
  );
  const lines = winners.flatMap((m) => {
    const kind = lineKind(m);
    const at = changedAt(m);
    // The last line of a repeated item id wins, as it would in the source.
    const byItem = new Map(m.lines.map((l) => [l.itemId, l]));
    return [...byItem.values()].map((l) => ({
      account_id: m.accountId,
      purchase_order_id: m.purchaseOrderId,
      item_id: l.itemId,
      sku_id: l.skuId,
      external_warehouse_id: l.externalWarehouseId,
      delivery_date: l.deliveryDate || null,
      open_quantity: Math.max(0, l.openQuantity),
      kind,
      changed_at: at,
    }));
  });
  if (!lines.length) return;
  await repo.insertOrderLines(tx, lines);
}

/** Whether an item's units are returned (2), not sold: its own type wins over its transaction's; unset, a sale. */
const isReturn = (t: ordersV1.Transaction, item: ordersV1.TransactionItem) => (item.type ?? t.type ?? 1) === 2;

/**
 * A transaction's sales lines: per item, its units shipped from each warehouse (by external id)
 * and the rest under "". None when it is cancelled, or has no date to count it on (createdDate,
 * else when it was first stored).
 */
function salesLinesOf(m: ordersMessagesV1.TransactionChanged) {
  const t = m.transaction;
  const soldAt = t?.createdDate ?? t?.createdAt;
  if (!t || t.cancelledDate || !soldAt) return [];
  const changedAt = t.updatedAt ? timestampDate(t.updatedAt).toISOString() : null;
  return t.items.flatMap((item) => {
    const perWarehouse = new Map<string, number>();
    let unshipped = item.quantity;
    for (const s of item.shipments) {
      const quantity = Math.min(s.quantity, unshipped);
      unshipped -= quantity;
      const warehouse = s.externalWarehouseId ?? "";
      perWarehouse.set(warehouse, (perWarehouse.get(warehouse) ?? 0) + quantity);
    }
    perWarehouse.set("", (perWarehouse.get("") ?? 0) + unshipped);
    const sign = isReturn(t, item) ? -1 : 1;
    return [...perWarehouse].filter(([, units]) => units > 0).map(([warehouse, units]) => ({
      account_id: m.accountId,
      transaction_id: m.transactionId,
      external_item_id: item.externalItemId,
      external_warehouse_id: warehouse,
      key: orNull(item.key),
      sku: orNull(item.sku),
      ean: orNull(item.ean),
      channel: t.channel ?? 0,
      sold_at: timestampDate(soldAt).toISOString(),
      units: sign * units,
      changed_at: changedAt,
    }));
  });
}

/** Transactions: a newer version replaces all of the transaction's sales lines, as orders replace their PO lines. */
export async function applyTransactions(tx: Tx, messages: ordersMessagesV1.TransactionChanged[]): Promise<void> {
  const transactions = newestByKey(messages, (m) => `${m.accountId}/${m.transactionId}`);
  if (!transactions.length) return;
  const applied = await repo.storeNewerSalesTransactions(tx, transactions);
  if (!applied.length) return;
  const won = new Set(applied.map((r) => `${r.account_id}/${r.transaction_id}`));
  const winners = transactions.filter((m) => won.has(`${m.accountId}/${m.transactionId}`));
  const lines = winners.flatMap(salesLinesOf);
  // Stored lines the new version no longer has (cancelled, removed, moved) leave no line behind
  // to say their group changed: recorded as changed, when the transaction changed at the source.
  await repo.recordDroppedSales(
    tx,
    winners.map((m) => ({ account_id: m.accountId, transaction_id: m.transactionId, changed_at: m.transaction?.updatedAt ? timestampDate(m.transaction.updatedAt).toISOString() : null })),
    lines.map(({ account_id, transaction_id, key, sku, ean, external_warehouse_id }) => ({ account_id, transaction_id, key, sku, ean, external_warehouse_id })),
  );
  const replaced = await repo.deleteSalesLines(
    tx,
    winners.map((m) => ({ account_id: m.accountId, transaction_id: m.transactionId })),
  );
  await repo.insertSalesLines(tx, lines);
  // The rollups: plus the new lines, minus the ones they replace.
  await repo.addToSalesRollups(tx, [...lines.map((l) => ({ ...l, sign: 1 as const })), ...replaced.map((l) => ({ ...l, sign: -1 as const }))]);
}

/** Account settings; a timezone change re-dates every sale of the account: its rollups are recomputed (a growth change: its group months). */
export async function applyAccountSettings(tx: Tx, messages: accountsMessagesV1.AccountSettingsChanged[]): Promise<void> {
  const settings = newestByKey(messages, (m) => m.accountId);
  if (!settings.length) return;
  const accounts = settings.map((m) => m.accountId);
  const before = await repo.salesSettings(tx, accounts);
  await repo.storeNewerAccounts(tx, settings);
  const after = await repo.salesSettings(tx, accounts);
  const redated = accounts.filter((a) => before.get(a)?.tz !== after.get(a)?.tz);
  await repo.recomputeSalesRollups(tx, redated);
  // Another growth moves every baseline plan (each SKU's rounded): the group months again.
  await repo.recomputeGroupMonths(
    tx,
    accounts.filter((a) => !redated.includes(a) && before.get(a)?.growth !== after.get(a)?.growth),
  );
}

/** What is still to arrive of a distribution order: nothing once it is COMPLETED or CANCELLED (or has a cancelledDate). */
export function openQuantityOf(o: ordersV1.DistributionOrder): number {
  if (o.cancelledDate || o.status === "COMPLETED" || o.status === "CANCELLED") return 0;
  return Math.max(0, o.quantity - o.deliveredQuantity);
}

/** Distribution orders: one row per order, its SKU and warehouses as sent (matched when read). */
export async function applyDistributionOrders(tx: Tx, messages: ordersMessagesV1.DistributionOrderChanged[]): Promise<void> {
  const rows = newestByKey(
    messages.filter((m) => m.distributionOrder),
    (m) => `${m.accountId}/${m.distributionOrderId}`,
  ).map(({ accountId, distributionOrderId, version, distributionOrder: o }) => ({
    account_id: accountId,
    distribution_order_id: distributionOrderId,
    version,
    key: orNull(o!.key),
    sku: orNull(o!.sku),
    from_external_warehouse_id: o!.fromWarehouseExternalId ?? "",
    to_external_warehouse_id: o!.toWarehouseExternalId ?? "",
    delivered_at: o!.deliveryDate ? timestampDate(o!.deliveryDate).toISOString() : null,
    open_quantity: openQuantityOf(o!),
    changed_at: o!.updatedAt ? timestampDate(o!.updatedAt).toISOString() : null,
  }));
  // An order that now names another SKU or warehouse leaves its old group with no row to say so.
  await repo.recordMovedDistributionOrders(tx, rows);
  await repo.storeNewerDistributionOrders(tx, rows);
}

/** Stock triggers: the min of a SKU in a warehouse (by id; "" is none). */
export async function applyStockTriggers(tx: Tx, messages: inventoryMessagesV1.StockTriggerChanged[]): Promise<void> {
  const rows = newestByKey(
    messages.filter((m) => m.trigger),
    (m) => `${m.accountId}/${m.stockTriggerId}`,
  ).map(({ accountId, stockTriggerId, version, trigger: t }) => ({
    account_id: accountId,
    stock_trigger_id: stockTriggerId,
    version,
    sku_id: t!.skuId || null,
    warehouse_id: t!.warehouseId || null,
    min: t!.min ?? null,
  }));
  // The SKUs the triggers named before and name now.
  const skus = [
    ...(await repo.skusOf(tx, "stock_trigger_minimums", "stock_trigger_id", rows.map(({ account_id, stock_trigger_id }) => ({ account_id, stock_trigger_id })))),
    ...rows.flatMap((r) => (r.sku_id ? [{ account_id: r.account_id, sku_id: r.sku_id }] : [])),
  ];
  await movingGroupFigures(tx, skus, () => repo.storeNewerStockTriggerMinimums(tx, rows));
}

/** A batch's messages, by the replica table they go to. */
interface ReplicaBatch {
  skus: catalogueMessagesV1.SkuChanged[];
  warehouses: inventoryMessagesV1.WarehouseChanged[];
  stock: inventoryMessagesV1.StockUpdated[];
  orders: ordersMessagesV1.PurchaseOrderChanged[];
  transactions: ordersMessagesV1.TransactionChanged[];
  settings: accountsMessagesV1.AccountSettingsChanged[];
  distributionOrders: ordersMessagesV1.DistributionOrderChanged[];
  stockTriggers: inventoryMessagesV1.StockTriggerChanged[];
}

const sortDelivery = dispatch<void, ReplicaBatch>(
  // Backfilled: a product as stored, re-announced once by the catalogue for its EAN (same version).
  on([...topics.catalogueSkuTopics, topics.catalogueSkuBackfilled], (d, batch) => void batch.skus.push(d.message)),
  on(topics.inventoryWarehouseUpserted, (d, batch) => void batch.warehouses.push(d.message)),
  // A message on the deleted subject is a deletion whatever its flag says.
  on(topics.inventoryWarehouseDeleted, (d, batch) => void batch.warehouses.push({ ...d.message, deleted: true })),
  on(topics.inventoryStockUpdated, (d, batch) => void batch.stock.push(d.message)),
  on([topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated], (d, batch) => void batch.orders.push(d.message)),
  // Backfilled: a transaction as stored, re-announced once by the orders service for planning (applied by version like the others).
  on([topics.ordersTransactionCreated, topics.ordersTransactionUpdated, topics.ordersTransactionBackfilled], (d, batch) => void batch.transactions.push(d.message)),
  on(topics.accountSettingsChanged, (d, batch) => void batch.settings.push(d.message)),
  on([topics.ordersDistributionOrderCreated, topics.ordersDistributionOrderUpdated, topics.ordersDistributionOrderBackfilled], (d, batch) => void batch.distributionOrders.push(d.message)),
  on([...topics.inventoryStockTriggerTopics, topics.inventoryStockTriggerBackfilled], (d, batch) => void batch.stockTriggers.push(d.message)),
);

/** Applies a batch of deliveries of any replica topic: a handful of statements per kind present. */
export async function applyDeliveries(tx: Tx, deliveries: Delivery[]): Promise<void> {
  const batch: ReplicaBatch = { skus: [], warehouses: [], stock: [], orders: [], transactions: [], settings: [], distributionOrders: [], stockTriggers: [] };
  const accepted = new Set<string>();
  for (const d of deliveries) {
    // A message counts for the account it was published for; a payload naming another is ignored.
    if (!("accountId" in d.message) || d.message.accountId !== d.accountId) continue;
    sortDelivery(d, batch);
    accepted.add(d.accountId);
  }
  // The accounts' stored plans stay as they are while the batch moves their group months.
  await repo.lockAccountPlans(tx, [...accepted]);
  await applySkus(tx, batch.skus);
  await applyWarehouses(tx, batch.warehouses);
  await applyStock(tx, batch.stock);
  await applyPurchaseOrders(tx, batch.orders);
  await applyTransactions(tx, batch.transactions);
  await applyAccountSettings(tx, batch.settings);
  await applyDistributionOrders(tx, batch.distributionOrders);
  await applyStockTriggers(tx, batch.stockTriggers);
  // Any accepted message may change the account's planning answers: their weak ETag moves on.
  await repo.bumpAccountVersions(tx, accepted);
}

/** Every subject the replica reads. */
export const replicaTopics = sortDelivery.topics;

/** One durable consumer for the whole replica (one transaction per batch, with its inbox rows). */
export const replicaConsumer: ConsumerDefinition = {
  name: "replica",
  topics: replicaTopics,
  handle: applyDeliveries,
};
