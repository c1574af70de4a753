import { fromBinary } from "@bufbuild/protobuf";
import { inventoryV1 } from "@analytics/contracts";
import { applyInRuns, batchResponse, ImportJobs } from "@analytics/rpc";
import { upsertStock } from "./inventory";
import { upsertTriggers } from "./triggers";

/**
 * The inventory's import jobs (docs/imports.md): a line is an item of the resource's batch (POST
 * /warehouses/stock, /stocktriggers/batch; SKUs resolved by the gateway as the batch's are),
 * applied by the same function, in the chunk's transaction.
 */
export const inventoryImports = new ImportJobs({
  // A batch offers only the newest snapshot of a (warehouse, SKU) it names twice: a line repeating
  // one is offered in a later call, after the earlier line, as a later batch would be.
  stock: {
    async apply(ctx, { accountId }, items) {
      const { rows } = fromBinary(inventoryV1.UpsertStockRequestSchema, items);
      return applyInRuns(rows, ({ row }) => JSON.stringify([row?.externalWarehouseId, row?.skuId || row?.key]), async (run) => (await upsertStock(ctx, accountId, run)).map(batchResponse));
    },
  },
  // A batch refuses a (warehouse, SKU) named twice: a repeat is applied in a later call.
  stocktriggers: {
    async apply(ctx, { accountId }, items) {
      const { triggers } = fromBinary(inventoryV1.UpsertStockTriggersRequestSchema, items);
      return applyInRuns(triggers, ({ trigger: t }) => JSON.stringify([t?.warehouseId || t?.warehouseExternalId, t?.skuId || t?.key]), async (run) =>
        (await upsertTriggers(ctx, accountId, run)).map(batchResponse),
      );
    },
  },
});
