import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { catalogueV1, decimalFromNumber, fromRestJson, pricingV1 } from "@analytics/contracts";
import type { Caller } from "@analytics/auth";
import { BATCH_MAX, runBatch, serverFailure } from "../http/batch";
import { jsonArrayStream } from "../http/json-stream";
import { pageHeaders, setPageHeaders } from "../http/paging";
import { batchOf, route, type RouteContext } from "../pipeline/route";
import { answerRevision } from "../http/conditional";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { wholeNumber } from "../http/values";
import { withoutReadOnly } from "../http/proto-schema";
import { dataVersionOf, type CallAs } from "../clients";
import { CUSTOM_PRICE_NUMBERS, batchResult, priceDeleteSchema, priceListPutSchema, priceListSchema, priceListToRest, priceListUpsertSchema, priceSchema, priceToRest, priceUpdateSchema } from "./pricing-schemas";

const { PriceListSchema, PriceSchema } = pricingV1;
type Pricing = Client<typeof pricingV1.PricingService>;
type Catalogue = Client<typeof catalogueV1.CatalogueService>;
const dec = (n: number) => ({ value: decimalFromNumber(n) });
/** A validated PriceListUpsert as proto (read-only timestamps dropped, VAT exact). */
const priceListInit = (body: Record<string, unknown>) => fromRestJson(PriceListSchema, withoutReadOnly(PriceListSchema, body));

/** A validated PriceUpdateRequest's Price (read-only fields dropped) and its customPrice<n>. */
function priceOf(body: Record<string, unknown>): { price: pricingV1.Price; numbered: Record<number, { value: string }> } {
  const numbered: Record<number, { value: string }> = {};
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    const n = CUSTOM_PRICE_NUMBERS.find((k) => name === `customPrice${k}`);
    if (n === undefined) fields[name] = value;
    else if (typeof value === "number") numbered[n] = dec(value);
  }
  return { price: fromRestJson(PriceSchema, withoutReadOnly(PriceSchema, fields)), numbered };
}

/** Optional paging: without `page` and `pageSize` the whole set is streamed. */
const optionalPage = {
  page: wholeNumber(1, 2_147_483_647).optional().describe("1-based page; with neither page nor pageSize every price is streamed"),
  pageSize: wholeNumber(1, 1000).optional().describe("page size, at most 1000 (default 10 when page is sent)"),
};

/** What the price-list and price routes register with and call. */
interface Deps {
  ctx: RouteContext;
  pricing: Pricing;
  catalogue: Catalogue;
  as: CallAs;
}

const tag = "Price lists and prices";
const notFound = { description: "no such price list", schema: generalResponseSchema };
const badRequest = { description: "invalid input", schema: generalResponseSchema };

/** The prices of one list (or of all), a page of them or every one streamed. */
const pricesOf = async ({ pricing, as }: Deps, caller: Caller, listExternalId: string | undefined, query: { page?: number; pageSize?: number }, request: Parameters<typeof setPageHeaders>[0], reply: Parameters<typeof setPageHeaders>[1]) => {
  if (query.page === undefined && query.pageSize === undefined) {
    // Every price, chunk by chunk as the service streams it: nobody holds the whole set.
    // Every price of an account may take longer than one call's deadline: each chunk has it instead.
    const options = as(caller);
    const all = await jsonArrayStream(
      (signal) => pricing.streamPrices({ listExternalId }, { ...options, timeoutMs: undefined, signal }),
      (chunk) => chunk.prices.map((p) => priceToRest(p, chunk.customPriceFields)),
      { idleTimeoutMs: options.timeoutMs },
    );
    return reply.type("application/json; charset=utf-8").send(all.body);
  }
  const page = { page: query.page ?? 1, pageSize: query.pageSize ?? 10 };
  const res = await pricing.listPrices({ page, listExternalId }, as(caller));
  setPageHeaders(request, reply, page, Number(res.totalCount));
  return res.prices.map((p) => priceToRest(p, res.customPriceFields));
};

/** The catalogue's products of the keys (keys and old keys alike), in one call per batch. */
const resolve = async ({ catalogue, as }: Deps, caller: Caller, keys: string[]) => (await catalogue.resolveSkus({ references: keys.map((key) => ({ key })) }, as(caller))).skus;

/** Valid price items as POST /prices/batch sends them to pricing (and an import's lines): their SKUs resolved by the catalogue in one call. */
export async function priceWrites(catalogue: Catalogue, options: ReturnType<CallAs>, items: Record<string, unknown>[]) {
  const skus = (await catalogue.resolveSkus({ references: items.map((i) => ({ key: i.key as string })) }, options)).skus;
  return items.map((i, n) => {
    const { price, numbered } = priceOf(i);
    return {
      listExternalId: price.listExternalId,
      key: price.key,
      productId: skus[n]?.found ? skus[n].id : "",
      productKey: skus[n]?.key ?? "",
      sku: skus[n]?.sku,
      price: price.price,
      season: price.season,
      vat: price.vat,
      customPrices: price.customPrices,
      numberedCustomPrices: numbered,
    };
  });
}

