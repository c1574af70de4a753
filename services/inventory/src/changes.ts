import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { topics } from "@analytics/contracts";
import { outboxEntry } from "@analytics/outbox";
import type { StockRowDb, StoreRow, TrafficInput, TriggerRow, WarehouseRow } from "./repository";
import { storeFromRow, trafficFromRow, triggerFromRow } from "./resources";

/** WarehouseChanged on analytics.inventory.warehouse.{upserted,deleted}. */
export const warehouseChanged = (accountId: string, w: WarehouseRow, deleted = false) =>
  outboxEntry(deleted ? topics.inventoryWarehouseDeleted : topics.inventoryWarehouseUpserted, accountId, w.id, {
    accountId,
    warehouseId: w.id,
    version: BigInt(w.version),
    externalId: w.external_id,
    name: w.name,
    centralWarehouse: w.central_warehouse,
    deleted,
  });

/** StockUpdated on analytics.inventory.stock.updated; the aggregate is the (warehouse, SKU) pair. */
export const stockUpdated = (accountId: string, s: StockRowDb) =>
  outboxEntry(topics.inventoryStockUpdated, accountId, `${s.warehouse_id}:${s.sku_id}`, {
    accountId,
    warehouseId: s.warehouse_id,
    skuId: s.sku_id,
    version: BigInt(s.version),
    availableQuantity: s.available_quantity,
    physicalQuantity: s.physical_quantity,
    snapshotDate: timestampFromDate(new Date(s.date)),
    key: s.key,
    externalWarehouseId: s.external_warehouse_id,
  });

/** StoreChanged on analytics.inventory.store.{upserted,deleted}. */
export const storeChanged = (accountId: string, s: StoreRow, deleted = false) =>
  outboxEntry(deleted ? topics.inventoryStoreDeleted : topics.inventoryStoreUpserted, accountId, s.id, {
    accountId,
    version: BigInt(s.version),
    store: storeFromRow(s),
    deleted,
  });

/** StoreTrafficRecorded on analytics.inventory.store_traffic.recorded: one per counter and batch. */
export function trafficRecorded(accountId: string, events: TrafficInput[]) {
  const byCounter = new Map<string, TrafficInput[]>();
  for (const e of events) {
    const counter = byCounter.get(e.counter_id);
    if (counter) counter.push(e);
    else byCounter.set(e.counter_id, [e]);
  }
  return [...byCounter].map(([counter, es]) =>
    outboxEntry(topics.inventoryStoreTrafficRecorded, accountId, counter, {
      accountId,
      storeTrafficCounterId: counter,
      events: es.map(trafficFromRow),
    }),
  );
}

/**
 * StockTriggerChanged on analytics.inventory.stock_trigger.{created,updated} (or `topic`: a
 * re-announcement), with the trigger as GET returns it.
 */
export const stockTriggerChanged = (accountId: string, t: TriggerRow, created: boolean, topic = created ? topics.inventoryStockTriggerCreated : topics.inventoryStockTriggerUpdated) =>
  outboxEntry(topic, accountId, String(t.id), {
    accountId,
    stockTriggerId: BigInt(t.id),
    version: BigInt(t.version),
    trigger: triggerFromRow(t),
  });
