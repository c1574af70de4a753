import { z } from "zod";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { catalogueV1, inventoryV1, stockTriggerToRest, toRestJson } from "@analytics/contracts";
import { generalResponse } from "@analytics/errors";
import { BATCH_MAX, runBatch, serverFailure } from "../http/batch";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { batchOf, repeatable, route, type RouteContext } from "../pipeline/route";
import { answerRevision } from "../http/conditional";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { wholeNumber } from "../http/values";
import { dataVersionOf, type CallAs } from "../clients";
import { productUuids } from "./product-ids";
import { messageOfBody, storePutSchema, storeSchema, storeWriteSchema, trafficSchema, trafficWriteSchema, triggerSchema, triggerWriteSchema } from "./inventory-schemas";

const { StockTriggerSchema, StoreSchema, StoreTrafficEventSchema } = inventoryV1;

/**
 * Stores as answered: warehouses as `{externalId, name}` (the published client's Warehouse; its
 * struct cannot hold a list of strings), the address also under its spelling `adress`.
 */
async function storesToRest(inventory: Client<typeof inventoryV1.InventoryService>, options: ReturnType<CallAs>, stores: inventoryV1.Store[]) {
  const externalIds = [...new Set(stores.flatMap((s) => s.warehouses))];
  const names = new Map<string, string>();
  if (externalIds.length) for (const w of (await inventory.resolveWarehouses({ externalIds }, options)).warehouses) names.set(w.externalId, w.name);
  return stores.map((s) => ({
    ...toRestJson(StoreSchema, s),
    warehouses: s.warehouses.map((externalId) => ({ externalId, name: names.get(externalId) ?? "" })),
    adress: s.address ?? null,
    adress2: s.address2 ?? null,
  }));
}
const storeMessage = (s: unknown) => messageOfBody(StoreSchema, s as Record<string, unknown>);

export type TriggerItem = Record<string, unknown> & { key: string; sku?: string | null };

/** Valid stock triggers as their batch sends them to inventory (and an import's lines): their SKUs resolved by the catalogue in one call. */
export async function triggerWrites(catalogue: Client<typeof catalogueV1.CatalogueService>, options: ReturnType<CallAs>, items: TriggerItem[]) {
  const resolved = await catalogue.resolveSkus({ references: items.map((t) => ({ key: t.key })) }, options);
  return items.map((t, i) => {
    const s = resolved.skus[i];
    const trigger = messageOfBody(StockTriggerSchema, t, ["skuUuid"]);
    trigger.key = s?.found ? s.key : t.key;
    trigger.sku = t.sku ?? s?.sku;
    trigger.skuId = s?.found ? s.id : "";
    trigger.skuSeq = s?.found ? s.seq : undefined;
    return { skuFound: !!s?.found, trigger };
  });
}

/** What the store, traffic and stock-trigger routes register with and call. */
interface Deps {
  ctx: RouteContext;
  inventory: Client<typeof inventoryV1.InventoryService>;
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  as: CallAs;
}

const externalStoreID = z.string().min(1).max(500);

const trafficQuery = {
  ...pageQuery(),
  from: z.string().max(40).datetime({ offset: true }).optional().describe("eventTime at or after (RFC 3339)"),
  to: z.string().max(40).datetime({ offset: true }).optional().describe("eventTime before (RFC 3339)"),
};

