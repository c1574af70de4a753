import { timestampDate } from "@bufbuild/protobuf/wkt";
import { topics, type accountsMessagesV1, type catalogueMessagesV1, type inventoryMessagesV1, type ordersMessagesV1 } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { isTopic, type ConsumerDefinition, type Delivery } from "@analytics/rpc";

/**
 * The replica's consumers. Each message carries the whole state of its aggregate and a version
 * that grows with every write; a row is replaced only by a newer version (last writer wins), so
 * duplicates, replays and any interleaving converge to the state of the newest versions. A batch
 * is a fixed handful of set-based statements whatever its size.
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

const json = (rows: unknown[]) => JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
const orNull = (s: string | undefined) => (s === undefined ? null : s);

/**
 * Inserts rows (a jsonb array) into `table`, replacing a stored row only when the new one has a
 * higher `version`; answers the keys of the rows that were written.
 */
async function upsertNewer(tx: Tx, table: string, keys: string[], columns: Record<string, string>, rows: object[]): Promise<Record<string, string>[]> {
  if (!rows.length) return [];
  const names = Object.keys(columns);
  const { rows: written } = await tx.raw(
    `INSERT INTO ${table} (${names.join(", ")})
     SELECT ${names.join(", ")} FROM jsonb_to_recordset(?::jsonb) AS x(${names.map((n) => `${n} ${columns[n]}`).join(", ")})
     ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${names.filter((n) => !keys.includes(n)).map((n) => `${n} = excluded.${n}`).join(", ")}
     WHERE ${table}.version < excluded.version
     RETURNING ${keys.join(", ")}`,
    [json(rows)],
  );
  return written;
}

const skuColumns = {
  account_id: "uuid", sku_id: "uuid", version: "bigint", key: "text", sku: "text", status: "int", active_planning: "boolean",
  season: "text", product_group_id: "text", variant_group_id: "text", brand: "text", category: "text", size: "text",
  department: "text", gender: "text", collection: "text", color: "text", sub_category: "text", product_type: "text",
  merchandise_type: "text", pim_custom: "text[]", sku_seq: "bigint",
};

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
  // A SKU with PO lines that changes group moves their volume: both groups changed.
  await tx.raw(
    `INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, season, product_group_id, variant_group_id, key, changed_at)
     SELECT DISTINCT s.account_id, s.sku_id, l.external_warehouse_id, g.season, g.product_group_id, g.variant_group_id, g.key, now()
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, sku_id uuid, version bigint, season text, product_group_id text, variant_group_id text, key text)
     JOIN skus s ON s.account_id = x.account_id AND s.sku_id = x.sku_id AND s.version < x.version
       AND (s.season, s.product_group_id, s.variant_group_id, s.key) IS DISTINCT FROM (x.season, x.product_group_id, x.variant_group_id, x.key)
     JOIN purchase_order_lines l ON l.account_id = s.account_id AND l.sku_id = s.sku_id
     CROSS JOIN LATERAL (VALUES (s.season, s.product_group_id, s.variant_group_id, s.key), (x.season, x.product_group_id, x.variant_group_id, x.key))
       AS g(season, product_group_id, variant_group_id, key)`,
    [json(rows.map(({ account_id, sku_id, version, season, product_group_id, variant_group_id, key }) => ({ account_id, sku_id, version, season, product_group_id, variant_group_id, key })))],
  );
  await upsertNewer(tx, "skus", ["account_id", "sku_id"], skuColumns, rows);
}

export async function applyWarehouses(tx: Tx, messages: inventoryMessagesV1.WarehouseChanged[]): Promise<void> {
  const rows = newestByKey(messages, (m) => `${m.accountId}/${m.warehouseId}`).map((m) => ({
    account_id: m.accountId,
    warehouse_id: m.warehouseId,
    version: m.version,
    external_id: m.externalId,
    name: m.name,
    deleted: m.deleted,
  }));
  await upsertNewer(tx, "warehouses", ["account_id", "warehouse_id"], {
    account_id: "uuid", warehouse_id: "uuid", version: "bigint", external_id: "text", name: "text", deleted: "boolean",
  }, rows);
}

