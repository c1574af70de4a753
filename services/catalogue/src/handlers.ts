import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { catalogueV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import { accountVersionHandler, answerDataVersion, batchResult, pageOf, type ServiceContext } from "@analytics/rpc";
import * as brands from "./brands";
import * as images from "./images";
import { switchKeys } from "./key-switch";
import * as mappingTables from "./mapping-tables";
import * as products from "./products";
import type { Page, ProductFilter } from "./repository";
import { brandFromRow, categoryFromRow, mappingTableFromRow, productFromRow } from "./resources";

const { CatalogueService } = catalogueV1;

/** The contract lets GET /products read 10000 a page (its published client does); it is streamed. */
const MAX_STREAMED_PAGE_SIZE = 10_000;

const productFilter = (req: catalogueV1.ListProductsRequest) => ({
  key: req.key,
  ids: req.skuIds,
  skus: req.skus,
  seasons: req.seasons,
  productGroupIds: req.productGroupIds,
  variantGroupIds: req.variantGroupIds,
});

/** The filter and page of a streamed page (up to MAX_STREAMED_PAGE_SIZE products). */
function streamedPage(req: { list?: catalogueV1.ListProductsRequest }): [ProductFilter, Page] {
  const list = req.list ?? create(catalogueV1.ListProductsRequestSchema);
  return [productFilter(list), pageOf(list.page, MAX_STREAMED_PAGE_SIZE)];
}

/** Thin Connect handlers: proto in, plain function, proto out. */
export function catalogueRoutes(ctx: ServiceContext) {
  const { db } = ctx;
  return (router: ConnectRouter) =>
    router.service(CatalogueService, {
      getAccountVersion: accountVersionHandler(db),
      async listProducts(req, c) {
        const { rows, total } = await products.listProducts(db, callerOf(c).accountId, productFilter(req), pageOf(req.page));
        return { products: rows.map(productFromRow), totalCount: total };
      },
      async *streamProducts(req, c) {
        for await (const { rows, totalCount } of products.streamProducts(db, callerOf(c).accountId, ...streamedPage(req), (version) => answerDataVersion(c, version)))
          yield { products: rows.map(productFromRow), totalCount };
      },
      async *streamProductsJson(req, c) {
        yield* products.streamProductsJson(db, callerOf(c).accountId, ...streamedPage(req), (version) => answerDataVersion(c, version));
      },
      async upsertProducts(req, c) {
        return { results: (await products.upsertProducts(ctx, callerOf(c).accountId, req.products, req.cleared.map((c) => c.fields), !req.resultsOnly)).map((o) => batchResult(o, req.resultsOnly ? undefined : "product")) };
      },
      async updateProducts(req, c) {
        return { results: (await products.updateProducts(ctx, callerOf(c).accountId, req.products, req.cleared.map((c) => c.fields))).map((o) => batchResult(o, req.resultsOnly ? undefined : "product")) };
      },
      async switchKeys(req, c) {
        return { results: (await switchKeys(ctx, callerOf(c).accountId, req.switches)).map((o) => batchResult(o, "product")) };
      },
      async uploadImages(req, c) {
        const outcomes = await images.uploadImages(ctx, callerOf(c).accountId, req.images);
        return { results: outcomes.map((o) => batchResult(o, "image")) };
      },
      async getImage(req, c) {
        const image = await images.getImage(db, callerOf(c).accountId, req.sha256);
        return { data: image.bytes, contentType: image.content_type };
      },
      async listBrands(req, c) {
        const { rows, total } = await brands.listBrands(db, callerOf(c).accountId, { name: req.name, id: req.id }, pageOf(req.page));
        return { brands: rows.map(brandFromRow), totalCount: total };
      },
      async getBrand(req, c) {
        return { brand: brandFromRow(await brands.getBrand(db, callerOf(c).accountId, req.id)) };
      },
      async listCategories(_req, c) {
        return { categories: (await brands.listCategories(db, callerOf(c).accountId)).map(categoryFromRow) };
      },
      async getCategory(req, c) {
        return { category: categoryFromRow(await brands.getCategory(db, callerOf(c).accountId, req.id)) };
      },
      async listMappingTables(req, c) {
        const rows = await mappingTables.listMappingTables(db, callerOf(c).accountId, req.mappingType);
        return { mappingTables: rows.map(mappingTableFromRow) };
      },
      async getMappingTable(req, c) {
        const row = await mappingTables.getMappingTable(db, callerOf(c).accountId, req.mappingType, req.mappingField);
        return { mappingTable: mappingTableFromRow(row), revision: row.revision };
      },
      async mergeMappingTable(req, c) {
        const { accountId } = callerOf(c);
        const row = await mappingTables.mergeMappingTable(ctx, accountId, req.mappingType, req.mappingField, req.mappingValues, req.ifRevision);
        return { mappingTable: mappingTableFromRow(row) };
      },
      async upsertMappingTable(req, c) {
        const { accountId } = callerOf(c);
        const row = await mappingTables.upsertMappingTable(ctx, accountId, req.mappingType, req.mappingField, req.mappingValues);
        return { mappingTable: mappingTableFromRow(row), created: row.created };
      },
      async deleteMappingTable(req, c) {
        await mappingTables.deleteMappingTable(ctx, callerOf(c).accountId, req.mappingType, req.mappingField, req.ifRevision);
        return {};
      },
      async resolveSkus(req, c) {
        const matches = await products.resolveSkus(db, callerOf(c).accountId, req.references);
        return {
          skus: matches.map((m) => (m ? { found: true, id: m.id, seq: BigInt(m.seq), key: m.key, sku: m.sku ?? undefined, ean: m.ean ?? undefined } : { found: false })),
        };
      },
    });
}
