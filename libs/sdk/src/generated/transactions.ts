// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListTransactionsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
}

export type CreateTransactionsBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  externalTransactionID: string;
  externalRowID?: string | null;
  externalParentID?: string | null;
  externalCustomerID?: string | null;
  externalStoreID?: string | null;
  /** text; the published client's JSON object is kept as its JSON text (and answered as that text) */
  externalInfo?: (string | ({
    [key: string]: unknown;
  })) | null;
  customerName?: string | null;
  /** 1 D2C, 2 B2B */
  channel?: number | null;
  market?: string | null;
  /** 1 sale, 2 return */
  type?: number | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode?: string | null;
  createdDate?: string | null;
  completedDate?: string | null;
  cancelledDate?: string | null;
  deliveryDate?: string | null;
  items?: (Array<{
    externalItemID: string;
    key?: string | null;
    sku?: string | null;
    ean?: string | null;
    productName?: string | null;
    /** Default: 0. */
    quantity?: number | null;
    vatValue?: number | null;
    moneyItemTotalNet?: number | null;
    moneyItemTotalVat?: number | null;
    moneyDiscountIncVat?: number | null;
    department?: string | null;
    deliveryDate?: string | null;
    /** 1 sale, 2 return */
    type?: number | null;
    customFields?: ({
      [key: string]: unknown;
    }) | null;
    /** read-only: added by POST .../shipments */
    shipments?: unknown;
    /** the published client's additional fields, kept as sent */
    attributes?: ({
      [key: string]: unknown;
    }) | null;
    /** sent by the published client; kept in attributes */
    variantName?: unknown;
    /** sent by the published client; kept in attributes */
    vendorSKU?: unknown;
    /** sent by the published client; kept in attributes */
    brandName?: unknown;
    /** sent by the published client; kept in attributes */
    supplier?: unknown;
    /** sent by the published client; kept in attributes */
    category?: unknown;
    /** sent by the published client; kept in attributes */
    collection?: unknown;
    /** sent by the published client; kept in attributes */
    season?: unknown;
    /** sent by the published client; kept in attributes */
    year?: unknown;
    /** sent by the published client; kept in attributes */
    size?: unknown;
    /** sent by the published client; kept in attributes */
    color?: unknown;
    /** sent by the published client; kept in attributes */
    ageGroup?: unknown;
    /** sent by the published client; kept in attributes */
    gender?: unknown;
    /** sent by the published client; kept in attributes */
    productGroupID?: unknown;
    /** sent by the published client; kept in attributes */
    variantGroupID?: unknown;
    /** sent by the published client; kept in attributes */
    costPrice?: unknown;
    /** sent by the published client; kept in attributes */
    costPriceCurrency?: unknown;
    /** sent by the published client; kept in attributes */
    moneyDiscount?: unknown;
    /** sent by the published client; kept in attributes */
    productType?: unknown;
    /** sent by the published client; kept in attributes */
    fulfillmentType?: unknown;
    /** sent by the published client; kept in attributes */
    deliveryWindow?: unknown;
    /** sent by the published client; kept in attributes */
    primaryWarehouseExternalID?: unknown;
    /** sent by the published client; kept in attributes */
    invoicedDate?: unknown;
    /** the published client's spelling of externalItemID; use externalItemID */
    externalID?: string;
  }>) | null;
  statements?: (Array<{
    name?: string | null;
    /** 1 fee, 2 voucher, 3 shipping, 4 service, 5 cart discount */
    type?: number | null;
    priceNet?: number | null;
    priceVat?: number | null;
    invoicedDate?: string | null;
    customFields?: ({
      [key: string]: unknown;
    }) | null;
  }>) | null;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the transaction by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  orderType?: unknown;
  /** sent by the published client; kept in attributes */
  invoicedDate?: unknown;
}>;

