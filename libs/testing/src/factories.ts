import { randomUUID } from "node:crypto";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { BusMessage } from "@analytics/bus";
import { topics, type Topic } from "@analytics/contracts";

// Messages as their producers publish them, for consumers under test (planning, events) and e2e
// tests that publish what no route can write.

/** A bus message as the producing service's outbox relay would publish it. */
export function busMessage<D extends DescMessage>(topic: Topic<D>, accountId: string, aggregate: string, init: MessageInitShape<D>, id: string = randomUUID()): BusMessage {
  return {
    id,
    subject: topic.subject,
    accountId,
    occurredAt: new Date().toISOString(),
    aggregate,
    payload: toBinary(topic.schema, create(topic.schema, init)),
  };
}

export interface SkuInit {
  key: string;
  season?: string;
  productGroupId?: string;
  variantGroupId?: string;
  status?: number;
  activePlanning?: boolean;
  brandName?: string;
  categoryName?: string;
  size?: string;
  color?: string;
  department?: string;
  gender?: string;
  collection?: string;
  subCategory?: string;
  productType?: string;
  merchandiseType?: string;
  pimCustom3?: string;
  sku?: string;
  ean?: string;
}

/** The catalogue's SkuUpdated of one product version (or, with `topic`, the same message on another subject). */
export const skuUpdated = (accountId: string, skuId: string, version: number, p: SkuInit, topic: Topic<typeof topics.catalogueSkuUpdated.schema> = topics.catalogueSkuUpdated) =>
  busMessage(topic, accountId, `sku:${skuId}`, { accountId, skuId, version: BigInt(version), product: { id: skuId, sku: p.key, ...p } });

/** The inventory service's WarehouseUpserted (or WarehouseDeleted). */
export const warehouseChanged = (accountId: string, warehouseId: string, version: number, externalId: string, name: string, deleted = false) =>
  busMessage(deleted ? topics.inventoryWarehouseDeleted : topics.inventoryWarehouseUpserted, accountId, `warehouse:${warehouseId}`, {
    accountId,
    warehouseId,
    version: BigInt(version),
    externalId,
    name,
    deleted,
  });

/** The inventory service's StockUpdated of one warehouse and SKU. */
export const stockUpdated = (
  accountId: string,
  warehouseId: string,
  skuId: string,
  version: number,
  availableQuantity: number,
  deleted = false,
  physicalQuantity = availableQuantity + 1,
) =>
  busMessage(topics.inventoryStockUpdated, accountId, `stock:${warehouseId}:${skuId}`, {
    accountId,
    warehouseId,
    skuId,
    version: BigInt(version),
    availableQuantity,
    physicalQuantity,
    deleted,
  });

export interface LineInit {
  skuId: string;
  warehouse?: string;
  date?: string;
  quantity: number;
  open?: number;
  itemId?: string;
}

/** The orders service's PurchaseOrderCreated (version 1) or PurchaseOrderUpdated, with its lines. */
export const purchaseOrderChanged = (
  accountId: string,
  purchaseOrderId: string,
  version: number,
  deliveryStatus: number,
  lines: LineInit[],
  updatedAt = new Date(),
) =>
  busMessage(version === 1 ? topics.ordersPurchaseOrderCreated : topics.ordersPurchaseOrderUpdated, accountId, `purchase_order:${purchaseOrderId}`, {
    accountId,
    purchaseOrderId,
    version: BigInt(version),
    externalPoNo: `PO-${purchaseOrderId.slice(0, 8)}`,
    deliveryStatus,
    isDraft: deliveryStatus === 4,
    updatedAt: timestampFromDate(updatedAt),
    lines: lines.map((l, i) => ({
      itemId: l.itemId ?? `${purchaseOrderId}-${i}`,
      skuId: l.skuId,
      externalWarehouseId: l.warehouse ?? "",
      deliveryDate: l.date ?? "",
      quantity: l.quantity,
      openQuantity: l.open ?? l.quantity,
    })),
  });

/** The gateway's AccountSettingsChanged. */
export const accountSettingsChanged = (accountId: string, version: number, timezone: string, salesPlanGrowth?: string) =>
  busMessage(topics.accountSettingsChanged, accountId, `account:${accountId}`, {
    accountId,
    version: BigInt(version),
    timezone,
    customPriceFields: [],
    salesPlanGrowth: salesPlanGrowth === undefined ? undefined : { value: salesPlanGrowth },
  });

