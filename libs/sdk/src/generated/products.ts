// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListSkusQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 10000 */
  pageSize?: number;
}

export interface ListProductsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 10000 */
  pageSize?: number;
  /** a key or an old key */
  key?: string;
  /** product ids (integer ids or UUIDs); repeatable or comma-separated */
  sku_id?: string | Array<string>;
  skus?: string | Array<string>;
  seasons?: string | Array<string>;
  productgroupids?: string | Array<string>;
  variantgroupids?: string | Array<string>;
}

export type UpsertProductBody = {
  /** the business key, unique per account */
  key: string;
  /** read-only: the internal id; also accepted wherever a product id is */
  id?: unknown;
  sku?: string | null;
  vendorSKU?: string | null;
  ean?: string | null;
  productName?: string | null;
  variantName?: string | null;
  /** 1 Inactive, 2 Active (default), 3 Outgoing, 4 Draft, 5 Placeholder, 6 Exclude, 7 Sample */
  status?: number | null;
  season?: string | null;
  /** a number, or the published client's text ("2026"); answered as text */
  year?: (number | string) | null;
  department?: string | null;
  gender?: string | null;
  ageGroup?: string | null;
  collection?: string | null;
  color?: string | null;
  size?: string | null;
  /** creates the brand when needed, matched case-insensitively */
  brandName?: string | null;
  /** creates the category when needed, matched case-insensitively */
  categoryName?: string | null;
  subCategory?: string | null;
  /** text, or the published client's number (1 Standard, 2 Commission, 3 Local); answered as a number when it is a whole number */
  productType?: (string | number) | null;
  merchandiseType?: string | null;
  supplier?: string | null;
  moq?: number | null;
  pimCustom1?: string | null;
  pimCustom2?: string | null;
  pimCustom3?: string | null;
  pimCustom4?: string | null;
  pimCustom5?: string | null;
  pimCustom6?: string | null;
  pimCustom7?: string | null;
  pimCustom8?: string | null;
  pimCustom9?: string | null;
  pimCustom10?: string | null;
  productGroupId?: string | null;
  variantGroupId?: string | null;
  imageUrl?: string | null;
  startDate?: string | null;
  endDate?: string | null;
  productionLeadTimeDays?: number | null;
  shippingLeadTimeDays?: number | null;
  /** default true */
  activePlanning?: boolean | null;
  costCalculationPrice?: number | null;
  costCalculationValues?: (Array<{
    key: string;
    /** Default: 0. */
    sort?: number;
    /** 1 monetary, 2 percent */
    type: 1 | 2;
    /** an ISO 4217 code, or "" */
    currency?: ("" | string) | null;
    monetaryValue?: number | null;
    percentageValue?: number | null;
    externalReference?: string | null;
    /** the published client's exchange rate of currency; kept and returned */
    fxRate?: number | null;
  }>) | null;
  externalAttributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only */
  brandId?: unknown;
  /** read-only */
  categoryId?: unknown;
  /** read-only: the product's old keys */
  skuSynonyms?: unknown;
  /** read-only: prices from all price lists */
  prices?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  uuid?: unknown;
  /** the published client's spelling of productGroupId; use productGroupId */
  productGroupID?: string | null;
  /** the published client's spelling of variantGroupId; use variantGroupId */
  variantGroupID?: string | null;
  /** sent by the published client; kept in externalAttributes */
  variantExternalID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  productID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  variantID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  info?: unknown;
  /** sent by the published client; kept in externalAttributes */
  costPrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  costPriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  supplierPrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  supplierPriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  price?: unknown;
  /** sent by the published client; kept in externalAttributes */
  priceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  priceIncludingVat?: unknown;
  /** sent by the published client; kept in externalAttributes */
  wholesalePrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  wholesalePriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  vatValue?: unknown;
  /** sent by the published client; kept in externalAttributes */
  leadTime?: unknown;
  /** sent by the published client; kept in externalAttributes */
  customFields?: unknown;
  /** sent by the published client; kept in externalAttributes */
  additionalSuppliers?: unknown;
  /** sent by the published client; kept in externalAttributes */
  unitVolume?: unknown;
  /** sent by the published client; kept in externalAttributes */
  packSize?: unknown;
  /** sent by the published client; kept in externalAttributes */
  weight?: unknown;
};

