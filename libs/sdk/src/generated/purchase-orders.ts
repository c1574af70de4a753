// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListPurchaseordersQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** orders of all API keys (default false) */
  global?: "0" | "1" | "true" | "false" | "";
  /** processing: deliveryStatus 0, 1 or 5 (Default: "all".) */
  status?: "all" | "processing";
  /** orderDate >= from (RFC 3339: Z, +01:00 or +0100) */
  from?: string;
  /** orderDate < to */
  to?: string;
  /** createdAt >= createdFrom */
  createdFrom?: string;
  /** createdAt < createdTo */
  createdTo?: string;
  /** updatedAt >= updatedFrom */
  updatedFrom?: string;
  /** updatedAt < updatedTo */
  updatedTo?: string;
}

export type CreatePurchaseordersBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  /** required; the {externalPurchaseNo} of GET */
  externalPONo: string;
  orderDate?: string | null;
  deliveryDate?: string | null;
  /** 0 not delivered (default), 1 partially delivered, 2 fully delivered, 3 cancelled, 4 draft, 5 open (Default: 0.) */
  deliveryStatus?: number | null;
  externalComment?: string | null;
  externalWarehouseID?: string | null;
  supplier?: string | null;
  label?: string | null;
  orderType?: string | null;
  items?: (Array<{
    /** read-only: kept for a row whose externalRowID stays */
    id?: unknown;
    /** unique within the order */
    externalRowID?: string | null;
    key?: string | null;
    sku?: string | null;
    ean?: string | null;
    season?: string | null;
    /** the catalogue product's uuid that the item's key, sku or ean names */
    skuId?: unknown;
    /** Default: 0. */
    quantity?: number | null;
    /** overrides the order's */
    deliveryDate?: string | null;
    /** overrides the order's */
    externalWarehouseID?: string | null;
    totalPriceNet?: number | null;
    totalPriceVat?: number | null;
    totalPriceCurrency?: string | null;
    deliveries?: (Array<{
      deliveryID?: string | null;
      quantity: number;
      deliveryDate?: string | null;
    }>) | null;
    /** read-only: the sum of the deliveries */
    deliveredQuantity?: unknown;
    /** the published client's additional fields, kept as sent */
    attributes?: ({
      [key: string]: unknown;
    }) | null;
    /** read-only: the product's internal id */
    skuUuid?: unknown;
    /** sent by the published client; kept in attributes */
    productName?: unknown;
    /** sent by the published client; kept in attributes */
    brandName?: unknown;
    /** sent by the published client; kept in attributes */
    supplier?: unknown;
    /** sent by the published client; kept in attributes */
    revisedDeliveryDate?: unknown;
    /** sent by the published client; kept in attributes */
    departureDate?: unknown;
    /** sent by the published client; kept in attributes */
    revisedDepartureDate?: unknown;
  }>) | null;
  /** read-only: the API key that created the order */
  apiKeyId?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the order by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  completedDate?: unknown;
  /** sent by the published client; kept in attributes */
  cancelledDate?: unknown;
  /** sent by the published client; kept in attributes */
  deliveryWindow?: unknown;
  /** sent by the published client; kept in attributes */
  factory?: unknown;
  /** sent by the published client; kept in attributes */
  transportMethod?: unknown;
  /** the published client's spelling of externalPONo; use externalPONo */
  externalPurchaseNo?: string;
}>;