export interface TransactionItemInit {
  /** Unset: the item names its SKU by `sku`, else `ean`, alone. */
  key?: string;
  sku?: string;
  ean?: string;
  quantity: number;
  /** 1 sale, 2 return; unset: the transaction's. */
  type?: number;
  externalItemId?: string;
  shipments?: { quantity: number; warehouse?: string }[];
}

export interface TransactionInit {
  /** 1 D2C, 2 B2B. */
  channel?: number;
  /** 1 sale, 2 return. */
  type?: number;
  createdDate: string;
  cancelledDate?: string;
  items: TransactionItemInit[];
}

/** The orders service's TransactionCreated (version 1) or TransactionUpdated: the whole transaction. */
export const transactionChanged = (accountId: string, transactionId: string, version: number, t: TransactionInit, updatedAt = new Date()) =>
  busMessage(version === 1 ? topics.ordersTransactionCreated : topics.ordersTransactionUpdated, accountId, `transaction:${transactionId}`, {
    accountId,
    transactionId,
    version: BigInt(version),
    transaction: {
      id: transactionId,
      externalTransactionId: `T-${transactionId.slice(0, 8)}`,
      channel: t.channel ?? 1,
      type: t.type ?? 1,
      createdDate: timestampFromDate(new Date(t.createdDate)),
      cancelledDate: t.cancelledDate ? timestampFromDate(new Date(t.cancelledDate)) : undefined,
      updatedAt: timestampFromDate(updatedAt),
      items: t.items.map((item, i) => ({
        externalItemId: item.externalItemId ?? `item-${i + 1}`,
        key: item.key,
        sku: item.sku,
        ean: item.ean,
        quantity: item.quantity,
        type: item.type,
        shipments: (item.shipments ?? []).map((s) => ({ quantity: s.quantity, externalWarehouseId: s.warehouse })),
      })),
    },
  });

export interface DistributionOrderInit {
  key: string;
  from?: string;
  to?: string;
  /** An instant (RFC 3339). */
  deliveryDate?: string;
  quantity: number;
  deliveredQuantity?: number;
  /** Derived at the source: CANCELLED, COMPLETED, IN TRANSIT, ALLOCATED or PROCESSING. */
  status?: string;
  cancelledDate?: string;
}

/** The orders service's DistributionOrderCreated (version 1) or DistributionOrderUpdated: the row after the change. */
export const distributionOrderChanged = (accountId: string, distributionOrderId: string, version: number, o: DistributionOrderInit, updatedAt = new Date()) =>
  busMessage(version === 1 ? topics.ordersDistributionOrderCreated : topics.ordersDistributionOrderUpdated, accountId, `distribution_order:${distributionOrderId}`, {
    accountId,
    distributionOrderId,
    version: BigInt(version),
    distributionOrder: {
      id: distributionOrderId,
      externalDoid: `DO-${distributionOrderId.slice(0, 8)}`,
      externalRowId: "1",
      key: o.key,
      fromWarehouseExternalId: o.from,
      toWarehouseExternalId: o.to,
      deliveryDate: o.deliveryDate ? timestampFromDate(new Date(o.deliveryDate)) : undefined,
      quantity: o.quantity,
      deliveredQuantity: o.deliveredQuantity ?? 0,
      status: o.status ?? ((o.deliveredQuantity ?? 0) >= o.quantity ? "COMPLETED" : "PROCESSING"),
      cancelledDate: o.cancelledDate ? timestampFromDate(new Date(o.cancelledDate)) : undefined,
      updatedAt: timestampFromDate(updatedAt),
    },
  });

/** The inventory service's StockTriggerCreated (version 1) or StockTriggerUpdated. */
export const stockTriggerChanged = (accountId: string, stockTriggerId: number, version: number, t: { skuId: string; warehouseId: string; key?: string; min?: number }) =>
  busMessage(version === 1 ? topics.inventoryStockTriggerCreated : topics.inventoryStockTriggerUpdated, accountId, `stock_trigger:${stockTriggerId}`, {
    accountId,
    stockTriggerId: BigInt(stockTriggerId),
    version: BigInt(version),
    trigger: { id: BigInt(stockTriggerId), skuId: t.skuId, warehouseId: t.warehouseId, key: t.key ?? "", min: t.min },
  });
