import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { WHOLE_NUMBER_TEXT, catalogueV1 } from "@analytics/contracts";
import { jsonArrayStream } from "../http/json-stream";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route, type RouteContext } from "../pipeline/route";
import { generalResponseSchema } from "../http/schemas";
import { dataVersionOf, type CallAs } from "../clients";
import { namedAnswer } from "./catalogue-schemas";

/**
 * GET /v2/api/skus: the compatibility route the published client's GetSkusMap reads (page by
 * page until an empty page): the account's products as its SKU struct. Its struct holds some
 * values as integers the contract keeps as decimals or text: those are answered as it can
 * decode them (CONTRACT.md, "Compatibility with the published client").
 */
const integerOf = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? Math.round(v) : null);
const textOf = (v: unknown) => (typeof v === "string" ? v : null);

// The published client's SKU struct, its own wire type (not the Product message: other names,
// integers where the message keeps text or decimals), so written here field by field.
// eslint-disable-next-line local/no-handwritten-proto-schema -- the client's struct, see above
export const skuSchema = z
  .object({
    id: z.number().int().describe("the product's integer id"),
    uuid: z.string().describe("the product's internal id"),
    productName: z.string().nullable(),
    productGroupID: z.string().nullable(),
    brand: z.object(namedAnswer(catalogueV1.BrandSchema, { uuid: false })).nullable(),
    category: z.object(namedAnswer(catalogueV1.CategorySchema, { uuid: false })).nullable(),
    productType: z.number().int().nullable().describe("the product type when it is a whole number, else null"),
    info: z.unknown().describe("externalAttributes.info"),
    sku: z.string().nullable(),
    vendorSKU: z.string().nullable(),
    ean: z.string().nullable(),
    key: z.string(),
    skuSynonyms: z
      .array(z.object({ FromKey: z.string(), FromAccountID: z.string(), skuId: z.number().int(), ToAccountID: z.string() }))
      .describe("the product's old keys (FromKey), as the client's SkuSynonym"),
    variantName: z.string().nullable(),
    size: z.string().nullable(),
    color: z.string().nullable(),
    collection: z.string().nullable(),
    season: z.string().nullable(),
    year: z.string().nullable(),
    ageGroup: z.string().nullable(),
    gender: z.string().nullable(),
    status: z.number().int(),
    variantGroupID: z.string().nullable(),
    externalID: z.string().nullable().describe("externalAttributes.variantExternalID"),
    costPrice: z.number().int().nullable().describe("externalAttributes.costPrice, rounded: the client's struct holds an integer"),
    costPriceCurrency: z.string().nullable(),
    price: z.number().int().nullable().describe("externalAttributes.price, rounded: the client's struct holds an integer"),
    priceCurrency: z.string().nullable(),
    moq: z.number().int().nullable(),
    leadTime: z.number().int().nullable().describe("externalAttributes.leadTime, rounded"),
    supplier: z.string().nullable(),
  })
  .meta({ id: "CompatibilitySku" });

export function skuRoutes(ctx: RouteContext, catalogue: Client<typeof catalogueV1.CatalogueService>, as: CallAs): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/skus",
    operationId: "listSkus",
    summary: "The account's SKUs as the published client's SKU struct (compatibility route of its GetSkusMap); use GET /products",
    tag: "Products",
    deprecated: true,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { catalogue }),
    query: pageQuery(10_000),
    responses: {
      200: { description: "SKUs in creation order; an empty page ends the client's reading", schema: z.array(skuSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const options = as(caller);
      // Brand synonyms: the account's brands read once per request, a page of 1000 at a time,
      // rather than one call per brand of the page.
      let brands: Promise<Map<string, string[]>> | undefined;
      const allBrands = async () => {
        const synonyms = new Map<string, string[]>();
        for (let page = 1; ; page++) {
          const res = await catalogue.listBrands({ page: { page, pageSize: 1000 } }, options);
          for (const b of res.brands) synonyms.set(b.id, b.synonyms);
          if (res.brands.length < 1000) return synonyms;
        }
      };
      const synonymsOf = async (id: string) => (await (brands ??= allBrands())).get(id) ?? [];
      const list = { page: { page: query.page, pageSize: query.pageSize }, skuIds: [], skus: [], seasons: [], productGroupIds: [], variantGroupIds: [] };
      const page = await jsonArrayStream(
        (signal) => catalogue.streamProducts({ list }, { ...options, timeoutMs: undefined, signal }),
        (chunk) =>
          Promise.all(
            chunk.products.map(async (p) => {
              const attributes = (p.externalAttributes ?? {}) as Record<string, unknown>;
              const seq = Number(p.seq);
              return {
                id: seq,
                uuid: p.id,
                productName: p.productName ?? null,
                productGroupID: p.productGroupId ?? null,
                brand: p.brandId && p.brandSeq !== undefined ? { id: Number(p.brandSeq), name: p.brandName ?? "", synonyms: await synonymsOf(p.brandId) } : null,
                category: p.categorySeq !== undefined ? { id: Number(p.categorySeq), name: p.categoryName ?? "" } : null,
                productType: p.productType !== undefined && WHOLE_NUMBER_TEXT.test(p.productType) ? Number(p.productType) : null,
                info: attributes.info ?? null,
                sku: p.sku ?? null,
                vendorSKU: p.vendorSku ?? null,
                ean: p.ean ?? null,
                key: p.key,
                skuSynonyms: p.skuSynonyms.map((old) => ({ FromKey: old, FromAccountID: caller.accountId, skuId: seq, ToAccountID: caller.accountId })),
                variantName: p.variantName ?? null,
                size: p.size ?? null,
                color: p.color ?? null,
                collection: p.collection ?? null,
                season: p.season ?? null,
                year: p.year === undefined ? null : String(p.year),
                ageGroup: p.ageGroup ?? null,
                gender: p.gender ?? null,
                status: p.status ?? 2,
                variantGroupID: p.variantGroupId ?? null,
                externalID: textOf(attributes.variantExternalID),
                costPrice: integerOf(attributes.costPrice),
                costPriceCurrency: textOf(attributes.costPriceCurrency),
                price: integerOf(attributes.price),
                priceCurrency: textOf(attributes.priceCurrency),
                moq: p.moq ?? null,
                leadTime: integerOf(attributes.leadTime),
                supplier: p.supplier ?? null,
              };
            }),
          ),
        { idleTimeoutMs: options.timeoutMs, whole: true },
      );
      setPageHeaders(request, reply, query, Number(page.first?.totalCount ?? 0));
      reply.type("application/json; charset=utf-8");
      return page.body;
    },
  });
}
