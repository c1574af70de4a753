import { createHash } from "node:crypto";
import { ordersV1 } from "@analytics/contracts";
import { fieldViolations, tableSpec, type Row } from "@analytics/db";
import type { FieldViolation } from "@analytics/errors";

const { DeliverySchema, DistributionOrderSchema, PurchaseOrderItemSchema, PurchaseOrderSchema } = ordersV1;
export type PurchaseOrder = ordersV1.PurchaseOrder;

/** The specification's date range of order resources: 1970-01-01 00:00:00 .. 2105-12-31 23:59:59. */
export const ORDER_DATE_SECONDS = [0n, BigInt(Date.UTC(2105, 11, 31, 23, 59, 59) / 1000)] as const;

/**
 * purchase_orders and purchase_order_items: the columns of the PurchaseOrder and
 * PurchaseOrderItem messages (their rules in the proto say which are stored and how).
 */
export const purchaseOrdersTable = tableSpec(PurchaseOrderSchema, "purchase_orders", {
  extra: { content_hash: "text" },
  assigned: ["seq", "created_at", "updated_at"],
  timestampSeconds: ORDER_DATE_SECONDS,
});
export const purchaseOrderItemsTable = tableSpec(PurchaseOrderItemSchema, "purchase_order_items", {
  extra: { purchase_order_id: "uuid", position: "integer" },
  // Chosen while the items are written: kept for a row whose externalRowID stays.
  assigned: ["id"],
  timestampSeconds: ORDER_DATE_SECONDS,
});

/** distribution_orders: the DistributionOrder message's columns; `status` is generated (migration 002). */
export const distributionOrdersTable = tableSpec(DistributionOrderSchema, "distribution_orders", {
  assigned: ["seq", "status", "created_at", "updated_at"],
  timestampSeconds: ORDER_DATE_SECONDS,
});

/**
 * A purchase_orders row: the PurchaseOrder message's columns (resources.ts, purchaseOrdersTable),
 * typed where this service reads a column by name.
 */
export type OrderRow = Row & { id: string; version: number };

/** A purchase_order_items row (purchaseOrderItemsTable's columns). */
export type ItemRow = Row & { purchase_order_id: string };

/** The columns of an order as written (`rowOf` of the PurchaseOrder with its id, key and content hash). */
export type OrderWrite = Row & {
  id: string;
  api_key_id: string;
  external_po_no: string;
  delivery_date: string | null;
  delivery_status: number;
  external_warehouse_id: string | null;
  content_hash: string;
};

/** The columns of an item as written (`rowOf` of the PurchaseOrderItem with its order and position). */
export type ItemWrite = Row & {
  purchase_order_id: string;
  position: number;
  external_row_id: string | null;
  sku_id: string;
  quantity: number;
  delivery_date: string | null;
  external_warehouse_id: string | null;
  delivered_quantity: number;
};

/** What Postgres assigned to a written order: its version and timestamps, and its items' ids by position. */
export interface WrittenOrder {
  seq: string;
  version: number;
  created_at: Date;
  updated_at: Date;
  itemIds: string[];
}

/** The REST PurchaseOrder of a stored order and its items. */
export function purchaseOrderFromRows(row: OrderRow, items: Row[]): PurchaseOrder {
  const order = purchaseOrdersTable.messageOf(row);
  order.items = items.map((i) => purchaseOrderItemsTable.messageOf(i));
  return order;
}

/**
 * The order as GET answers it, from the columns just written and what Postgres assigned (ids,
 * version, timestamps), without reading it back: dates at the millisecond written, decimals as
 * numeric prints them.
 */
export function purchaseOrderFromWrite(order: OrderWrite, items: ItemWrite[], written: WrittenOrder): PurchaseOrder {
  return purchaseOrderFromRows(
    { ...order, seq: written.seq, version: written.version, created_at: written.created_at, updated_at: written.updated_at },
    items.map((i, position) => ({ ...i, id: written.itemIds[position] })),
  );
}

/** Every field problem of one purchase order (paths as the REST body names them). */
export function purchaseOrderViolations(po: PurchaseOrder): FieldViolation[] {
  const out = purchaseOrdersTable.violations(po);
  const rows = new Set<string>();
  po.items.forEach((item, i) => {
    const p = `items[${i}]`;
    out.push(...purchaseOrderItemsTable.violations(item, p));
    if (item.externalRowId !== undefined) {
      if (rows.has(item.externalRowId)) out.push({ path: `${p}.externalRowID`, message: "must be unique within the order" });
      rows.add(item.externalRowId);
    }
    item.deliveries.forEach((d, j) => out.push(...fieldViolations(DeliverySchema, d, `${p}.deliveries[${j}]`, ORDER_DATE_SECONDS)));
    if (deliveredQuantity(item) > 2 ** 31 - 1) out.push({ path: `${p}.deliveries`, message: "delivered quantities sum beyond 2147483647" });
  });
  return out;
}

const deliveredQuantity = (item: ordersV1.PurchaseOrderItem) => item.deliveries.reduce((sum, d) => sum + d.quantity, 0);

/**
 * The columns the content hash has always been over, an unset one as null: orders stored since
 * keep their hash. A column added later counts only when set, so it changes no stored hash.
 */
const HASHED_ORDER_COLUMNS = new Set(["external_po_no", "order_date", "delivery_date", "delivery_status", "external_comment", "external_warehouse_id", "supplier", "label", "order_type", "attributes"]);
const HASHED_ITEM_COLUMNS = new Set([
  "position", "external_row_id", "key", "sku", "ean", "season", "sku_id", "quantity", "delivery_date", "external_warehouse_id", "total_price_net", "total_price_vat",
  "total_price_currency", "deliveries", "delivered_quantity", "attributes",
]);
/**
 * Columns of a row that are not its content: the order's id and creating key, an item's order and
 * its product's integer id (it follows from sku_id: an order stored before items kept it, re-sent
 * as it was, is unchanged).
 */
const NOT_CONTENT = new Set(["id", "api_key_id"]);
const NOT_ITEM_CONTENT = new Set(["purchase_order_id", "sku_seq"]);

/**
 * The SHA-256 of the writable content of an order (its columns and its items' columns, always
 * built in the same key order) as JSON: an equal hash means nothing changed. Built from the
 * columns, so it costs no second conversion, and only the hash is stored.
 */
export function contentHash(order: Row, items: Row[]): { hash: string; jsonLength: number } {
  const json = JSON.stringify({
    ...purchaseOrdersTable.comparable(order, { omit: NOT_CONTENT, keptNulls: HASHED_ORDER_COLUMNS }),
    items: items.map((i) => purchaseOrderItemsTable.comparable(i, { omit: NOT_ITEM_CONTENT, keptNulls: HASHED_ITEM_COLUMNS })),
  });
  return { hash: createHash("sha256").update(json).digest("base64"), jsonLength: json.length };
}

/** The columns of an order and its items, and the length of their content as JSON (what its hash is of). */
export function orderColumns(id: string, apiKeyId: string, po: PurchaseOrder): { order: OrderWrite; items: ItemWrite[]; contentLength: number } {
  const items = po.items.map((item, position) => ({
    purchase_order_id: id,
    position,
    ...purchaseOrderItemsTable.rowOf(item),
    delivered_quantity: deliveredQuantity(item),
  })) as ItemWrite[];
  const order = { ...purchaseOrdersTable.rowOf(po), id, api_key_id: apiKeyId };
  const content = contentHash(order, items);
  return { order: { ...order, content_hash: content.hash } as OrderWrite, items, contentLength: content.jsonLength };
}
