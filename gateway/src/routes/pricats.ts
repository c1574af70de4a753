import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { RestDecimal, fromRestJson, pricingV1, toRestJson } from "@analytics/contracts";
import { BATCH_MAX, runBatch, serverFailure } from "../http/batch";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { repeatable, route, type RouteContext } from "../pipeline/route";
import { documentAs } from "../http/openapi";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { decimal, jsonObject } from "../http/values";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import { dataVersionOf, type CallAs } from "../clients";
import { batchResult, canonicalNames, currency } from "./pricing-schemas";

const { PricatSchema, PricatSkuSchema } = pricingV1;
const text = z.string().max(500).nullish();

/**
 * The published client's PricatSku fields: `price` and `costPrice` are the row's prices of those
 * names, `priceCurrency` its currency; the others are kept in externalAttributes. All are
 * answered under these names too.
 */
const CLIENT_PRICES = ["price", "costPrice"] as const;
const CLIENT_EXTRAS = ["supplier", "supplierGLN", "costPriceCurrency", "info"] as const;
function clientSkuFields() {
  const deprecated = (description: string) => ({ deprecated: true, description: `sent by the published client; ${description}` });
  return {
    price: decimal().nullish().meta(deprecated("the row's price named price (prices.price)")),
    costPrice: decimal().nullish().meta(deprecated("the row's price named costPrice (prices.costPrice)")),
    priceCurrency: z.union([currency, z.literal("")]).nullish().meta(deprecated("the row's currency when currency is not sent")),
    supplier: text.meta(deprecated("kept in externalAttributes")),
    supplierGLN: text.meta(deprecated("kept in externalAttributes")),
    costPriceCurrency: z.string().max(500).nullish().meta(deprecated("kept in externalAttributes")),
    info: jsonObject().nullish().meta(deprecated("kept in externalAttributes")),
  };
}
/** The Pricat and PricatSku messages' fields; REST reads a currency as a code, and takes the client's names. */
const pricatFields = requestShape(PricatSchema, { timestamp: z.unknown(), trim: true, omit: ["createdAt", "updatedAt"] });
const pricatInput = z.preprocess(canonicalNames(Object.keys(pricatFields)), z.strictObject(pricatFields));
const skuFields = {
  ...requestShape(PricatSkuSchema, { timestamp: z.unknown(), trim: true, fields: { currency: currency.nullish() } }),
  ...clientSkuFields(),
};
const pricatSkuInput = z.preprocess(canonicalNames(Object.keys(skuFields)), z.strictObject(skuFields)).meta({ id: "PricatSkuUpsert" });

const pricatSchema = z.object(answerShape(PricatSchema)).meta({ id: "Pricat" });
const pricatSkuSchema = z
  .object({
    ...answerShape(PricatSkuSchema),
    price: z.number().nullable().meta({ deprecated: true, description: "prices.price, under the published client's name" }),
    costPrice: z.number().nullable().meta({ deprecated: true, description: "prices.costPrice, under the published client's name" }),
    priceCurrency: z.string().nullable().meta({ deprecated: true, description: "currency, under the published client's name" }),
    ...Object.fromEntries(CLIENT_EXTRAS.map((name) => [name, z.unknown().meta({ deprecated: true, description: "sent by the published client, kept in externalAttributes" })])),
  })
  .meta({ id: "PricatSku" });

const present = (entries: Record<string, unknown>) => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== null && v !== undefined));

/** A validated row as proto (read-only fields dropped, decimals exact), the client's fields in their places. */
function skuToProto(input: Record<string, unknown>): pricingV1.PricatSku {
  const { price, costPrice, priceCurrency, supplier, supplierGLN, costPriceCurrency, info, ...sku } = input;
  const clientPrices = present({ price, costPrice });
  const clientExtras = present({ supplier, supplierGLN, costPriceCurrency, info });
  const prices = Object.keys(clientPrices).length ? { ...clientPrices, ...(sku.prices as object) } : sku.prices;
  const externalAttributes = Object.keys(clientExtras).length ? { ...clientExtras, ...(sku.externalAttributes as object) } : sku.externalAttributes;
  return fromRestJson(PricatSkuSchema, present(withoutReadOnly(PricatSkuSchema, { ...sku, currency: sku.currency ?? (priceCurrency || undefined), prices, externalAttributes })));
}

