import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { catalogueV1, inventoryV1, toRestJson } from "@analytics/contracts";
import { generalResponse } from "@analytics/errors";
import { BATCH_MAX, runBatch, serverFailure, type BatchResponse } from "../http/batch";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { batchOf, repeatable, route, type RouteContext } from "../pipeline/route";
import { answerRevision } from "../http/conditional";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { dataVersionOf, type CallAs } from "../clients";
import { messageOfBody, stockRowSchema, stockWriteSchema, warehousePutSchema, warehouseSchema, warehouseWriteSchema } from "./inventory-schemas";

const { WarehouseSchema, StockRowSchema } = inventoryV1;
const externalId = z.string().min(1).max(500);

const toWarehouse = (w: inventoryV1.Warehouse) => toRestJson(WarehouseSchema, w);
const batchResult = (r?: inventoryV1.BatchResult): BatchResponse => ({
  message: r?.message ?? "",
  reference: r?.reference ?? "",
  referenceField: r?.referenceField ?? "",
  statusCode: r?.statusCode ?? 500,
});

/** A validated stock row; the fields the SKU is named by, typed. */
export type StockWrite = Record<string, unknown> & { key?: string; sku?: string | null; ean?: string | null };

/** Valid stock rows as the stock batch sends them to inventory (and an import's lines): their SKUs resolved by the catalogue in one call. */
export async function stockWrites(catalogue: Client<typeof catalogueV1.CatalogueService>, options: ReturnType<CallAs>, rows: StockWrite[]) {
  const resolved = await catalogue.resolveSkus({ references: rows.map((r) => ({ key: r.key, sku: r.sku ?? undefined, ean: r.ean ?? undefined })) }, options);
  return rows.map((r, i) => {
    const s = resolved.skus[i];
    const row = messageOfBody(StockRowSchema, r);
    row.key = s?.found ? s.key : (r.key ?? r.sku ?? r.ean ?? "");
    row.sku = r.sku ?? s?.sku;
    row.ean = r.ean ?? s?.ean;
    row.skuId = s?.found ? s.id : "";
    return { skuFound: !!s?.found, row };
  });
}

/** What the warehouse routes register with and call. */
interface Deps {
  ctx: RouteContext;
  inventory: Client<typeof inventoryV1.InventoryService>;
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  as: CallAs;
}

const tag = "Warehouses";
const stockQuery = { ...pageQuery(), keys: repeatable(), skus: repeatable(), eans: repeatable() };

