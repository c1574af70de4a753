import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ordersV1 } from "@analytics/contracts";
import type { ItemRow, ItemWrite, OrderRow, OrderWrite, WrittenOrder } from "./repository";

const { PurchaseOrderSchema } = ordersV1;
export type PurchaseOrder = ordersV1.PurchaseOrder;

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(new Date(d)) : undefined);
const iso = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : null);
const orNull = <T>(v: T | undefined) => (v === undefined ? null : v);

/** The REST PurchaseOrder of a stored order and its items. */
export function purchaseOrderFromRows(row: OrderRow, items: ItemRow[]): PurchaseOrder {
  return create(PurchaseOrderSchema, {
    id: row.id,
    seq: BigInt(row.seq),
    externalPoNo: row.external_po_no,
    orderDate: ts(row.order_date),
    deliveryDate: ts(row.delivery_date),
    deliveryStatus: row.delivery_status,
    externalComment: row.external_comment ?? undefined,
    externalWarehouseId: row.external_warehouse_id ?? undefined,
    supplier: row.supplier ?? undefined,
    label: row.label ?? undefined,
    orderType: row.order_type ?? undefined,
    attributes: row.attributes ?? undefined,
    apiKeyId: row.api_key_id,
    createdAt: ts(row.created_at),
    updatedAt: ts(row.updated_at),
    items: items.map((i) => ({
      id: i.id,
      externalRowId: i.external_row_id ?? undefined,
      key: i.key ?? undefined,
      sku: i.sku ?? undefined,
      ean: i.ean ?? undefined,
      season: i.season ?? undefined,
      skuId: i.sku_id,
      quantity: i.quantity,
      deliveryDate: ts(i.delivery_date),
      externalWarehouseId: i.external_warehouse_id ?? undefined,
      totalPriceNet: i.total_price_net === null ? undefined : { value: i.total_price_net },
      totalPriceVat: i.total_price_vat === null ? undefined : { value: i.total_price_vat },
      totalPriceCurrency: i.total_price_currency ?? undefined,
      deliveries: i.deliveries.map((d) => ({ deliveryId: d.deliveryID ?? undefined, quantity: d.quantity, deliveryDate: d.deliveryDate ? timestampFromDate(new Date(d.deliveryDate)) : undefined })),
      deliveredQuantity: i.delivered_quantity,
      attributes: i.attributes ?? undefined,
    })),
  });
}

/**
 * The order as GET answers it, from the columns just written and what Postgres assigned (ids,
 * version, timestamps), without reading it back: dates at the millisecond written, decimals as
 * numeric prints them.
 */
export function purchaseOrderFromWrite(order: OrderWrite, items: ItemWrite[], written: WrittenOrder): PurchaseOrder {
  const date = (v: string | null) => (v === null ? null : new Date(v));
  const row: OrderRow = {
    ...order,
    seq: written.seq,
    order_date: date(order.order_date),
    delivery_date: date(order.delivery_date),
    version: written.version,
    created_at: written.created_at,
    updated_at: written.updated_at,
  };
  return purchaseOrderFromRows(
    row,
    items.map((i, position) => ({
      ...i,
      id: written.itemIds[position],
      delivery_date: date(i.delivery_date),
      total_price_net: i.total_price_net === null ? null : numericText(i.total_price_net),
      total_price_vat: i.total_price_vat === null ? null : numericText(i.total_price_vat),
      deliveries: i.deliveries as ItemRow["deliveries"],
    })),
  );
}

/** A decimal as Postgres prints the numeric stored from it: no leading zeros, no negative zero, its scale kept. */
function numericText(v: string): string {
  const negative = v.startsWith("-");
  const [int, fraction] = (negative ? v.slice(1) : v).split(".");
  const digits = int.replace(/^0+(?=\d)/, "");
  const zero = !/[1-9]/.test(int + (fraction ?? ""));
  return `${negative && !zero ? "-" : ""}${digits}${fraction === undefined ? "" : `.${fraction}`}`;
}

/**
 * The SHA-256 of the writable content of an order (its columns and its items' columns, always
 * built in the same key order) as JSON: an equal hash means nothing changed. Built from the
 * columns, so it costs no second conversion, and only the hash is stored.
 */
function contentHash(order: Omit<OrderWrite, "id" | "api_key_id" | "content_hash">, items: ItemWrite[]): { hash: string; jsonLength: number } {
  const content = {
    ...order,
    attributes: sortedKeys(order.attributes),
    items: items.map(({ purchase_order_id: _, ...item }) => ({
      ...item,
      attributes: sortedKeys(item.attributes),
      // Decimals compare by value: 1.50 and 1.5 are the same price.
      total_price_net: item.total_price_net === null ? null : normalDecimal(item.total_price_net),
      total_price_vat: item.total_price_vat === null ? null : normalDecimal(item.total_price_vat),
    })),
  };
  const json = JSON.stringify(content);
  return { hash: createHash("sha256").update(json).digest("base64"), jsonLength: json.length };
}

/** A JSON value with its objects' keys in one order: the same attributes sent in another order are no change. */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!v || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
  );
}

function normalDecimal(v: string): string {
  if (!v.includes(".")) return v.replace(/^(-?)0+(?=\d)/, "$1");
  return v.replace(/^(-?)0+(?=\d)/, "$1").replace(/\.?0+$/, "");
}

/** The columns of an order and its items, and the length of their content as JSON (what its hash is of). */
export function orderColumns(id: string, apiKeyId: string, po: PurchaseOrder): { order: OrderWrite; items: ItemWrite[]; contentLength: number } {
  const items = itemColumns(id, po);
  const order = {
    external_po_no: po.externalPoNo,
    order_date: iso(po.orderDate),
    delivery_date: iso(po.deliveryDate),
    delivery_status: po.deliveryStatus,
    external_comment: orNull(po.externalComment),
    external_warehouse_id: orNull(po.externalWarehouseId),
    supplier: orNull(po.supplier),
    label: orNull(po.label),
    order_type: orNull(po.orderType),
    attributes: po.attributes ?? null,
  };
  const content = contentHash(order, items);
  return { order: { id, api_key_id: apiKeyId, ...order, content_hash: content.hash }, items, contentLength: content.jsonLength };
}

function itemColumns(orderId: string, po: PurchaseOrder): ItemWrite[] {
  return po.items.map((i, position) => ({
    purchase_order_id: orderId,
    position,
    external_row_id: orNull(i.externalRowId),
    key: orNull(i.key),
    sku: orNull(i.sku),
    ean: orNull(i.ean),
    season: orNull(i.season),
    sku_id: i.skuId,
    quantity: i.quantity,
    delivery_date: iso(i.deliveryDate),
    external_warehouse_id: orNull(i.externalWarehouseId),
    total_price_net: i.totalPriceNet?.value ?? null,
    total_price_vat: i.totalPriceVat?.value ?? null,
    total_price_currency: orNull(i.totalPriceCurrency),
    deliveries: i.deliveries.map((d) => ({ deliveryID: d.deliveryId ?? null, quantity: d.quantity, deliveryDate: iso(d.deliveryDate) })),
    delivered_quantity: i.deliveries.reduce((sum, d) => sum + d.quantity, 0),
    attributes: i.attributes ?? null,
  }));
}