export type UpdateProductsBody = Array<{
  /** the business key, unique per account */
  key?: string;
  id?: number | string;
  sku?: string | null;
  vendorSKU?: string | null;
  ean?: string | null;
  productName?: string | null;
  variantName?: string | null;
  /** 1 Inactive, 2 Active (default), 3 Outgoing, 4 Draft, 5 Placeholder, 6 Exclude, 7 Sample */
  status?: number | null;
  season?: string | null;
  /** a number, or the published client's text ("2026"); answered as text */
  year?: (number | string) | null;
  department?: string | null;
  gender?: string | null;
  ageGroup?: string | null;
  collection?: string | null;
  color?: string | null;
  size?: string | null;
  /** creates the brand when needed, matched case-insensitively */
  brandName?: string | null;
  /** creates the category when needed, matched case-insensitively */
  categoryName?: string | null;
  subCategory?: string | null;
  /** text, or the published client's number (1 Standard, 2 Commission, 3 Local); answered as a number when it is a whole number */
  productType?: (string | number) | null;
  merchandiseType?: string | null;
  supplier?: string | null;
  moq?: number | null;
  pimCustom1?: string | null;
  pimCustom2?: string | null;
  pimCustom3?: string | null;
  pimCustom4?: string | null;
  pimCustom5?: string | null;
  pimCustom6?: string | null;
  pimCustom7?: string | null;
  pimCustom8?: string | null;
  pimCustom9?: string | null;
  pimCustom10?: string | null;
  productGroupId?: string | null;
  variantGroupId?: string | null;
  imageUrl?: string | null;
  startDate?: string | null;
  endDate?: string | null;
  productionLeadTimeDays?: number | null;
  shippingLeadTimeDays?: number | null;
  /** default true */
  activePlanning?: boolean | null;
  costCalculationPrice?: number | null;
  costCalculationValues?: (Array<{
    key: string;
    /** Default: 0. */
    sort?: number;
    /** 1 monetary, 2 percent */
    type: 1 | 2;
    /** an ISO 4217 code, or "" */
    currency?: ("" | string) | null;
    monetaryValue?: number | null;
    percentageValue?: number | null;
    externalReference?: string | null;
    /** the published client's exchange rate of currency; kept and returned */
    fxRate?: number | null;
  }>) | null;
  externalAttributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only */
  brandId?: unknown;
  /** read-only */
  categoryId?: unknown;
  /** read-only: the product's old keys */
  skuSynonyms?: unknown;
  /** read-only: prices from all price lists */
  prices?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  uuid?: unknown;
  /** the published client's spelling of productGroupId; use productGroupId */
  productGroupID?: string | null;
  /** the published client's spelling of variantGroupId; use variantGroupId */
  variantGroupID?: string | null;
  /** sent by the published client; kept in externalAttributes */
  variantExternalID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  productID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  variantID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  info?: unknown;
  /** sent by the published client; kept in externalAttributes */
  costPrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  costPriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  supplierPrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  supplierPriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  price?: unknown;
  /** sent by the published client; kept in externalAttributes */
  priceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  priceIncludingVat?: unknown;
  /** sent by the published client; kept in externalAttributes */
  wholesalePrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  wholesalePriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  vatValue?: unknown;
  /** sent by the published client; kept in externalAttributes */
  leadTime?: unknown;
  /** sent by the published client; kept in externalAttributes */
  customFields?: unknown;
  /** sent by the published client; kept in externalAttributes */
  additionalSuppliers?: unknown;
  /** sent by the published client; kept in externalAttributes */
  unitVolume?: unknown;
  /** sent by the published client; kept in externalAttributes */
  packSize?: unknown;
  /** sent by the published client; kept in externalAttributes */
  weight?: unknown;
}>;