export async function applyStock(tx: Tx, messages: inventoryMessagesV1.StockUpdated[]): Promise<void> {
  const rows = newestByKey(messages, (m) => `${m.accountId}/${m.skuId}/${m.warehouseId}`).map((m) => ({
    account_id: m.accountId,
    sku_id: m.skuId,
    warehouse_id: m.warehouseId,
    version: m.version,
    available_quantity: m.availableQuantity,
    deleted: m.deleted,
  }));
  await upsertNewer(tx, "stock", ["account_id", "sku_id", "warehouse_id"], {
    account_id: "uuid", sku_id: "uuid", warehouse_id: "uuid", version: "bigint", available_quantity: "int", deleted: "boolean",
  }, rows);
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
  const changedAt = (m: ordersMessagesV1.PurchaseOrderChanged) => (m.updatedAt ? timestampDate(m.updatedAt).toISOString() : null);
  // 1. The orders whose version is newer than the stored one (new orders included).
  const applied = await upsertNewer(
    tx,
    "purchase_orders",
    ["account_id", "purchase_order_id"],
    { account_id: "uuid", purchase_order_id: "uuid", version: "bigint", delivery_status: "int", updated_at: "timestamptz" },
    orders.map((m) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId, version: m.version, delivery_status: m.deliveryStatus, updated_at: changedAt(m) })),
  );
  if (!applied.length) return;
  const won = new Set(applied.map((r) => `${r.account_id}/${r.purchase_order_id}`));
  const winners = orders.filter((m) => won.has(`${m.accountId}/${m.purchaseOrderId}`));
  // 2. Their lines are replaced by the new version's lines. A (SKU, warehouse) of the old lines
  // that the new ones no longer have leaves no line behind: its group is recorded as changed.
  const at = new Map(winners.map((m) => [`${m.accountId}/${m.purchaseOrderId}`, changedAt(m)]));
  const kept = winners.flatMap((m) => m.lines.map((l) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId, sku_id: l.skuId, external_warehouse_id: l.externalWarehouseId })));
  await tx.raw(
    `INSERT INTO changed_groups (account_id, sku_id, external_warehouse_id, season, product_group_id, variant_group_id, key, changed_at)
     SELECT DISTINCT l.account_id, l.sku_id, l.external_warehouse_id, s.season, s.product_group_id, s.variant_group_id, s.key, coalesce(x.changed_at, now())
     FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, purchase_order_id uuid, changed_at timestamptz)
     JOIN purchase_order_lines l ON l.account_id = x.account_id AND l.purchase_order_id = x.purchase_order_id
     LEFT JOIN skus s ON s.account_id = l.account_id AND s.sku_id = l.sku_id
     WHERE NOT EXISTS (
       SELECT 1 FROM jsonb_to_recordset(?::jsonb) AS k(account_id uuid, purchase_order_id uuid, sku_id uuid, external_warehouse_id text)
       WHERE k.account_id = l.account_id AND k.purchase_order_id = l.purchase_order_id AND k.sku_id = l.sku_id AND k.external_warehouse_id = l.external_warehouse_id)`,
    [json(winners.map((m) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId, changed_at: at.get(`${m.accountId}/${m.purchaseOrderId}`) }))), json(kept)],
  );
  await tx.raw(
    `DELETE FROM purchase_order_lines l USING jsonb_to_recordset(?::jsonb) AS x(account_id uuid, purchase_order_id uuid)
     WHERE l.account_id = x.account_id AND l.purchase_order_id = x.purchase_order_id`,
    [json(winners.map((m) => ({ account_id: m.accountId, purchase_order_id: m.purchaseOrderId })))],
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
  await tx.raw(
    `INSERT INTO purchase_order_lines (account_id, purchase_order_id, item_id, sku_id, external_warehouse_id, delivery_date, open_quantity, kind, changed_at)
     SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, purchase_order_id uuid, item_id text, sku_id uuid,
       external_warehouse_id text, delivery_date date, open_quantity int, kind text, changed_at timestamptz)`,
    [json(lines)],
  );
}

export async function applyAccountSettings(tx: Tx, messages: accountsMessagesV1.AccountSettingsChanged[]): Promise<void> {
  const rows = newestByKey(messages, (m) => m.accountId).map((m) => ({ account_id: m.accountId, version: m.version, timezone: m.timezone }));
  await upsertNewer(tx, "accounts", ["account_id"], { account_id: "uuid", version: "bigint", timezone: "text" }, rows);
}

const skuTopics = topics.catalogueSkuTopics;
const warehouseTopics = [topics.inventoryWarehouseUpserted, topics.inventoryWarehouseDeleted];
const purchaseOrderTopics = [topics.ordersPurchaseOrderCreated, topics.ordersPurchaseOrderUpdated];

/** Applies a batch of deliveries of any replica topic: a handful of statements per kind present. */
export async function applyDeliveries(tx: Tx, deliveries: Delivery[]): Promise<void> {
  const skus: catalogueMessagesV1.SkuChanged[] = [];
  const warehouses: inventoryMessagesV1.WarehouseChanged[] = [];
  const stock: inventoryMessagesV1.StockUpdated[] = [];
  const orders: ordersMessagesV1.PurchaseOrderChanged[] = [];
  const settings: accountsMessagesV1.AccountSettingsChanged[] = [];
  for (const d of deliveries) {
    // A message counts for the account it was published for; a payload naming another is ignored.
    if ((d.message as { accountId?: string }).accountId !== d.accountId) continue;
    if (skuTopics.some((t) => isTopic(d, t))) skus.push(d.message as catalogueMessagesV1.SkuChanged);
    else if (warehouseTopics.some((t) => isTopic(d, t))) {
      const m = d.message as inventoryMessagesV1.WarehouseChanged;
      // A message on the deleted subject is a deletion whatever its flag says.
      warehouses.push(isTopic(d, topics.inventoryWarehouseDeleted) ? { ...m, deleted: true } : m);
    } else if (isTopic(d, topics.inventoryStockUpdated)) stock.push(d.message);
    else if (purchaseOrderTopics.some((t) => isTopic(d, t))) orders.push(d.message as ordersMessagesV1.PurchaseOrderChanged);
    else if (isTopic(d, topics.accountSettingsChanged)) settings.push(d.message);
  }
  await applySkus(tx, skus);
  await applyWarehouses(tx, warehouses);
  await applyStock(tx, stock);
  await applyPurchaseOrders(tx, orders);
  await applyAccountSettings(tx, settings);
}

/** Every subject the replica reads. */
export const replicaTopics = [...skuTopics, ...warehouseTopics, topics.inventoryStockUpdated, ...purchaseOrderTopics, topics.accountSettingsChanged];

/** One durable consumer for the whole replica (one transaction per batch, with its inbox rows). */
export const replicaConsumer: ConsumerDefinition = {
  name: "replica",
  topics: replicaTopics,
  handle: applyDeliveries,
};
