import { randomBytes } from "node:crypto";
import { z } from "zod";
import { isUuid } from "@analytics/db";
import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { catalogueV1, fromRestJson, productToRest, type pricingV1 } from "@analytics/contracts";
import { generalResponse } from "@analytics/errors";
import { BATCH_MAX, batchStatus, convertBody, converting, runBatch, serverFailure, type BatchResponse } from "../http/batch";
import { describe } from "../http/validation";
import { HttpError } from "../http/errors";
import { imageCapabilities, type ImageCapabilities } from "@analytics/auth";
import { JsonItems, jsonArrayStream } from "../http/json-stream";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { batchOf, repeatable, route, type RouteContext } from "../pipeline/route";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { dataVersionOf, type CallAs } from "../clients";
import { imageResponseSchema, imageUploadSchema, keySwitchSchema, productCreateDocumented, productCreateSchema, productUpdateDocumented, productSchema, productUpdateSchema, nullFields, writableFields } from "./catalogue-schemas";

const { ProductSchema, KeySwitchSchema, ImageUploadSchema } = catalogueV1;
const MiB = 1024 * 1024;

const toProduct = (p: catalogueV1.Product) => productToRest(p);
const batchResult = (r?: catalogueV1.BatchResult): BatchResponse => ({
  message: r?.message ?? "",
  reference: r?.reference ?? "",
  referenceField: r?.referenceField ?? "",
  statusCode: r?.statusCode ?? 500,
});

/** A product item as the catalogue takes it: the proto Product and the fields sent as null. */
export const productWrite = (keepId: boolean) => (p: Record<string, unknown>) => ({
  product: fromRestJson(ProductSchema, writableFields(p, keepId)),
  cleared: { fields: nullFields(p) },
});

/** A product write's failure as the single-item answer (POST /products, POST /products/imageupload). */
function failure(result: catalogueV1.ProductWriteResult | catalogueV1.ImageUploadResult): HttpError {
  const r = batchResult(result.result);
  const details = result.violations.map((v) => ({ path: v.path, message: v.message }));
  return new HttpError(r.statusCode, details.length ? `${r.message}: ${describe(details)}` : r.message, details);
}

export const productExample = create(ProductSchema, {
  key: "SKU-1001-BLK-M",
  sku: "1001-BLK-M",
  ean: "7312345678901",
  productName: "Merino crew neck",
  variantName: "Black",
  status: 2,
  season: "AW26",
  brandName: "Acme",
  categoryName: "Knitwear",
  color: "Black",
  size: "M",
  productGroupId: "1001",
  variantGroupId: "1001-BLK",
  activePlanning: true,
  productionLeadTimeDays: 60,
  shippingLeadTimeDays: 14,
});

const exampleWrite = toProduct(productExample) as { key: string };


/**
 * A StreamProductsJson chunk as comma-separated answer items, written into one buffer: each
 * product's JSON parts (cut out by their end offsets) joined with the fields the gateway adds,
 * `added[i]` (`"imageUrl":...`, `"prices":...`), each in its place between two parts. No buffer
 * or object per product.
 */
export function productItems(json: Uint8Array, ends: number[], added: string[][]): Buffer {
  const source = Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  const per = (added[0]?.length ?? 0) + 1;
  const startOf = (k: number) => (k ? ends[k - 1] : 0);
  // A malformed chunk is a failed answer, never broken JSON.
  const wellFormed =
    ends.length === added.length * per &&
    (!ends.length || ends[ends.length - 1] === source.length) &&
    ends.every((end, k) => end - startOf(k) >= 2 && source[startOf(k)] === 0x7b && source[end - 1] === 0x7d);
  if (!wellFormed || added.some((a) => a.length !== per - 1)) throw new Error("the catalogue's chunk does not match its offsets");
  let size = source.length + added.length * (per + 1);
  for (const fields of added) for (const text of fields) size += Buffer.byteLength(text);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < added.length; i++) {
    if (i) out[at++] = 0x2c; // ,
    out[at++] = 0x7b; // {
    let empty = true;
    for (let k = 0; k < per; k++) {
      const part = i * per + k;
      // The part's fields without its braces; `{}` has none.
      if (ends[part] - startOf(part) > 2) {
        if (!empty) out[at++] = 0x2c;
        at += source.copy(out, at, startOf(part) + 1, ends[part] - 1);
        empty = false;
      }
      if (k < per - 1) {
        if (!empty) out[at++] = 0x2c;
        at += out.write(added[i][k], at);
        empty = false;
      }
    }
    out[at++] = 0x7d; // }
  }
  return out.subarray(0, at);
}

