import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { catalogueV1, toRestJson } from "@analytics/contracts";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route, type RouteContext } from "../pipeline/route";
import { generalResponseSchema } from "../http/schemas";
import { dataVersionOf, type CallAs } from "../clients";
import { brandSchema, categorySchema } from "./catalogue-schemas";

const { BrandSchema, CategorySchema } = catalogueV1;
/** `id` the integer id, `uuid` the internal one (the published client holds ids as integers). */
const brandToRest = (b: catalogueV1.Brand) => {
  const { seq: _, ...rest } = toRestJson(BrandSchema, b);
  return { ...rest, id: Number(b.seq), uuid: b.id };
};
const categoryToRest = (c: catalogueV1.Category) => {
  const { seq: _, ...rest } = toRestJson(CategorySchema, c);
  return { ...rest, id: Number(c.seq), uuid: c.id };
};

/** What the brand and category routes register with and call. */
interface Deps {
  ctx: RouteContext;
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  as: CallAs;
}

/** /v2/api/brands, /v2/api/categories -> analytics.catalogue.v1.CatalogueService */
export function brandRoutes(ctx: RouteContext, catalogue: Client<typeof catalogueV1.CatalogueService>, as: CallAs): void {
  const deps: Deps = { ctx, catalogue, as };
  listBrands(deps);
  getBrand(deps);
  listCategories(deps);
  getCategory(deps);
}

function listBrands({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/brands",
    operationId: "listBrands",
    summary: "List brands (created by product writes)",
    tag: "Brands",
    auth: "bearer",
    dataVersion: dataVersionOf(as, { catalogue }),
    query: {
      ...pageQuery(),
      name: z.string().min(1).max(500).optional().describe("name or synonym, case-insensitive"),
      id: z.string().min(1).max(100).optional().describe("the integer id or the UUID"),
    },
    responses: {
      200: { description: "brands", schema: z.array(brandSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const res = await catalogue.listBrands({ page: { page: query.page, pageSize: query.pageSize }, name: query.name, id: query.id }, as(caller));
      setPageHeaders(request, reply, query, res.totalCount);
      return res.brands.map(brandToRest);
    },
  });
}

function getBrand({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/brands/:ID",
    operationId: "getBrand",
    summary: "One brand (as an array, as the specification declares)",
    tag: "Brands",
    auth: "bearer",
    params: { ID: z.string().min(1).max(100).describe("the integer id or the UUID") },
    responses: {
      200: { description: "the brand", schema: z.array(brandSchema) },
      404: { description: "not found", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }) => [brandToRest((await catalogue.getBrand({ id: params.ID }, as(caller))).brand!)],
  });
}

function listCategories({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/categories",
    operationId: "listCategories",
    summary: "List all categories",
    tag: "Categories",
    auth: "bearer",
    dataVersion: dataVersionOf(as, { catalogue }),
    responses: { 200: { description: "categories in creation order", schema: z.array(categorySchema) } },
    handler: async ({ caller }) => (await catalogue.listCategories({}, as(caller))).categories.map(categoryToRest),
  });
}

function getCategory({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/categories/:ID",
    operationId: "getCategory",
    summary: "One category",
    tag: "Categories",
    auth: "bearer",
    params: { ID: z.string().min(1).max(100).describe("the integer id or the UUID") },
    responses: {
      200: { description: "the category", schema: categorySchema },
      404: { description: "not found", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }) => categoryToRest((await catalogue.getCategory({ id: params.ID }, as(caller))).category!),
  });
}
