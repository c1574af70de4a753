import { randomUUID } from "node:crypto";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { BusMessage } from "@analytics/bus";
import { planningV1, topics, type Topic } from "@analytics/contracts";
import { consumerHandler } from "@analytics/rpc";
import { serviceUnderTest } from "@analytics/testing";
import { replicaConsumer } from "../src/replica";
import { startPlanningService } from "../src/service";

/** A bus message as the producing service's outbox relay would publish it. */
export function busMessage<D extends DescMessage>(topic: Topic<D>, accountId: string, aggregate: string, init: MessageInitShape<D>): BusMessage {
  return {
    id: randomUUID(),
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
}

export const sku = (accountId: string, skuId: string, version: number, p: SkuInit) =>
  busMessage(topics.catalogueSkuUpdated, accountId, `sku:${skuId}`, { accountId, skuId, version: BigInt(version), product: { id: skuId, sku: p.key, ...p } });

export const warehouse = (accountId: string, warehouseId: string, version: number, externalId: string, name: string, deleted = false) =>
  busMessage(deleted ? topics.inventoryWarehouseDeleted : topics.inventoryWarehouseUpserted, accountId, `warehouse:${warehouseId}`, {
    accountId,
    warehouseId,
    version: BigInt(version),
    externalId,
    name,
    deleted,
  });

export const stock = (accountId: string, warehouseId: string, skuId: string, version: number, availableQuantity: number, deleted = false) =>
  busMessage(topics.inventoryStockUpdated, accountId, `stock:${warehouseId}:${skuId}`, {
    accountId,
    warehouseId,
    skuId,
    version: BigInt(version),
    availableQuantity,
    physicalQuantity: availableQuantity + 1,
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

export const purchaseOrder = (
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

export const settings = (accountId: string, version: number, timezone: string) =>
  busMessage(topics.accountSettingsChanged, accountId, `account:${accountId}`, { accountId, version: BigInt(version), timezone, customPriceFields: [] });

export type Query = Omit<MessageInitShape<typeof planningV1.PlannedVolumesQuerySchema>, "$typeName">;
export const march = { fromDate: "2026-03-01", toDate: "2026-03-31" };

/** The planning service on the test file's own database and stream (jest hooks), with helpers that answer plain rows. */
export function planningUnderTest() {
  const planning = serviceUnderTest(planningV1.PlanningService, startPlanningService, { schema: "planning", internalToken: "p".repeat(40) });
  const { client, db, as } = planning;
  return Object.assign(planning, {
    /** Applies messages as the consumer does (one batch, with the inbox). */
    apply: (messages: BusMessage[]) => consumerHandler(db, "planning", replicaConsumer)(messages),
    volumes: async (accountId: string, q: Query = {}) =>
      (await client.getPlannedVolumes({ query: { ...march, ...q } }, as(accountId))).rows.map((r) => ({
        groupKey: r.groupKey,
        stock: Number(r.stockVolume),
        po: Number(r.poVolume),
        draft: Number(r.draftPoVolume),
      })),
    byWarehouse: async (accountId: string, q: Query = {}) =>
      (await client.getPlannedVolumesByWarehouse({ query: { ...march, ...q } }, as(accountId))).rows
        .map((r) => ({
          groupKey: r.groupKey,
          warehouseId: r.warehouseId,
          warehouseName: r.warehouseName,
          stock: Number(r.stockVolume),
          po: Number(r.poVolume),
          draft: Number(r.draftPoVolume),
        }))
        .sort(byKeyThenWarehouse),
  });
}

/** Rows by groupKey then warehouseId, whatever the database's collation. */
export const byKeyThenWarehouse = (a: { groupKey: string; warehouseId: string }, b: { groupKey: string; warehouseId: string }) =>
  a.groupKey.localeCompare(b.groupKey) || a.warehouseId.localeCompare(b.warehouseId);