/** What the product and image routes register with and call. */
interface Deps {
  ctx: RouteContext;
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  pricing: Client<typeof pricingV1.PricingService>;
  as: CallAs;
  images: ImageCapabilities;
}

const tag = "Products";

/** The product with its stored image's capability URL. */
const withImageUrl = (images: ImageCapabilities, accountId: string, p: Record<string, unknown>) =>
  typeof p.imageUrl === "string" && p.imageUrl ? { ...p, imageUrl: images.url(accountId, p.imageUrl) } : p;

/** /v2/api/products and /v2/api/images -> analytics.catalogue.v1.CatalogueService */
export function productRoutes(
  ctx: RouteContext,
  catalogue: Client<typeof catalogueV1.CatalogueService>,
  pricing: Client<typeof pricingV1.PricingService>,
  as: CallAs,
  images: ImageCapabilities = imageCapabilities(randomBytes(32).toString("hex")),
): void {
  const deps: Deps = { ctx, catalogue, pricing, as, images };
  listProducts(deps);
  getProductExample(deps);
  upsertProduct(deps);
  upsertProductsBatch(deps);
  updateProducts(deps);
  switchProductKeys(deps);
  uploadProductImage(deps);
  uploadProductImagesBatch(deps);
  getImage(deps);
  getImageByCapability(deps);
}

function listProducts({ ctx, catalogue, pricing, as, images }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/products",
    operationId: "listProducts",
    summary: "List products (one row per SKU) with prices from all price lists",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { catalogue, pricing }),
    query: {
      ...pageQuery(10_000),
      key: z.string().min(1).max(500).optional().describe("a key or an old key"),
      sku_id: repeatable().describe("product ids (integer ids or UUIDs); repeatable or comma-separated"),
      skus: repeatable(),
      seasons: repeatable(),
      productgroupids: repeatable(),
      variantgroupids: repeatable(),
    },
    responses: {
      200: { description: "products in creation order", schema: z.array(productSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const list = {
        page: { page: query.page, pageSize: query.pageSize },
        key: query.key,
        skuIds: query.sku_id ?? [],
        skus: query.skus ?? [],
        seasons: query.seasons ?? [],
        productGroupIds: query.productgroupids ?? [],
        variantGroupIds: query.variantgroupids ?? [],
      };
      // Streamed: the published client reads 10,000 products (about 10 MB) a page. The catalogue
      // sends each chunk's products as REST JSON bytes, pricing each product's prices as JSON text
      // (one call per chunk); both go into the answer as they are, with the image's capability URL
      // (productItems).
      // The answer's signal ends the catalogue's stream, which has a deadline per chunk, not one
      // for the whole page (a slow client may take longer than that to read 10 MB). Each pricing
      // call is short and has its own deadline (linking the signal into each cost a
      // 10,000-product page about 20 ms).
      const options = as(caller);
      const page = await jsonArrayStream((signal) => catalogue.streamProductsJson({ list }, { ...options, timeoutMs: undefined, signal }), async ({ productsJson, ids, ends, imageUrls }) => {
        const priced = ids.length ? (await pricing.productPricesJson({ productIds: ids }, as(caller))).products : [];
        const pricesOf = new Map(priced.map((p) => [p.productId, p.pricesJson]));
        const added = ids.map((id, i) => {
          const stored = imageUrls[i];
          const imageUrl = stored === undefined ? null : images.url(caller.accountId, stored);
          return [`"imageUrl":${JSON.stringify(imageUrl)}`, `"prices":${pricesOf.get(id) ?? "[]"}`];
        });
        return ids.length ? [new JsonItems(productItems(productsJson, ends, added))] : [];
      }, { idleTimeoutMs: options.timeoutMs, whole: true });
      setPageHeaders(request, reply, query, page.first?.totalCount ?? 0);
      reply.type("application/json; charset=utf-8");
      return page.body;
    },
  });
}