export type UpdateTransactionsBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  externalTransactionID: string;
  externalRowID?: string | null;
  externalParentID?: string | null;
  externalCustomerID?: string | null;
  externalStoreID?: string | null;
  /** text; the published client's JSON object is kept as its JSON text (and answered as that text) */
  externalInfo?: (string | ({
    [key: string]: unknown;
  })) | null;
  customerName?: string | null;
  /** 1 D2C, 2 B2B */
  channel?: number | null;
  market?: string | null;
  /** 1 sale, 2 return */
  type?: number | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode?: string | null;
  createdDate?: string | null;
  completedDate?: string | null;
  cancelledDate?: string | null;
  deliveryDate?: string | null;
  items?: (Array<{
    externalItemID: string;
    key?: string | null;
    sku?: string | null;
    ean?: string | null;
    productName?: string | null;
    /** Default: 0. */
    quantity?: number | null;
    vatValue?: number | null;
    moneyItemTotalNet?: number | null;
    moneyItemTotalVat?: number | null;
    moneyDiscountIncVat?: number | null;
    department?: string | null;
    deliveryDate?: string | null;
    /** 1 sale, 2 return */
    type?: number | null;
    customFields?: ({
      [key: string]: unknown;
    }) | null;
    /** read-only: added by POST .../shipments */
    shipments?: unknown;
    /** the published client's additional fields, kept as sent */
    attributes?: ({
      [key: string]: unknown;
    }) | null;
    /** sent by the published client; kept in attributes */
    variantName?: unknown;
    /** sent by the published client; kept in attributes */
    vendorSKU?: unknown;
    /** sent by the published client; kept in attributes */
    brandName?: unknown;
    /** sent by the published client; kept in attributes */
    supplier?: unknown;
    /** sent by the published client; kept in attributes */
    category?: unknown;
    /** sent by the published client; kept in attributes */
    collection?: unknown;
    /** sent by the published client; kept in attributes */
    season?: unknown;
    /** sent by the published client; kept in attributes */
    year?: unknown;
    /** sent by the published client; kept in attributes */
    size?: unknown;
    /** sent by the published client; kept in attributes */
    color?: unknown;
    /** sent by the published client; kept in attributes */
    ageGroup?: unknown;
    /** sent by the published client; kept in attributes */
    gender?: unknown;
    /** sent by the published client; kept in attributes */
    productGroupID?: unknown;
    /** sent by the published client; kept in attributes */
    variantGroupID?: unknown;
    /** sent by the published client; kept in attributes */
    costPrice?: unknown;
    /** sent by the published client; kept in attributes */
    costPriceCurrency?: unknown;
    /** sent by the published client; kept in attributes */
    moneyDiscount?: unknown;
    /** sent by the published client; kept in attributes */
    productType?: unknown;
    /** sent by the published client; kept in attributes */
    fulfillmentType?: unknown;
    /** sent by the published client; kept in attributes */
    deliveryWindow?: unknown;
    /** sent by the published client; kept in attributes */
    primaryWarehouseExternalID?: unknown;
    /** sent by the published client; kept in attributes */
    invoicedDate?: unknown;
    /** the published client's spelling of externalItemID; use externalItemID */
    externalID?: string;
  }>) | null;
  statements?: (Array<{
    name?: string | null;
    /** 1 fee, 2 voucher, 3 shipping, 4 service, 5 cart discount */
    type?: number | null;
    priceNet?: number | null;
    priceVat?: number | null;
    invoicedDate?: string | null;
    customFields?: ({
      [key: string]: unknown;
    }) | null;
  }>) | null;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the transaction by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  orderType?: unknown;
  /** sent by the published client; kept in attributes */
  invoicedDate?: unknown;
}>;

export type CreateTransactionsBatchBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  externalTransactionID: string;
  externalRowID?: string | null;
  externalParentID?: string | null;
  externalCustomerID?: string | null;
  externalStoreID?: string | null;
  /** text; the published client's JSON object is kept as its JSON text (and answered as that text) */
  externalInfo?: (string | ({
    [key: string]: unknown;
  })) | null;
  customerName?: string | null;
  /** 1 D2C, 2 B2B */
  channel?: number | null;
  market?: string | null;
  /** 1 sale, 2 return */
  type?: number | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode?: string | null;
  createdDate?: string | null;
  completedDate?: string | null;
  cancelledDate?: string | null;
  deliveryDate?: string | null;
  items?: (Array<{
    externalItemID: string;
    key?: string | null;
    sku?: string | null;
    ean?: string | null;
    productName?: string | null;
    /** Default: 0. */
    quantity?: number | null;
    vatValue?: number | null;
    moneyItemTotalNet?: number | null;
    moneyItemTotalVat?: number | null;
    moneyDiscountIncVat?: number | null;
    department?: string | null;
    deliveryDate?: string | null;
    /** 1 sale, 2 return */
    type?: number | null;
    customFields?: ({
      [key: string]: unknown;
    }) | null;
    /** read-only: added by POST .../shipments */
    shipments?: unknown;
    /** the published client's additional fields, kept as sent */
    attributes?: ({
      [key: string]: unknown;
    }) | null;
    /** sent by the published client; kept in attributes */
    variantName?: unknown;
    /** sent by the published client; kept in attributes */
    vendorSKU?: unknown;
    /** sent by the published client; kept in attributes */
    brandName?: unknown;
    /** sent by the published client; kept in attributes */
    supplier?: unknown;
    /** sent by the published client; kept in attributes */
    category?: unknown;
    /** sent by the published client; kept in attributes */
    collection?: unknown;
    /** sent by the published client; kept in attributes */
    season?: unknown;
    /** sent by the published client; kept in attributes */
    year?: unknown;
    /** sent by the published client; kept in attributes */
    size?: unknown;
    /** sent by the published client; kept in attributes */
    color?: unknown;
    /** sent by the published client; kept in attributes */
    ageGroup?: unknown;
    /** sent by the published client; kept in attributes */
    gender?: unknown;
    /** sent by the published client; kept in attributes */
    productGroupID?: unknown;
    /** sent by the published client; kept in attributes */
    variantGroupID?: unknown;
    /** sent by the published client; kept in attributes */
    costPrice?: unknown;
    /** sent by the published client; kept in attributes */
    costPriceCurrency?: unknown;
    /** sent by the published client; kept in attributes */
    moneyDiscount?: unknown;
    /** sent by the published client; kept in attributes */
    productType?: unknown;
    /** sent by the published client; kept in attributes */
    fulfillmentType?: unknown;
    /** sent by the published client; kept in attributes */
    deliveryWindow?: unknown;
    /** sent by the published client; kept in attributes */
    primaryWarehouseExternalID?: unknown;
    /** sent by the published client; kept in attributes */
    invoicedDate?: unknown;
    /** the published client's spelling of externalItemID; use externalItemID */
    externalID?: string;
  }>) | null;
  statements?: (Array<{
    name?: string | null;
    /** 1 fee, 2 voucher, 3 shipping, 4 service, 5 cart discount */
    type?: number | null;
    priceNet?: number | null;
    priceVat?: number | null;
    invoicedDate?: string | null;
    customFields?: ({
      [key: string]: unknown;
    }) | null;
  }>) | null;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the transaction by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  orderType?: unknown;
  /** sent by the published client; kept in attributes */
  invoicedDate?: unknown;
}>;

