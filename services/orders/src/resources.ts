import { clone, create, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ordersV1 } from "@analytics/contracts";
import type { ItemRow, ItemWrite, OrderRow, OrderWrite } from "./repository";

const { PurchaseOrderSchema, PurchaseOrderItemSchema, DeliverySchema } = ordersV1;
export type PurchaseOrder = ordersV1.PurchaseOrder;

const ts = (d: Date | null | undefined) => (d ? timestampFromDate(new Date(d)) : undefined);
const iso = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : null);
const orNull = <T>(v: T | undefined) => (v === undefined ? null : v);

/** The REST PurchaseOrder of a stored order and its items. */
export function purchaseOrderFromRows(row: OrderRow, items: ItemRow[]): PurchaseOrder {
  return create(PurchaseOrderSchema, {
    id: row.id,
    externalPoNo: row.external_po_no,
    orderDate: ts(row.order_date),
    deliveryDate: ts(row.delivery_date),
    deliveryStatus: row.delivery_status,
    externalComment: row.external_comment ?? undefined,
    externalWarehouseId: row.external_warehouse_id ?? undefined,
    supplier: row.supplier ?? undefined,
    label: row.label ?? undefined,
    orderType: row.order_type ?? undefined,
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
      deliveries: i.deliveries.map((d) => ({ deliveryId: d.deliveryID, quantity: d.quantity, deliveryDate: d.deliveryDate ? timestampFromDate(new Date(d.deliveryDate)) : undefined })),
      deliveredQuantity: i.delivered_quantity,
    })),
  });
}

/** The writable content of an order as canonical JSON: equal content means nothing changed. */
export function contentOf(po: PurchaseOrder): unknown {
  const c = clone(PurchaseOrderSchema, po);
  c.id = "";
  c.apiKeyId = "";
  c.createdAt = undefined;
  c.updatedAt = undefined;
  c.items = c.items.map((i) => {
    const item = clone(PurchaseOrderItemSchema, i);
    item.id = "";
    item.deliveredQuantity = 0;
    // Decimals compare by value: 1.50 and 1.5 are the same price.
    if (item.totalPriceNet) item.totalPriceNet.value = normalDecimal(item.totalPriceNet.value);
    if (item.totalPriceVat) item.totalPriceVat.value = normalDecimal(item.totalPriceVat.value);
    return item;
  });
  return toJson(PurchaseOrderSchema, c);
}

function normalDecimal(v: string): string {
  if (!v.includes(".")) return v.replace(/^(-?)0+(?=\d)/, "$1");
  return v.replace(/^(-?)0+(?=\d)/, "$1").replace(/\.?0+$/, "");
}

export function orderColumns(id: string, apiKeyId: string, po: PurchaseOrder): OrderWrite {
  return {
    id,
    api_key_id: apiKeyId,
    external_po_no: po.externalPoNo,
    order_date: iso(po.orderDate),
    delivery_date: iso(po.deliveryDate),
    delivery_status: po.deliveryStatus,
    external_comment: orNull(po.externalComment),
    external_warehouse_id: orNull(po.externalWarehouseId),
    supplier: orNull(po.supplier),
    label: orNull(po.label),
    order_type: orNull(po.orderType),
    content: contentOf(po),
  };
}

export function itemColumns(orderId: string, po: PurchaseOrder): ItemWrite[] {
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
    deliveries: i.deliveries.map((d) => toJson(DeliverySchema, d)),
    delivered_quantity: i.deliveries.reduce((sum, d) => sum + d.quantity, 0),
  }));
}

/** YYYY-MM-DD of a timestamp, "" when none. */
export const dayOf = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString().slice(0, 10) : "");