export type UpdatePurchaseordersBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  /** required; the {externalPurchaseNo} of GET */
  externalPONo: string;
  orderDate?: string | null;
  deliveryDate?: string | null;
  /** 0 not delivered (default), 1 partially delivered, 2 fully delivered, 3 cancelled, 4 draft, 5 open (Default: 0.) */
  deliveryStatus?: number | null;
  externalComment?: string | null;
  externalWarehouseID?: string | null;
  supplier?: string | null;
  label?: string | null;
  orderType?: string | null;
  items?: (Array<{
    /** read-only: kept for a row whose externalRowID stays */
    id?: unknown;
    /** unique within the order */
    externalRowID?: string | null;
    key?: string | null;
    sku?: string | null;
    ean?: string | null;
    season?: string | null;
    /** the catalogue product's uuid that the item's key, sku or ean names */
    skuId?: unknown;
    /** Default: 0. */
    quantity?: number | null;
    /** overrides the order's */
    deliveryDate?: string | null;
    /** overrides the order's */
    externalWarehouseID?: string | null;
    totalPriceNet?: number | null;
    totalPriceVat?: number | null;
    totalPriceCurrency?: string | null;
    deliveries?: (Array<{
      deliveryID?: string | null;
      quantity: number;
      deliveryDate?: string | null;
    }>) | null;
    /** read-only: the sum of the deliveries */
    deliveredQuantity?: unknown;
    /** the published client's additional fields, kept as sent */
    attributes?: ({
      [key: string]: unknown;
    }) | null;
    /** read-only: the product's internal id */
    skuUuid?: unknown;
    /** sent by the published client; kept in attributes */
    productName?: unknown;
    /** sent by the published client; kept in attributes */
    brandName?: unknown;
    /** sent by the published client; kept in attributes */
    supplier?: unknown;
    /** sent by the published client; kept in attributes */
    revisedDeliveryDate?: unknown;
    /** sent by the published client; kept in attributes */
    departureDate?: unknown;
    /** sent by the published client; kept in attributes */
    revisedDepartureDate?: unknown;
  }>) | null;
  /** read-only: the API key that created the order */
  apiKeyId?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the order by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  completedDate?: unknown;
  /** sent by the published client; kept in attributes */
  cancelledDate?: unknown;
  /** sent by the published client; kept in attributes */
  deliveryWindow?: unknown;
  /** sent by the published client; kept in attributes */
  factory?: unknown;
  /** sent by the published client; kept in attributes */
  transportMethod?: unknown;
  /** the published client's spelling of externalPONo; use externalPONo */
  externalPurchaseNo?: string;
}>;

export type CreatePurchaseordersBatchBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  /** required; the {externalPurchaseNo} of GET */
  externalPONo: string;
  orderDate?: string | null;
  deliveryDate?: string | null;
  /** 0 not delivered (default), 1 partially delivered, 2 fully delivered, 3 cancelled, 4 draft, 5 open (Default: 0.) */
  deliveryStatus?: number | null;
  externalComment?: string | null;
  externalWarehouseID?: string | null;
  supplier?: string | null;
  label?: string | null;
  orderType?: string | null;
  items?: (Array<{
    /** read-only: kept for a row whose externalRowID stays */
    id?: unknown;
    /** unique within the order */
    externalRowID?: string | null;
    key?: string | null;
    sku?: string | null;
    ean?: string | null;
    season?: string | null;
    /** the catalogue product's uuid that the item's key, sku or ean names */
    skuId?: unknown;
    /** Default: 0. */
    quantity?: number | null;
    /** overrides the order's */
    deliveryDate?: string | null;
    /** overrides the order's */
    externalWarehouseID?: string | null;
    totalPriceNet?: number | null;
    totalPriceVat?: number | null;
    totalPriceCurrency?: string | null;
    deliveries?: (Array<{
      deliveryID?: string | null;
      quantity: number;
      deliveryDate?: string | null;
    }>) | null;
    /** read-only: the sum of the deliveries */
    deliveredQuantity?: unknown;
    /** the published client's additional fields, kept as sent */
    attributes?: ({
      [key: string]: unknown;
    }) | null;
    /** read-only: the product's internal id */
    skuUuid?: unknown;
    /** sent by the published client; kept in attributes */
    productName?: unknown;
    /** sent by the published client; kept in attributes */
    brandName?: unknown;
    /** sent by the published client; kept in attributes */
    supplier?: unknown;
    /** sent by the published client; kept in attributes */
    revisedDeliveryDate?: unknown;
    /** sent by the published client; kept in attributes */
    departureDate?: unknown;
    /** sent by the published client; kept in attributes */
    revisedDepartureDate?: unknown;
  }>) | null;
  /** read-only: the API key that created the order */
  apiKeyId?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the order by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  completedDate?: unknown;
  /** sent by the published client; kept in attributes */
  cancelledDate?: unknown;
  /** sent by the published client; kept in attributes */
  deliveryWindow?: unknown;
  /** sent by the published client; kept in attributes */
  factory?: unknown;
  /** sent by the published client; kept in attributes */
  transportMethod?: unknown;
  /** the published client's spelling of externalPONo; use externalPONo */
  externalPurchaseNo?: string;
}>;