const idParam = { externalPriceListId: z.string().trim().min(1).max(500).describe("trimmed, as it is when written") };
const pricesResponse = { description: "prices in creation order (streamed when unpaged)", schema: z.array(priceSchema), headers: pageHeaders };

/** /v2/api/price-lists and /v2/api/prices -> analytics.pricing.v1.PricingService (SKUs resolved by the catalogue). */
export function pricingRoutes(ctx: RouteContext, pricing: Pricing, catalogue: Catalogue, as: CallAs): void {
  const deps: Deps = { ctx, pricing, catalogue, as };
  listPriceLists(deps);
  createPriceList(deps);
  getPriceList(deps);
  replacePriceList(deps);
  listPricesOfList(deps);
  listPrices(deps);

  upsertPrices(deps);
  deletePrices(deps);
}

function listPriceLists({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/price-lists",
    summary: "All price lists of the account",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { pricing }),
    responses: { 200: { description: "price lists in creation order", schema: z.array(priceListSchema) } },
    handler: async ({ caller }) => (await pricing.listPriceLists({}, as(caller))).priceLists.map(priceListToRest),
  });
}

function createPriceList({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/price-lists",
    summary: "Create a price list (an existing externalPriceListId is updated)",
    tag,
    auth: "bearer",
    body: priceListUpsertSchema,
    responses: { 201: { description: "the price list", schema: priceListSchema }, 400: badRequest },
    handler: async ({ body, caller }, _req, reply) => {
      const res = await pricing.createPriceList({ priceList: priceListInit(body) }, as(caller));
      reply.status(201);
      return priceListToRest(res.priceList);
    },
  });
}

function getPriceList({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/price-lists/:externalPriceListId",
    summary: "One price list",
    tag,
    auth: "bearer",
    params: idParam,
    responses: { 200: { description: "the price list", schema: priceListSchema }, 404: notFound },
    handler: async ({ params, caller }, _req, reply) => priceListToRest(answerRevision(reply, await pricing.getPriceList(params, as(caller))).priceList),
  });
}

function replacePriceList({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/price-lists/:externalPriceListId",
    summary: "Update a price list",
    tag,
    auth: "bearer",
    params: idParam,
    body: priceListPutSchema,
    responses: { 200: { description: "the price list", schema: priceListSchema }, 400: badRequest, 404: notFound },
    handler: async ({ params, body, caller, ifRevision }) => {
      const req = { externalPriceListId: params.externalPriceListId, priceList: priceListInit(body), ifRevision };
      return priceListToRest((await pricing.updatePriceList(req, as(caller))).priceList);
    },
  });
}

function listPricesOfList(d: Deps): void {
  route(d.ctx, {
    method: "GET",
    url: "/v2/api/price-lists/:externalPriceListId/prices",
    summary: "The prices of one price list",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(d.as, { pricing: d.pricing }),
    params: idParam,
    query: optionalPage,
    responses: { 200: pricesResponse, 400: badRequest, 404: notFound },
    handler: async ({ params, query, caller }, request, reply) => pricesOf(d, caller, params.externalPriceListId, query, request, reply),
  });
}

function listPrices(d: Deps): void {
  route(d.ctx, {
    method: "GET",
    url: "/v2/api/prices",
    summary: "All prices of the account: streamed whole without page/pageSize, else one page",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(d.as, { pricing: d.pricing }),
    query: optionalPage,
    responses: { 200: pricesResponse, 400: badRequest },
    handler: async ({ query, caller }, request, reply) => pricesOf(d, caller, undefined, query, request, reply),
  });
}

function upsertPrices(d: Deps): void {
  const { ctx, pricing, as } = d;
  route(ctx, {
    method: "POST",
    url: "/v2/api/prices/batch",
    summary: `Upsert up to ${BATCH_MAX} prices, one per (list, SKU, season); customPrices are merged; one answer per item`,
    tag,
    auth: "bearer",
    body: batchOf(priceUpdateSchema, BATCH_MAX),
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per item (201 created, 200 updated, 400 invalid, 404 unknown SKU or list)", schema: z.array(batchResponseSchema) },
      400: { description: "the body is not an array of 1 to 1000 items", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, priceUpdateSchema, "key", async (items) => {
        const prices = await priceWrites(d.catalogue, as(caller), items);
        return (await pricing.upsertPrices({ prices }, as(caller))).results.map((r) => batchResult(r.result));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}

function deletePrices(d: Deps): void {
  const { ctx, pricing, as } = d;
  route(ctx, {
    method: "DELETE",
    url: "/v2/api/prices/batch",
    summary: "Delete the listed keys' prices of one price list (of one season when sent)",
    tag,
    auth: "bearer",
    body: priceDeleteSchema,
    responses: {
      200: { description: "one BatchResponse per key (200 deleted, 404 unknown SKU, list, or no price)", schema: z.array(batchResponseSchema) },
      400: badRequest,
    },
    handler: async ({ body, caller }) => {
      const skus = await resolve(d, caller, body.keys);
      const keys = body.keys.map((key, n) => ({ key, productId: skus[n]?.found ? skus[n].id : "" }));
      const res = await pricing.deletePrices({ listExternalId: body.listExternalID, season: body.season ?? undefined, keys }, as(caller));
      return res.results.map(batchResult);
    },
  });
}
