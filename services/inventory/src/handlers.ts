import type { ConnectRouter } from "@connectrpc/connect";
import { inventoryV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import { isUuid } from "@analytics/db";
import { invalid } from "@analytics/errors";
import { accountVersionHandler, pageOf, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import * as inventory from "./inventory";
import * as stores from "./stores";
import * as triggers from "./triggers";
import { stockFromRow, storeFromRow, trafficFromRow, triggerFromRow, warehouseFromRow } from "./resources";

const { InventoryService } = inventoryV1;
/** A row upserted by its external id: 201 when created, else 200 (updated, or unchanged when sent as stored). */
const upserted = (r: { created: boolean; changed: boolean }, reference: string, referenceField: string) => ({
  statusCode: r.created ? 201 : 200,
  message: r.created ? "created" : r.changed ? "updated" : "unchanged",
  reference,
  referenceField,
});

/** Inventory's BatchResult carries the item's field problems itself. */
const batchResult = (o: ItemOutcome) => ({ result: o });

/** Thin Connect handlers: proto in, plain function, proto out. */
export function inventoryRoutes(ctx: ServiceContext) {
  const { db } = ctx;
  return (router: ConnectRouter) =>
    router.service(InventoryService, {
      getAccountVersion: accountVersionHandler(db),
      async listWarehouses(req, c) {
        const bad = req.warehouseIds.findIndex((id) => !isUuid(id));
        if (bad >= 0) throw invalid("warehouse_id must be a UUID", [{ path: "warehouse_id", message: "must be a UUID" }]);
        const { rows, total } = await inventory.listWarehouses(db, callerOf(c).accountId, req.warehouseIds, pageOf(req.page));
        return { warehouses: rows.map(warehouseFromRow), totalCount: BigInt(total) };
      },
      async upsertWarehouses(req, c) {
        const rows = await inventory.upsertWarehouses(ctx, callerOf(c).accountId, req.warehouses);
        return { results: rows.map((r) => ({ result: upserted(r, r.external_id, "externalId"), warehouse: warehouseFromRow(r) })) };
      },
      async resolveWarehouses(req, c) {
        return { warehouses: (await inventory.resolveWarehouses(db, callerOf(c).accountId, req.externalIds)).map(warehouseFromRow) };
      },
      async getWarehouse(req, c) {
        const row = await inventory.getWarehouse(db, callerOf(c).accountId, req.externalId);
        return { warehouse: warehouseFromRow(row), revision: row.revision };
      },
      async updateWarehouse(req, c) {
        const row = await inventory.updateWarehouse(ctx, callerOf(c).accountId, req.externalId, req.warehouse ?? ({} as inventoryV1.Warehouse), req.ifRevision);
        return { warehouse: warehouseFromRow(row) };
      },
      async deleteWarehouse(req, c) {
        await inventory.deleteWarehouse(ctx, callerOf(c).accountId, req.externalId, req.ifRevision);
        return {};
      },
      async listStock(req, c) {
        const { rows, total } = await inventory.listStock(db, callerOf(c).accountId, req, pageOf(req.page));
        return { rows: rows.map(stockFromRow), totalCount: BigInt(total) };
      },
      async upsertStock(req, c) {
        const outcomes = await inventory.upsertStock(ctx, callerOf(c).accountId, req.rows, req.externalWarehouseId || undefined);
        return { results: outcomes.map(batchResult) };
      },
      async listStores(req, c) {
        const { rows, total } = await stores.listStores(db, callerOf(c).accountId, pageOf(req.page));
        return { stores: rows.map(storeFromRow), totalCount: BigInt(total) };
      },
      async upsertStores(req, c) {
        const rows = await stores.upsertStores(ctx, callerOf(c).accountId, req.stores);
        return { results: rows.map((r) => ({ result: upserted(r, r.external_store_id, "externalStoreId"), store: storeFromRow(r) })) };
      },
      async getStore(req, c) {
        const row = await stores.getStore(db, callerOf(c).accountId, req.externalStoreId);
        return { store: storeFromRow(row), revision: row.revision };
      },
      async updateStore(req, c) {
        const row = await stores.updateStore(ctx, callerOf(c).accountId, req.externalStoreId, req.store ?? ({ warehouses: [] } as unknown as inventoryV1.Store), req.ifRevision);
        return { store: storeFromRow(row) };
      },
      async deleteStore(req, c) {
        await stores.deleteStore(ctx, callerOf(c).accountId, req.externalStoreId, req.ifRevision);
        return {};
      },
      async listStoreTraffic(req, c) {
        const { rows, total } = await stores.listTraffic(db, callerOf(c).accountId, req, pageOf(req.page));
        return { events: rows.map(trafficFromRow), totalCount: BigInt(total) };
      },
      async recordStoreTraffic(req, c) {
        return stores.recordTraffic(ctx, callerOf(c).accountId, req.events);
      },
      async listStockTriggers(req, c) {
        const { rows, total } = await triggers.listTriggers(db, callerOf(c).accountId, req, pageOf(req.page));
        return { triggers: rows.map(triggerFromRow), totalCount: BigInt(total) };
      },
      async getStockTrigger(req, c) {
        return { trigger: triggerFromRow(await triggers.getTrigger(db, callerOf(c).accountId, req.id)) };
      },
      async upsertStockTriggers(req, c) {
        const outcomes = await triggers.upsertTriggers(ctx, callerOf(c).accountId, req.triggers);
        return { results: outcomes.map(({ value, ...result }) => ({ result, trigger: value && triggerFromRow(value) })) };
      },
    });
}
