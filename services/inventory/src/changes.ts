import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { topics } from "@analytics/contracts";
import { inTransaction, type Tx } from "@analytics/db";
import { outboxEntry } from "@analytics/outbox";
import type { ServiceContext } from "@analytics/rpc";
import type { StockRowDb, WarehouseRow } from "./repository";

/** Commits `work` (run again on a deadlock or serialization failure) and wakes the outbox relay. */
export async function commit<T>(ctx: ServiceContext, work: (tx: Tx) => Promise<T>): Promise<T> {
  const result = await inTransaction(ctx.db, work);
  ctx.relay.kick();
  return result;
}

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