function getProductExample({ ctx }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/products/example",
    operationId: "getProductExample",
    summary: "An example Product body",
    tag,
    auth: "bearer",
    responses: { 200: { description: "example", schema: productSchema } },
    handler: async () => ({ ...toProduct(productExample), id: 1, uuid: "00000000-0000-4000-8000-000000000000", createdAt: new Date(0).toISOString(), updatedAt: new Date(0).toISOString() }),
  });
}

function upsertProduct({ ctx, catalogue, as, images }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/products",
    operationId: "upsertProduct",
    summary: "Full create: creates or updates the product, its variant, brand and category. Stores exactly what is sent: a field absent or null takes its default (imageUrl: absent keeps the uploaded image, null removes it)",
    tag,
    auth: "bearer",
    body: productCreateSchema,
    bodyExample: exampleWrite,
    responses: {
      201: { description: "the product as stored", schema: z.array(productSchema) },
      400: { description: "invalid product", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const product = convertBody(() => fromRestJson(ProductSchema, writableFields(body, false)));
      const res = await catalogue.upsertProducts({ products: [product], cleared: [{ fields: nullFields(body) }] }, as(caller));
      const [result] = res.results;
      if (!result.product) throw failure(result);
      reply.status(201);
      return [withImageUrl(images, caller.accountId, toProduct(result.product) as Record<string, unknown>)];
    },
  });
}