/** GET traffic events of every counter, or (byCounter) of the one the path names. */
function listTraffic({ ctx, inventory, as }: Deps, byCounter: boolean): void {
  route(ctx, {
    method: "GET",
    url: byCounter ? "/v2/api/storetrafficevents/:storeTrafficCounterID" : "/v2/api/storetrafficevents",
    summary: byCounter ? "Traffic events of one counter" : "Store traffic events in creation order",
    tag: "Store traffic",
    auth: "bearer",
    dataVersion: dataVersionOf(as, { inventory }),
    params: byCounter ? { storeTrafficCounterID: z.string().min(1).max(500) } : {},
    query: trafficQuery,
    responses: {
      200: { description: "traffic events", schema: z.array(trafficSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ params, query, caller }, request, reply) => {
      const res = await inventory.listStoreTraffic(
        {
          page: { page: query.page, pageSize: query.pageSize },
          storeTrafficCounterId: (params as { storeTrafficCounterID?: string }).storeTrafficCounterID ?? "",
          from: query.from ? timestampFromDate(new Date(query.from)) : undefined,
          to: query.to ? timestampFromDate(new Date(query.to)) : undefined,
        },
        as(caller),
      );
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.events.map((e) => toRestJson(StoreTrafficEventSchema, e));
    },
  });
}

/** /v2/api/stores, /v2/api/storetrafficevents, /v2/api/stocktriggers -> analytics.inventory.v1.InventoryService */
export function storeRoutes(
  ctx: RouteContext,
  inventory: Client<typeof inventoryV1.InventoryService>,
  catalogue: Client<typeof catalogueV1.CatalogueService>,
  as: CallAs,
): void {
  const deps: Deps = { ctx, inventory, catalogue, as };
  listStores(deps);
  upsertStores(deps);
  getStore(deps);
  replaceStore(deps);
  deleteStore(deps);

  listTraffic(deps, false);
  listTraffic(deps, true);
  recordTraffic(deps);

  listStockTriggers(deps);
  getStockTrigger(deps);
  upsertStockTriggers(deps);
}

function listStores({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/stores",
    summary: "List stores in creation order",
    tag: "Stores",
    auth: "bearer",
    dataVersion: dataVersionOf(as, { inventory }),
    query: pageQuery(),
    responses: {
      200: { description: "stores", schema: z.array(storeSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const res = await inventory.listStores({ page: { page: query.page, pageSize: query.pageSize } }, as(caller));
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return storesToRest(inventory, as(caller), res.stores);
    },
  });
}

function upsertStores({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/stores",
    summary: "Create or update stores by externalStoreId (all or nothing); `warehouses` names warehouses by externalId",
    tag: "Stores",
    auth: "bearer",
    body: z.array(storeWriteSchema).min(1).max(BATCH_MAX),
    responses: {
      201: { description: "the stores as stored, in request order", schema: z.array(storeSchema) },
      400: { description: "an invalid store or an unknown warehouse; nothing was written", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const res = await inventory.upsertStores({ stores: body.map(storeMessage) }, as(caller));
      reply.status(201);
      return storesToRest(inventory, as(caller), res.results.map((r) => r.store!));
    },
  });
}

function getStore({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/stores/:externalStoreID",
    summary: "One store",
    tag: "Stores",
    auth: "bearer",
    params: { externalStoreID },
    responses: {
      200: { description: "the store", schema: storeSchema },
      404: { description: "unknown store", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }, _req, reply) =>
      (await storesToRest(inventory, as(caller), [answerRevision(reply, await inventory.getStore({ externalStoreId: params.externalStoreID }, as(caller))).store!]))[0],
  });
}

function replaceStore({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/stores/:externalStoreID",
    summary: "Replace a store (fields not sent take their defaults); externalStoreId, when sent, must equal the path's",
    tag: "Stores",
    auth: "bearer",
    params: { externalStoreID },
    body: storePutSchema,
    responses: {
      200: { description: "the store as stored", schema: storeSchema },
      400: { description: "invalid store or unknown warehouse", schema: generalResponseSchema },
      404: { description: "unknown store", schema: generalResponseSchema },
    },
    handler: async ({ params, body, caller, ifRevision }) =>
      (await storesToRest(inventory, as(caller), [(await inventory.updateStore({ externalStoreId: params.externalStoreID, store: storeMessage(body), ifRevision }, as(caller))).store!]))[0],
  });
}

