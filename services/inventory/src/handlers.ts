import type { ConnectRouter } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { inventoryV1, type PageRequest } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import { isUuid } from "@analytics/db";
import { invalid } from "@analytics/errors";
import type { ServiceContext } from "@analytics/rpc";
import * as inventory from "./inventory";
import type { ItemOutcome } from "./inventory";
import type { Page, StockRowDb, WarehouseRow } from "./repository";

const { InventoryService } = inventoryV1;
const MAX_PAGE_SIZE = 1000;

/** Defaults of the contract (page 1, 10 a page); out of range is invalid, never clamped. */
function pageOf(page: PageRequest | undefined): Page {
  const p = { page: page?.page || 1, pageSize: page?.pageSize || 10 };
  if (p.page < 1) throw invalid("page must be at least 1", [{ path: "page", message: "must be at least 1" }]);
  if (p.pageSize < 1 || p.pageSize > MAX_PAGE_SIZE) {
    throw invalid(`pageSize must be 1..${MAX_PAGE_SIZE}`, [{ path: "pageSize", message: `must be 1..${MAX_PAGE_SIZE}` }]);
  }
  return p;
}

export const warehouseFromRow = (r: WarehouseRow) => ({
  id: r.id,
  externalId: r.external_id,
  name: r.name,
  centralWarehouse: r.central_warehouse,
  createdAt: timestampFromDate(r.created_at),
  updatedAt: timestampFromDate(r.updated_at),
});

export const stockFromRow = (r: StockRowDb) => ({
  key: r.key,
  sku: r.sku ?? undefined,
  ean: r.ean ?? undefined,
  supplier: r.supplier ?? undefined,
  availableQuantity: r.available_quantity,
  physicalQuantity: r.physical_quantity,
  date: timestampFromDate(new Date(r.date)),
  externalWarehouseId: r.external_warehouse_id,
  skuId: r.sku_id,
  warehouseId: r.warehouse_id,
  updatedAt: timestampFromDate(r.updated_at),
});

const batchResult = (o: ItemOutcome) => ({ result: o });

/** Thin Connect handlers: proto in, plain function, proto out. */
export function inventoryRoutes(ctx: ServiceContext) {
  const { db } = ctx;
  return (router: ConnectRouter) =>
    router.service(InventoryService, {
      async listWarehouses(req, c) {
        const bad = req.warehouseIds.findIndex((id) => !isUuid(id));
        if (bad >= 0) throw invalid("warehouse_id must be a UUID", [{ path: "warehouse_id", message: "must be a UUID" }]);
        const { rows, total } = await inventory.listWarehouses(db, callerOf(c).accountId, req.warehouseIds, pageOf(req.page));
        return { warehouses: rows.map(warehouseFromRow), totalCount: BigInt(total) };
      },
      async upsertWarehouses(req, c) {
        const rows = await inventory.upsertWarehouses(ctx, callerOf(c).accountId, req.warehouses);
        return {
          results: rows.map((r) => ({
            result: { statusCode: r.created ? 201 : 200, message: r.created ? "created" : "updated", reference: r.external_id, referenceField: "externalId" },
            warehouse: warehouseFromRow(r),
          })),
        };
      },
      async getWarehouse(req, c) {
        return { warehouse: warehouseFromRow(await inventory.getWarehouse(db, callerOf(c).accountId, req.externalId)) };
      },
      async updateWarehouse(req, c) {
        const row = await inventory.updateWarehouse(ctx, callerOf(c).accountId, req.externalId, req.warehouse ?? ({} as inventoryV1.Warehouse));
        return { warehouse: warehouseFromRow(row) };
      },
      async deleteWarehouse(req, c) {
        await inventory.deleteWarehouse(ctx, callerOf(c).accountId, req.externalId);
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
    });
}