export type UpsertProductsBatchBody = Array<{
  /** the business key, unique per account */
  key: string;
  /** read-only: the internal id; also accepted wherever a product id is */
  id?: unknown;
  sku?: string | null;
  vendorSKU?: string | null;
  ean?: string | null;
  productName?: string | null;
  variantName?: string | null;
  /** 1 Inactive, 2 Active (default), 3 Outgoing, 4 Draft, 5 Placeholder, 6 Exclude, 7 Sample */
  status?: number | null;
  season?: string | null;
  /** a number, or the published client's text ("2026"); answered as text */
  year?: (number | string) | null;
  department?: string | null;
  gender?: string | null;
  ageGroup?: string | null;
  collection?: string | null;
  color?: string | null;
  size?: string | null;
  /** creates the brand when needed, matched case-insensitively */
  brandName?: string | null;
  /** creates the category when needed, matched case-insensitively */
  categoryName?: string | null;
  subCategory?: string | null;
  /** text, or the published client's number (1 Standard, 2 Commission, 3 Local); answered as a number when it is a whole number */
  productType?: (string | number) | null;
  merchandiseType?: string | null;
  supplier?: string | null;
  moq?: number | null;
  pimCustom1?: string | null;
  pimCustom2?: string | null;
  pimCustom3?: string | null;
  pimCustom4?: string | null;
  pimCustom5?: string | null;
  pimCustom6?: string | null;
  pimCustom7?: string | null;
  pimCustom8?: string | null;
  pimCustom9?: string | null;
  pimCustom10?: string | null;
  productGroupId?: string | null;
  variantGroupId?: string | null;
  imageUrl?: string | null;
  startDate?: string | null;
  endDate?: string | null;
  productionLeadTimeDays?: number | null;
  shippingLeadTimeDays?: number | null;
  /** default true */
  activePlanning?: boolean | null;
  costCalculationPrice?: number | null;
  costCalculationValues?: (Array<{
    key: string;
    /** Default: 0. */
    sort?: number;
    /** 1 monetary, 2 percent */
    type: 1 | 2;
    /** an ISO 4217 code, or "" */
    currency?: ("" | string) | null;
    monetaryValue?: number | null;
    percentageValue?: number | null;
    externalReference?: string | null;
    /** the published client's exchange rate of currency; kept and returned */
    fxRate?: number | null;
  }>) | null;
  externalAttributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only */
  brandId?: unknown;
  /** read-only */
  categoryId?: unknown;
  /** read-only: the product's old keys */
  skuSynonyms?: unknown;
  /** read-only: prices from all price lists */
  prices?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  uuid?: unknown;
  /** the published client's spelling of productGroupId; use productGroupId */
  productGroupID?: string | null;
  /** the published client's spelling of variantGroupId; use variantGroupId */
  variantGroupID?: string | null;
  /** sent by the published client; kept in externalAttributes */
  variantExternalID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  productID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  variantID?: unknown;
  /** sent by the published client; kept in externalAttributes */
  info?: unknown;
  /** sent by the published client; kept in externalAttributes */
  costPrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  costPriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  supplierPrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  supplierPriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  price?: unknown;
  /** sent by the published client; kept in externalAttributes */
  priceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  priceIncludingVat?: unknown;
  /** sent by the published client; kept in externalAttributes */
  wholesalePrice?: unknown;
  /** sent by the published client; kept in externalAttributes */
  wholesalePriceCurrency?: unknown;
  /** sent by the published client; kept in externalAttributes */
  vatValue?: unknown;
  /** sent by the published client; kept in externalAttributes */
  leadTime?: unknown;
  /** sent by the published client; kept in externalAttributes */
  customFields?: unknown;
  /** sent by the published client; kept in externalAttributes */
  additionalSuppliers?: unknown;
  /** sent by the published client; kept in externalAttributes */
  unitVolume?: unknown;
  /** sent by the published client; kept in externalAttributes */
  packSize?: unknown;
  /** sent by the published client; kept in externalAttributes */
  weight?: unknown;
}>;

export type SwitchProductKeysBody = Array<S.KeySwitchRequestInput>;