function deleteStore({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "DELETE",
    url: "/v2/api/stores/:externalStoreID",
    summary: "Delete a store",
    tag: "Stores",
    auth: "bearer",
    params: { externalStoreID },
    responses: {
      200: { description: "deleted", schema: generalResponseSchema },
      404: { description: "unknown store", schema: generalResponseSchema },
    },
    handler: async ({ params, caller, ifRevision }) => {
      await inventory.deleteStore({ externalStoreId: params.externalStoreID, ifRevision }, as(caller));
      return generalResponse(200, "deleted");
    },
  });
}

function recordTraffic({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/storetrafficevents",
    summary: `Record up to ${BATCH_MAX} traffic events in one write (all or nothing); (storeTrafficCounterID, eventTime) is unique and a replay overwrites`,
    tag: "Store traffic",
    auth: "bearer",
    body: z.array(trafficWriteSchema).min(1).max(BATCH_MAX),
    responses: {
      200: { description: "recorded: how many were new and how many overwrote", schema: generalResponseSchema },
      400: { description: "an invalid event (negative counts, ...); nothing was written", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }) => {
      const res = await inventory.recordStoreTraffic(
        {
          events: body.map((e) => messageOfBody(StoreTrafficEventSchema, e as Record<string, unknown>)),
        },
        as(caller),
      );
      return generalResponse(200, `recorded: ${res.created} created, ${res.updated} updated`);
    },
  });
}

function listStockTriggers({ ctx, inventory, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/stocktriggers",
    summary: "List stock triggers (per-SKU, per-warehouse settings) in creation order",
    tag: "Stock triggers",
    auth: "bearer",
    dataVersion: dataVersionOf(as, { inventory }),
    query: {
      ...pageQuery(),
      warehouseId: repeatable(z.string().uuid()).describe("warehouse IDs (UUID); repeatable"),
      sku_id: repeatable(z.union([z.string().uuid(), z.string().regex(/^[1-9][0-9]{0,15}$/, "a product's integer id or UUID")])).describe("products by integer id or UUID; repeatable"),
      key: repeatable().describe("SKU keys; repeatable"),
    },
    responses: {
      200: { description: "stock triggers", schema: z.array(triggerSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const res = await inventory.listStockTriggers(
        { page: { page: query.page, pageSize: query.pageSize }, warehouseIds: query.warehouseId ?? [], skuIds: await productUuids(catalogue, as(caller), query.sku_id ?? []), keys: query.key ?? [] },
        as(caller),
      );
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.triggers.map(stockTriggerToRest);
    },
  });
}

function getStockTrigger({ ctx, inventory, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/stocktriggers/:ID",
    summary: "One stock trigger",
    tag: "Stock triggers",
    auth: "bearer",
    params: { ID: wholeNumber(1, Number.MAX_SAFE_INTEGER) },
    responses: {
      200: { description: "the stock trigger", schema: triggerSchema },
      400: { description: "ID is not a positive integer", schema: generalResponseSchema },
      404: { description: "unknown stock trigger", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }) => stockTriggerToRest((await inventory.getStockTrigger({ id: BigInt(params.ID) }, as(caller))).trigger!),
  });
}

function upsertStockTriggers({ ctx, inventory, catalogue, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/stocktriggers/batch",
    summary: `Create or replace up to ${BATCH_MAX} stock triggers keyed by warehouse (warehouseId or warehouseExternalId) and SKU key; each created or changed trigger is a sku_warehouse_settings_change event`,
    tag: "Stock triggers",
    auth: "bearer",
    body: batchOf(triggerWriteSchema, BATCH_MAX),
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per item (201 created, 200 updated, or unchanged when sent as stored, 400 invalid, 404 unknown SKU or warehouse)", schema: z.array(batchResponseSchema) },
      400: { description: "the body is not an array of 1 to 1000 items", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, triggerWriteSchema, "key", async (valid) => {
        const res = await inventory.upsertStockTriggers({ triggers: await triggerWrites(catalogue, as(caller), valid as TriggerItem[]) }, as(caller));
        return res.results.map((r) => ({
          message: r.result?.message ?? "",
          reference: r.result?.reference ?? "",
          referenceField: r.result?.referenceField ?? "",
          statusCode: r.result?.statusCode ?? 500,
        }));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}
