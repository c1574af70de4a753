import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { RestDecimal, decimalFromNumber, pricingV1, toRestJson } from "@analytics/contracts";
import { BATCH_MAX, runBatch, serverFailure } from "../http/batch";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { repeatable, route, type RouteContext } from "../http/route";
import { documentAs } from "../http/openapi";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { decimal, jsonObject } from "../http/values";
import type { CallAs } from "../clients";
import { batchResult, canonicalNames, currency } from "./pricing-schemas";

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
const pricatFields = { externalId: z.string().trim().min(1).max(500), name: text, supplierGln: text, supplierName: text };
const pricatInput = z.preprocess(canonicalNames(Object.keys(pricatFields)), z.strictObject(pricatFields));
const skuFields = {
  pricatExternalId: z.unknown().optional().describe("read-only: the batch's pricat"),
  sku: z.string().trim().min(1).max(500),
  ean: text,
  season: text,
  productName: text,
  variantName: text,
  brand: text,
  category: text,
  color: text,
  size: text,
  gender: text,
  productGroupId: text,
  variantGroupId: text,
  imageUrl: z.string().max(10_000).nullish(),
  vat: decimal().refine((n) => n >= 0 && n <= 100, "must be 0..100").nullish(),
  prices: z.record(z.string().min(1).max(500), decimal()).nullish().describe("price name -> amount"),
  currency: currency.nullish(),
  customFields: jsonObject().nullish(),
  externalAttributes: jsonObject().nullish(),
  ...clientSkuFields(),
};
const pricatSkuInput = z.preprocess(canonicalNames(Object.keys(skuFields)), z.strictObject(skuFields)).meta({ id: "PricatSkuUpsert" });

const pricatSchema = z
  .object({ externalId: z.string(), name: z.string(), supplierGln: z.string().nullable(), supplierName: z.string().nullable(), createdAt: z.string(), updatedAt: z.string() })
  .meta({ id: "Pricat" });
const pricatSkuSchema = z
  .object({
    pricatExternalId: z.string(),
    ...Object.fromEntries(Object.keys(skuFields).filter((k) => !["pricatExternalId", "vat", "prices", "customFields", "externalAttributes"].includes(k)).map((k) => [k, z.string().nullable()])),
    sku: z.string(),
    vat: z.number().nullable(),
    prices: z.record(z.string(), z.number()),
    customFields: z.record(z.string(), z.unknown()).nullable(),
    externalAttributes: z.record(z.string(), z.unknown()).nullable(),
    price: z.number().nullable().meta({ deprecated: true, description: "prices.price, under the published client's name" }),
    costPrice: z.number().nullable().meta({ deprecated: true, description: "prices.costPrice, under the published client's name" }),
    priceCurrency: z.string().nullable().meta({ deprecated: true, description: "currency, under the published client's name" }),
    ...Object.fromEntries(CLIENT_EXTRAS.map((name) => [name, z.unknown().meta({ deprecated: true, description: "sent by the published client, kept in externalAttributes" })])),
  })
  .meta({ id: "PricatSku" });

/** A validated row as proto: strings as sent, decimals exact, null as absent. */
function skuToProto(input: z.infer<typeof pricatSkuInput>) {
  const { price, costPrice, priceCurrency, supplier, supplierGLN, costPriceCurrency, info, ...i } = input;
  const clientPrices = Object.entries({ price, costPrice }).filter(([, v]) => v !== null && v !== undefined) as [string, number][];
  const clientExtras = Object.entries({ supplier, supplierGLN, costPriceCurrency, info }).filter(([, v]) => v !== null && v !== undefined);
  const { pricatExternalId: _, vat, customFields, ...rest } = { ...i, currency: i.currency ?? (priceCurrency || undefined) };
  const prices = clientPrices.length ? { ...Object.fromEntries(clientPrices), ...i.prices } : i.prices;
  const externalAttributes = clientExtras.length ? { ...Object.fromEntries(clientExtras), ...i.externalAttributes } : i.externalAttributes;
  const { prices: _p, externalAttributes: _e, ...strings } = rest;
  const present = Object.fromEntries(Object.entries(strings).filter(([, v]) => v !== null && v !== undefined)) as Record<string, string>;
  return {
    ...present,
    sku: i.sku,
    vat: vat === null || vat === undefined ? undefined : { value: decimalFromNumber(vat) },
    prices: Object.fromEntries(Object.entries(prices ?? {}).map(([k, v]) => [k, { value: decimalFromNumber(v) }])),
    customFields: (customFields ?? undefined) as never,
    externalAttributes: (externalAttributes ?? undefined) as never,
  };
}

const skuToRest = (s: pricingV1.PricatSku) => {
  const rest = toRestJson(pricingV1.PricatSkuSchema, s);
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
    query: { ...pageQuery(1000), externalids: repeatable(), supplierGln: repeatable(), supplier: repeatable().describe("matches supplierName") },
    responses: { 200: { description: "pricats in creation order", schema: z.array(pricatSchema), headers: pageHeaders }, 400: badRequest },
    handler: async ({ query, caller }, request, reply) => {
      const req = { page: { page: query.page, pageSize: query.pageSize }, externalIds: query.externalids ?? [], supplierGlns: query.supplierGln ?? [], suppliers: query.supplier ?? [] };
      const res = await pricing.listPricats(req, as(caller));
      setPageHeaders(request, reply, query, Number(res.totalCount));
      return res.pricats.map((p) => toRestJson(pricingV1.PricatSchema, p));
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
      const pricat = { externalId: body.pricat.externalId, name: body.pricat.name ?? "", supplierGln: body.pricat.supplierGln ?? undefined, supplierName: body.pricat.supplierName ?? undefined };
      const results = await runBatch(body.items, pricatSkuInput, "sku", async (items) => {
        const res = await pricing.upsertPricatSkus({ pricat, items: items.map(skuToProto) }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}