export type UploadProductImageBody = {
  /** the business key, unique per account */
  key: string;
  filename: string;
  /** base64 PNG, JPEG, WebP or GIF, at most 10 MiB decoded */
  imageData: string;
  season?: string | null;
  variantGroupId?: string | null;
};

export type UploadProductImagesBatchBody = Array<{
  /** the business key, unique per account */
  key: string;
  filename: string;
  /** base64 PNG, JPEG, WebP or GIF, at most 10 MiB decoded */
  imageData: string;
  season?: string | null;
  variantGroupId?: string | null;
}>;

/** The catalogue: products (one row per SKU), their keys and images. */
export class Products {
  constructor(private readonly client: Client) {}

  /** The account's SKUs as the published client's SKU struct (compatibility route of its GetSkusMap); use GET /products */
  listSkus(query?: ListSkusQuery, options?: RequestOptions): Paged<S.CompatibilitySku> {
    return this.client.paged<S.CompatibilitySku>({ method: "GET", path: `/v2/api/skus`, auth: "bearer" }, query, options);
  }

  /** List products (one row per SKU) with prices from all price lists */
  listProducts(query?: ListProductsQuery, options?: RequestOptions): Paged<S.Product> {
    return this.client.paged<S.Product>({ method: "GET", path: `/v2/api/products`, auth: "bearer" }, query, options);
  }

  /** Full create: creates or updates the product, its variant, brand and category. Stores exactly what is sent: a field absent or null takes its default (imageUrl: absent keeps the uploaded image, null removes it) */
  upsertProduct(body: UpsertProductBody, options?: RequestOptions): Promise<Array<S.Product>> {
    return this.client.call<Array<S.Product>>({ method: "POST", path: `/v2/api/products`, auth: "bearer" }, undefined, body, options);
  }

  /** Partial update of existing products (by id, else key): fields not sent are kept, fields sent as null are cleared */
  updateProducts(body: UpdateProductsBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "PUT", path: `/v2/api/products`, auth: "bearer" }, undefined, body, options);
  }

  /** An example Product body */
  getProductExample(options?: RequestOptions): Promise<S.Product> {
    return this.client.call<S.Product>({ method: "GET", path: `/v2/api/products/example`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Create or update up to 1000 products by key, each a full write (a field absent or null takes its default; imageUrl: absent keeps the uploaded image, null removes it); one answer per item */
  upsertProductsBatch(body: UpsertProductsBatchBody, options?: RequestOptions): Promise<Array<Array<S.GeneralResponse>>> {
    return this.client.call<Array<Array<S.GeneralResponse>>>({ method: "POST", path: `/v2/api/products/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** Replace products' keys; each old key stays a synonym that still finds the product */
  switchProductKeys(body: SwitchProductKeysBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/products/keyswitch`, auth: "bearer" }, undefined, body, options);
  }

  /** Upload one product image (base64 PNG, JPEG, WebP or GIF, at most 10 MiB) */
  uploadProductImage(body: UploadProductImageBody, options?: RequestOptions): Promise<S.ImageUploadResponse> {
    return this.client.call<S.ImageUploadResponse>({ method: "POST", path: `/v2/api/products/imageupload`, auth: "bearer" }, undefined, body, options);
  }

  /** Upload many product images */
  uploadProductImagesBatch(body: UploadProductImagesBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/products/imageupload/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** A product image (content-addressed; cacheable for a year) */
  getImage(sha256: string, options?: RequestOptions): Promise<Blob> {
    return this.client.call<Blob>({ method: "GET", path: `/v2/api/images/${encodeURIComponent(sha256)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** A product image at its capability URL (the imageUrl products answer): no token needed, usable in <img> tags and spreadsheets */
  getImageByCapability(accountId: string, sha256: string, signature: string, options?: RequestOptions): Promise<Blob> {
    return this.client.call<Blob>({ method: "GET", path: `/v2/api/images/${encodeURIComponent(accountId)}/${encodeURIComponent(sha256)}/${encodeURIComponent(signature)}`, auth: "none" }, undefined, undefined, options);
  }
}