export interface CreatePurchaseordersBatchQuery {
  /** allow replacing orders other API keys created (default false) */
  global?: "0" | "1" | "true" | "false" | "";
}

export interface ListPurchaseordersLatestQuery {
  /** orders of all API keys (default false) */
  global?: "0" | "1" | "true" | "false" | "";
}

export interface GetPurchaseorderQuery {
  /** orders of all API keys (default false) */
  global?: "0" | "1" | "true" | "false" | "";
}

/** Purchase orders operations */
export class PurchaseOrders {
  constructor(private readonly client: Client) {}

  /** List purchase orders in creation order (by default only those the calling API key created) */
  listPurchaseorders(query?: ListPurchaseordersQuery, options?: RequestOptions): Paged<S.PurchaseOrder> {
    return this.client.paged<S.PurchaseOrder>({ method: "GET", path: `/v2/api/purchaseorders`, auth: "bearer" }, query, options);
  }

  /** Create up to 500 purchase orders (all or nothing) */
  createPurchaseorders(body: CreatePurchaseordersBody, options?: RequestOptions): Promise<Array<S.PurchaseOrder>> {
    return this.client.call<Array<S.PurchaseOrder>>({ method: "POST", path: `/v2/api/purchaseorders`, auth: "bearer" }, undefined, body, options);
  }

  /** Replace up to 500 purchase orders and their items by id (all or nothing) */
  updatePurchaseorders(body: UpdatePurchaseordersBody, options?: RequestOptions): Promise<Array<S.PurchaseOrder>> {
    return this.client.call<Array<S.PurchaseOrder>>({ method: "PUT", path: `/v2/api/purchaseorders/`, auth: "bearer" }, undefined, body, options);
  }

  /** Create or replace up to 500 purchase orders by externalPONo; an unchanged order is left alone */
  createPurchaseordersBatch(body: CreatePurchaseordersBatchBody, query?: CreatePurchaseordersBatchQuery, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/purchaseorders/batch`, auth: "bearer" }, query, body, options);
  }

  /** An example PurchaseOrder body */
  listPurchaseordersExample(options?: RequestOptions): Promise<{
    [key: string]: unknown;
  }> {
    return this.client.call<{
    [key: string]: unknown;
  }>({ method: "GET", path: `/v2/api/purchaseorders/example`, auth: "bearer" }, undefined, undefined, options);
  }

  /** The latest created purchase order (of this API key unless global) */
  listPurchaseordersLatest(query?: ListPurchaseordersLatestQuery, options?: RequestOptions): Promise<S.PurchaseOrder> {
    return this.client.call<S.PurchaseOrder>({ method: "GET", path: `/v2/api/purchaseorders/latest`, auth: "bearer" }, query, undefined, options);
  }

  /** One purchase order by externalPONo (of this API key unless global) */
  getPurchaseorder(externalPurchaseNo: string, query?: GetPurchaseorderQuery, options?: RequestOptions): Promise<S.PurchaseOrder> {
    return this.client.call<S.PurchaseOrder>({ method: "GET", path: `/v2/api/purchaseorders/${encodeURIComponent(externalPurchaseNo)}`, auth: "bearer" }, query, undefined, options);
  }
}