function upsertProductsBatch({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/products/batch",
    operationId: "upsertProductsBatch",
    summary: `Create or update up to ${BATCH_MAX} products by key, each a full write (a field absent or null takes its default; imageUrl: absent keeps the uploaded image, null removes it); one answer per item`,
    tag,
    auth: "bearer",
    body: batchOf(productCreateDocumented, BATCH_MAX),
    bodyExample: [exampleWrite],
    responses: {
      ...batchFailureResponses,
      201: {
        description: "per item, in request order, an array with its GeneralResponse (statusCode 201 created, 200 updated, 400 invalid)",
        schema: z.array(z.array(generalResponseSchema)),
      },
      400: { description: "the body is not an array of 1 to 1000 items", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, converting(productCreateSchema, productWrite(false)), "key", async (writes) => {
        const res = await catalogue.upsertProducts({ products: writes.map((w) => w.product), cleared: writes.map((w) => w.cleared), resultsOnly: true }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      // The specification's default-error shape: an array of BatchResponse when the service failed.
      const failed = serverFailure(results);
      if (failed) return reply.status(failed).send(results);
      reply.status(201);
      return results.map((r) => [generalResponse(r.statusCode, `${r.referenceField} ${r.reference}: ${r.message}`)]);
    },
  });
}

function updateProducts({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/products",
    operationId: "updateProducts",
    summary: "Partial update of existing products (by id, else key): fields not sent are kept, fields sent as null are cleared",
    tag,
    auth: "bearer",
    body: batchOf(productUpdateDocumented, BATCH_MAX),
    bodyExample: [{ key: exampleWrite.key, productName: "Merino crew neck, relaxed fit", season: null }],
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per item", schema: z.array(batchResponseSchema) },
      400: { description: "at least one item failed validation (the valid ones were applied)", schema: z.array(batchResponseSchema) },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, converting(productUpdateSchema, productWrite(true)), "key", async (writes) => {
        const res = await catalogue.updateProducts({ products: writes.map((w) => w.product), cleared: writes.map((w) => w.cleared), resultsOnly: true }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      reply.status(batchStatus(results, 200));
      return results;
    },
  });
}

function switchProductKeys({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/products/keyswitch",
    operationId: "switchProductKeys",
    summary: "Replace products' keys; each old key stays a synonym that still finds the product",
    tag,
    auth: "bearer",
    body: batchOf(keySwitchSchema, BATCH_MAX),
    bodyExample: [{ oldKey: exampleWrite.key, key: "SKU-2001-BLK-M", sku: "2001-BLK-M" }],
    responses: { ...batchFailureResponses, 200: { description: "one BatchResponse per item (reference: oldKey)", schema: z.array(batchResponseSchema) } },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, converting(keySwitchSchema, (k) => fromRestJson(KeySwitchSchema, k)), "oldKey", async (switches) => {
        const res = await catalogue.switchKeys({ switches }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}

function uploadProductImage({ ctx, catalogue, as, images }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/products/imageupload",
    operationId: "uploadProductImage",
    summary: "Upload one product image (base64 PNG, JPEG, WebP or GIF, at most 10 MiB)",
    tag,
    auth: "bearer",
    body: imageUploadSchema,
    bodyLimit: 15 * MiB,
    responses: {
      200: { description: "where the image is served", schema: imageResponseSchema },
      400: { description: "not an image, or too large", schema: generalResponseSchema },
      404: { description: "no product with that key", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }) => {
      const res = await catalogue.uploadImages({ images: [convertBody(() => fromRestJson(ImageUploadSchema, body))] }, as(caller));
      const [result] = res.results;
      if (!result.image) throw failure(result);
      return { key: result.image.key, imageUrl: images.url(caller.accountId, result.image.imageUrl) };
    },
  });
}

function uploadProductImagesBatch({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/products/imageupload/batch",
    operationId: "uploadProductImagesBatch",
    summary: "Upload many product images",
    tag,
    auth: "bearer",
    body: batchOf(imageUploadSchema, BATCH_MAX),
    bodyLimit: 50 * MiB,
    responses: { ...batchFailureResponses, 200: { description: "one BatchResponse per item", schema: z.array(batchResponseSchema) } },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, converting(imageUploadSchema, (i) => fromRestJson(ImageUploadSchema, i)), "key", async (images) => {
        const res = await catalogue.uploadImages({ images }, as(caller));
        return res.results.map((r) => batchResult(r.result));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}

function getImage({ ctx, catalogue, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/images/:sha256",
    operationId: "getImage",
    summary: "A product image (content-addressed; cacheable for a year)",
    tag,
    auth: "bearer",
    params: { sha256: z.string().length(64).regex(/^[0-9a-f]{64}$/, "a SHA-256 in lower-case hex") },
    responses: {
      200: { description: "the image bytes", contentType: "image/*" },
      304: { description: "not modified (If-None-Match)" },
      404: { description: "no such image", schema: generalResponseSchema },
    },
    handler: async ({ params, caller }, request, reply) => {
      const etag = `"${params.sha256}"`;
      // Looked up first: an unknown or other account's image is a 404, also with If-None-Match.
      const image = await catalogue.getImage({ sha256: params.sha256 }, as(caller));
      reply.header("ETag", etag).header("Cache-Control", "private, max-age=31536000, immutable");
      if (request.headers["if-none-match"] === etag) return reply.status(304).send();
      return reply.type(image.contentType).send(Buffer.from(image.data));
    },
  });
}

function getImageByCapability({ ctx, catalogue, as, images }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/images/:accountId/:sha256/:signature",
    operationId: "getImageByCapability",
    summary: "A product image at its capability URL (the imageUrl products answer): no token needed, usable in <img> tags and spreadsheets",
    tag,
    auth: "none",
    params: {
      accountId: z.string().max(100),
      sha256: z.string().length(64).regex(/^[0-9a-f]{64}$/, "a SHA-256 in lower-case hex"),
      signature: z.string().max(100),
    },
    responses: {
      200: { description: "the image bytes", contentType: "image/*" },
      304: { description: "not modified (If-None-Match)" },
      404: { description: "no such image for that account, or a wrong signature", schema: generalResponseSchema },
    },
    handler: async ({ params }, request, reply) => {
      if (!isUuid(params.accountId) || !images.verify(params.accountId, params.sha256, params.signature)) throw new HttpError(404, "no such image");
      const image = await catalogue.getImage({ sha256: params.sha256 }, as({ accountId: params.accountId, apiKeyId: "", requestId: request.id }));
      const etag = `"${params.sha256}"`;
      reply.header("ETag", etag).header("Cache-Control", "public, max-age=31536000, immutable");
      if (request.headers["if-none-match"] === etag) return reply.status(304).send();
      return reply.type(image.contentType).send(Buffer.from(image.data));
    },
  });
}