export type CreateTransactionsItemsShipmentsBody = (Array<{
  shipmentID?: string | null;
  quantity: number;
  shipmentDate?: string | null;
  externalWarehouseID?: string | null;
}>) | ({
  shipmentID?: string | null;
  quantity: number;
  shipmentDate?: string | null;
  externalWarehouseID?: string | null;
});

/** Transactions operations */
export class Transactions {
  constructor(private readonly client: Client) {}

  /** List transactions in creation order */
  listTransactions(query?: ListTransactionsQuery, options?: RequestOptions): Paged<S.Transaction> {
    return this.client.paged<S.Transaction>({ method: "GET", path: `/v2/api/transactions`, auth: "bearer" }, query, options);
  }

  /** Create transactions (an existing externalTransactionID is a 409) */
  createTransactions(body: CreateTransactionsBody, options?: RequestOptions): Promise<Array<S.Transaction>> {
    return this.client.call<Array<S.Transaction>>({ method: "POST", path: `/v2/api/transactions`, auth: "bearer" }, undefined, body, options);
  }

  /** Replace transactions by id (id required); shipments of items that stay are kept */
  updateTransactions(body: UpdateTransactionsBody, options?: RequestOptions): Promise<Array<S.Transaction>> {
    return this.client.call<Array<S.Transaction>>({ method: "PUT", path: `/v2/api/transactions/`, auth: "bearer" }, undefined, body, options);
  }

  /** Create or replace transactions by externalTransactionID; one BatchResponse per item */
  createTransactionsBatch(body: CreateTransactionsBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/transactions/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** An example Transaction body */
  listTransactionsExample(options?: RequestOptions): Promise<{
    [key: string]: unknown;
  }> {
    return this.client.call<{
    [key: string]: unknown;
  }>({ method: "GET", path: `/v2/api/transactions/example`, auth: "bearer" }, undefined, undefined, options);
  }

  /** The latest created transaction */
  listTransactionsLatest(options?: RequestOptions): Promise<S.Transaction> {
    return this.client.call<S.Transaction>({ method: "GET", path: `/v2/api/transactions/latest`, auth: "bearer" }, undefined, undefined, options);
  }

  /** One transaction by externalTransactionID */
  getTransaction(externalTransactionID: string, options?: RequestOptions): Promise<S.Transaction> {
    return this.client.call<S.Transaction>({ method: "GET", path: `/v2/api/transactions/${encodeURIComponent(externalTransactionID)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Add shipments to one item; its shipped total never exceeds its quantity (400) */
  createTransactionsItemsShipments(externalTransactionID: string, externalItemID: string, body: CreateTransactionsItemsShipmentsBody, options?: RequestOptions): Promise<S.Transaction> {
    return this.client.call<S.Transaction>({ method: "POST", path: `/v2/api/transactions/${encodeURIComponent(externalTransactionID)}/items/${encodeURIComponent(externalItemID)}/shipments`, auth: "bearer" }, undefined, body, options);
  }
}