const skuToRest = (s: pricingV1.PricatSku) => {
  const rest = toRestJson(PricatSkuSchema, s);
  const attributes = (rest.externalAttributes ?? {}) as Record<string, unknown>;
  const price = (name: string) => (s.prices[name] ? new RestDecimal(s.prices[name].value) : null);
  return {
    ...rest,
    prices: Object.fromEntries(Object.entries(s.prices).map(([k, v]) => [k, new RestDecimal(v.value)])),
    // Also under the published client's names.
    ...Object.fromEntries(CLIENT_PRICES.map((name) => [name, price(name)])),
    priceCurrency: rest.currency ?? null,
    ...Object.fromEntries(CLIENT_EXTRAS.map((name) => [name, attributes[name] ?? null])),
  };
};

/** What the pricat routes register with and call. */
interface Deps {
  ctx: RouteContext;
  pricing: Client<typeof pricingV1.PricingService>;
  as: CallAs;
}

const tag = "Pricats";
const badRequest = { description: "invalid input", schema: generalResponseSchema };

/** /v2/api/pricats -> analytics.pricing.v1.PricingService */
export function pricatRoutes(ctx: RouteContext, pricing: Client<typeof pricingV1.PricingService>, as: CallAs): void {
  const deps: Deps = { ctx, pricing, as };
  listPricats(deps);
  listPricatProducts(deps);
  upsertPricatProducts(deps);
}

function listPricats({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/pricats",
    summary: "Pricats (supplier price catalogues)",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { pricing }),
    query: { ...pageQuery(1000), externalids: repeatable(), supplierGln: repeatable(), supplier: repeatable().describe("matches supplierName") },
    responses: { 200: { description: "pricats in creation order", schema: z.array(pricatSchema), headers: pageHeaders }, 400: badRequest },
    handler: async ({ query, caller }, request, reply) => {
      const req = { page: { page: query.page, pageSize: query.pageSize }, externalIds: query.externalids ?? [], supplierGlns: query.supplierGln ?? [], suppliers: query.supplier ?? [] };
      const res = await pricing.listPricats(req, as(caller));
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.pricats.map((p) => toRestJson(PricatSchema, p));
    },
  });
}

function listPricatProducts({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/pricats/products",
    summary: "Pricat SKU rows",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { pricing }),
    query: { ...pageQuery(1000), pricatExternalId: repeatable(), sku: repeatable(), season: repeatable(), supplierGln: repeatable(), supplier: repeatable() },
    responses: { 200: { description: "rows in creation order", schema: z.array(pricatSkuSchema), headers: pageHeaders }, 400: badRequest },
    handler: async ({ query, caller }, request, reply) => {
      const req = {
        page: { page: query.page, pageSize: query.pageSize },
        pricatExternalIds: query.pricatExternalId ?? [],
        skus: query.sku ?? [],
        seasons: query.season ?? [],
        supplierGlns: query.supplierGln ?? [],
        suppliers: query.supplier ?? [],
      };
      const res = await pricing.listPricatSkus(req, as(caller));
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.skus.map(skuToRest);
    },
  });
}

function upsertPricatProducts({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/pricats/products/batch",
    summary: "Create or update a pricat and upsert up to 1000 of its SKU rows by (sku, season); one answer per row",
    tag,
    auth: "bearer",
    // Rows are validated one by one (a bad row is its own 400); the document shows their schema.
    body: documentAs(
      z.strictObject({ pricat: pricatInput, items: z.array(z.unknown()).min(1).max(BATCH_MAX) }),
      z.strictObject({ pricat: pricatInput, items: z.array(pricatSkuInput).min(1).max(BATCH_MAX) }),
    ),
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per item (reference: sku); a row named twice is answered as if the rows ran in order (201 then 200) and the later is stored", schema: z.array(batchResponseSchema) },
      400: badRequest,
    },
    handler: async ({ body, caller }, _req, reply) => {
      const pricat = fromRestJson(PricatSchema, present(body.pricat));
      const results = await runBatch(body.items, pricatSkuInput, "sku", async (items) => {
        const res = await pricing.upsertPricatSkus({ pricat, items: items.map((i) => skuToProto(i)) }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}