/** GET the stock of every warehouse, or (byPath) of the one the path names. */
function listStock({ ctx, inventory, as }: Deps, byPath: boolean): void {
  route(ctx, {
    method: "GET",
    url: byPath ? "/v2/api/warehouses/:externalWarehouseID/stock" : "/v2/api/warehouses/stock",
    operationId: byPath ? "listWarehouseStock" : "listStock",
    summary: byPath ? "The stock of one warehouse, one row per SKU" : "Stock of every warehouse, one row per (warehouse, SKU)",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { inventory }),
    params: byPath ? { externalWarehouseID: externalId } : {},
    query: stockQuery,
    responses: {
      200: { description: "stock rows in creation order", schema: z.array(stockRowSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
      404: { description: byPath ? "unknown warehouse" : "unused", schema: generalResponseSchema },
    },
    handler: async ({ params, query, caller }, request, reply) => {
      const res = await inventory.listStock(
        {
          page: { page: query.page, pageSize: query.pageSize },
          externalWarehouseId: (params as { externalWarehouseID?: string }).externalWarehouseID ?? "",
          keys: query.keys ?? [],
          skus: query.skus ?? [],
          eans: query.eans ?? [],
        },
        as(caller),
      );
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.rows.map((r) => toRestJson(StockRowSchema, r));
    },
  });
}

/** POST stock rows, each naming its warehouse, or (byPath) all in the one the path names. */
function postStock({ ctx, inventory, catalogue, as }: Deps, byPath: boolean): void {
  route(ctx, {
    method: "POST",
    url: byPath ? "/v2/api/warehouses/:externalWarehouseID/stock" : "/v2/api/warehouses/stock",
    operationId: byPath ? "upsertWarehouseStock" : "upsertStock",
    summary:
      "Stock snapshots per (warehouse, SKU): a row older (by `date`) than the stored one is accepted and ignored (its message says so), " +
      "so replays and out-of-order deliveries never move stock backwards",
    tag,
    auth: "bearer",
    params: byPath ? { externalWarehouseID: externalId } : {},
    body: batchOf(stockWriteSchema, BATCH_MAX),
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per row (200 applied or ignored, 400 invalid, 404 unknown SKU or warehouse)", schema: z.array(batchResponseSchema) },
      400: { description: "the body is not an array of 1 to 1000 rows", schema: generalResponseSchema },
    },
    handler: async ({ params, body, caller }, _req, reply) => {
      const pathWarehouse = (params as { externalWarehouseID?: string }).externalWarehouseID;
      const results = await runBatch(body, stockWriteSchema, "key", async (rows: StockWrite[]) => {
        const res = await inventory.upsertStock({ rows: await stockWrites(catalogue, as(caller), rows), externalWarehouseId: pathWarehouse ?? "" }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}

/**
 * /v2/api/warehouses and their stock -> analytics.inventory.v1.InventoryService. Stock rows name
 * their SKU by key (or old key), sku or ean: all rows of a batch are resolved by the catalogue in
 * one ResolveSkus call before the inventory applies them.
 */
export function warehouseRoutes(
  ctx: RouteContext,
  inventory: Client<typeof inventoryV1.InventoryService>,
  catalogue: Client<typeof catalogueV1.CatalogueService>,
  as: CallAs,
): void {
  const deps: Deps = { ctx, inventory, catalogue, as };
  listWarehouses(deps);
  upsertWarehouses(deps);
  // Registered before /warehouses/:externalWarehouseID so that "stock" is never read as an id.
  listStock(deps, false);
  postStock(deps, false);
  listStock(deps, true);
  postStock(deps, true);
  getWarehouse(deps);
  replaceWarehouse(deps);
  deleteWarehouse(deps);
}

function listWarehouses({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/warehouses",
    summary: "List warehouses in creation order",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { inventory }),
    query: { ...pageQuery(), warehouse_id: repeatable(z.string().uuid()).describe("warehouse IDs (UUID); repeatable or comma-separated") },
    responses: {
      200: { description: "warehouses", schema: z.array(warehouseSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const res = await inventory.listWarehouses({ page: { page: query.page, pageSize: query.pageSize }, warehouseIds: query.warehouse_id ?? [] }, as(caller));
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.warehouses.map(toWarehouse);
    },
  });
}

function upsertWarehouses({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/warehouses",
    summary: "Create or update warehouses by externalId (all or nothing)",
    tag,
    auth: "bearer",
    body: z.array(warehouseWriteSchema).min(1).max(BATCH_MAX),
    responses: {
      201: { description: "the warehouses as stored, in request order", schema: z.array(warehouseSchema) },
      400: { description: "an invalid or repeated warehouse; nothing was written", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const res = await inventory.upsertWarehouses(
        { warehouses: body.map((w) => messageOfBody(WarehouseSchema, w as Record<string, unknown>)) },
        as(caller),
      );
      reply.status(201);
      return res.results.map((r) => toWarehouse(r.warehouse!));
    },
  });
}

function getWarehouse({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/warehouses/:externalWarehouseID",
    summary: "One warehouse by externalId",
    tag,
    auth: "bearer",
    params: { externalWarehouseID: externalId },
    responses: {
      200: { description: "the warehouse", schema: warehouseSchema },
      404: { description: "unknown warehouse", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }, _req, reply) =>
      toWarehouse(answerRevision(reply, await inventory.getWarehouse({ externalId: params.externalWarehouseID }, as(caller))).warehouse!),
  });
}

function replaceWarehouse({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/warehouses/:externalWarehouseID",
    summary: "Replace a warehouse's name and centralWarehouse (fields not sent take their defaults); externalId, when sent, must equal the path's",
    tag,
    auth: "bearer",
    params: { externalWarehouseID: externalId },
    body: warehousePutSchema,
    responses: {
      200: { description: "the warehouse as stored", schema: warehouseSchema },
      400: { description: "invalid warehouse", schema: generalResponseSchema },
      404: { description: "unknown warehouse", schema: generalResponseSchema },
    },
    handler: async ({ params, body, caller, ifRevision }) => {
      const res = await inventory.updateWarehouse(
        { externalId: params.externalWarehouseID, warehouse: messageOfBody(WarehouseSchema, body as Record<string, unknown>), ifRevision },
        as(caller),
      );
      return toWarehouse(res.warehouse!);
    },
  });
}

function deleteWarehouse({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "DELETE",
    url: "/v2/api/warehouses/:externalWarehouseID",
    summary: "Delete a warehouse. A warehouse that still holds stock rows or stock triggers is a 409: the client deletes those first",
    tag,
    auth: "bearer",
    params: { externalWarehouseID: externalId },
    responses: {
      200: { description: "deleted", schema: generalResponseSchema },
      404: { description: "unknown warehouse", schema: generalResponseSchema },
      409: { description: "the warehouse still holds stock or stock triggers", schema: generalResponseSchema },
    },
    handler: async ({ params, caller, ifRevision }) => {
      await inventory.deleteWarehouse({ externalId: params.externalWarehouseID, ifRevision }, as(caller));
      return generalResponse(200, "deleted");
    },
  });
}
