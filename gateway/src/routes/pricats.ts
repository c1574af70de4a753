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
  })
  .meta({ id: "PricatSku" });

/** A validated row as proto: strings as sent, decimals exact, null as absent. */
function skuToProto(i: z.infer<typeof pricatSkuInput>) {
  const { pricatExternalId: _, vat, prices, customFields, externalAttributes, ...strings } = i;
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

const skuToRest = (s: pricingV1.PricatSku) => ({
  ...toRestJson(pricingV1.PricatSkuSchema, s),
  prices: Object.fromEntries(Object.entries(s.prices).map(([k, v]) => [k, new RestDecimal(v.value)])),
});

/** /v2/api/pricats -> analytics.pricing.v1.PricingService */
export function pricatRoutes(ctx: RouteContext, pricing: Client<typeof pricingV1.PricingService>, as: CallAs): void {
  const tag = "Pricats";
  const badRequest = { description: "invalid input", schema: generalResponseSchema };
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
