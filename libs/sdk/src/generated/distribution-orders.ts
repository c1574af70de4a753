// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListDistributionordersQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** one of PROCESSING, ALLOCATED, IN TRANSIT, COMPLETED, CANCELLED */
  status?: string;
}

export type CreateDistributionordersBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  externalDOID: string;
  externalRowID: string;
  externalComment?: string | null;
  season?: string | null;
  key?: string | null;
  sku?: string | null;
  orderDate?: string | null;
  deliveryDate?: string | null;
  fromWarehouseExternalId?: string | null;
  toWarehouseExternalId?: string | null;
  /** Default: 0. */
  quantity?: number | null;
  /** Default: 0. */
  allocatedQuantity?: number | null;
  shippedAt?: string | null;
  /** Default: 0. */
  deliveredQuantity?: number | null;
  completedDate?: string | null;
  cancelledDate?: string | null;
  /** read-only: derived: CANCELLED, COMPLETED, IN TRANSIT, ALLOCATED or PROCESSING */
  status?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the row by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  orderType?: unknown;
  /** sent by the published client; kept in attributes */
  deliveryWindow?: unknown;
  /** sent by the published client; kept in attributes */
  label?: unknown;
  /** the published client's spelling of externalDOID; use externalDOID */
  externalDistributionOrderId?: string;
}>;

export type UpdateDistributionordersBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  externalDOID: string;
  externalRowID: string;
  externalComment?: string | null;
  season?: string | null;
  key?: string | null;
  sku?: string | null;
  orderDate?: string | null;
  deliveryDate?: string | null;
  fromWarehouseExternalId?: string | null;
  toWarehouseExternalId?: string | null;
  /** Default: 0. */
  quantity?: number | null;
  /** Default: 0. */
  allocatedQuantity?: number | null;
  shippedAt?: string | null;
  /** Default: 0. */
  deliveredQuantity?: number | null;
  completedDate?: string | null;
  cancelledDate?: string | null;
  /** read-only: derived: CANCELLED, COMPLETED, IN TRANSIT, ALLOCATED or PROCESSING */
  status?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the row by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  orderType?: unknown;
  /** sent by the published client; kept in attributes */
  deliveryWindow?: unknown;
  /** sent by the published client; kept in attributes */
  label?: unknown;
  /** the published client's spelling of externalDOID; use externalDOID */
  externalDistributionOrderId?: string;
}>;

export type CreateDistributionordersBatchBody = Array<{
  /** the integer id, or the UUID (`uuid`) */
  id?: number | string;
  externalDOID: string;
  externalRowID: string;
  externalComment?: string | null;
  season?: string | null;
  key?: string | null;
  sku?: string | null;
  orderDate?: string | null;
  deliveryDate?: string | null;
  fromWarehouseExternalId?: string | null;
  toWarehouseExternalId?: string | null;
  /** Default: 0. */
  quantity?: number | null;
  /** Default: 0. */
  allocatedQuantity?: number | null;
  shippedAt?: string | null;
  /** Default: 0. */
  deliveredQuantity?: number | null;
  completedDate?: string | null;
  cancelledDate?: string | null;
  /** read-only: derived: CANCELLED, COMPLETED, IN TRANSIT, ALLOCATED or PROCESSING */
  status?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's additional fields, kept as sent */
  attributes?: ({
    [key: string]: unknown;
  }) | null;
  /** read-only: the internal id (PUT may name the row by it as `id`) */
  uuid?: unknown;
  /** sent by the published client; kept in attributes */
  orderType?: unknown;
  /** sent by the published client; kept in attributes */
  deliveryWindow?: unknown;
  /** sent by the published client; kept in attributes */
  label?: unknown;
  /** the published client's spelling of externalDOID; use externalDOID */
  externalDistributionOrderId?: string;
}>;

export interface ListDistributionordersProcessingQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
}

export interface ListDistributionordersExampleQuery {
  /** one of PROCESSING, ALLOCATED, IN TRANSIT, COMPLETED, CANCELLED */
  status?: string;
}

/** Distribution orders operations */
export class DistributionOrders {
  constructor(private readonly client: Client) {}

  /** List distribution order rows in creation order */
  listDistributionorders(query?: ListDistributionordersQuery, options?: RequestOptions): Paged<S.DistributionOrder> {
    return this.client.paged<S.DistributionOrder>({ method: "GET", path: `/v2/api/distributionorders`, auth: "bearer" }, query, options);
  }

  /** Create (or update, by externalDOID and externalRowID) distribution order rows */
  createDistributionorders(body: CreateDistributionordersBody, options?: RequestOptions): Promise<Array<S.DistributionOrder>> {
    return this.client.call<Array<S.DistributionOrder>>({ method: "POST", path: `/v2/api/distributionorders`, auth: "bearer" }, undefined, body, options);
  }

  /** Replace distribution order rows by id (id required) */
  updateDistributionorders(body: UpdateDistributionordersBody, options?: RequestOptions): Promise<Array<S.DistributionOrder>> {
    return this.client.call<Array<S.DistributionOrder>>({ method: "PUT", path: `/v2/api/distributionorders`, auth: "bearer" }, undefined, body, options);
  }

  /** Create or update rows by (externalDOID, externalRowID); 400 when any row fails (the valid rows are still applied) */
  createDistributionordersBatch(body: CreateDistributionordersBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/distributionorders/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** External ids of distribution orders with at least one row neither COMPLETED nor CANCELLED */
  listDistributionordersProcessing(query?: ListDistributionordersProcessingQuery, options?: RequestOptions): Paged<string> {
    return this.client.paged<string>({ method: "GET", path: `/v2/api/distributionorders/processing`, auth: "bearer" }, query, options);
  }

  /** An example DistributionOrder row (in the status asked for) */
  listDistributionordersExample(query?: ListDistributionordersExampleQuery, options?: RequestOptions): Promise<{
    [key: string]: unknown;
  }> {
    return this.client.call<{
    [key: string]: unknown;
  }>({ method: "GET", path: `/v2/api/distributionorders/example`, auth: "bearer" }, query, undefined, options);
  }

  /** Every row of one distribution order (by externalDOID) */
  getDistributionorder(id: string, options?: RequestOptions): Promise<Array<S.DistributionOrder>> {
    return this.client.call<Array<S.DistributionOrder>>({ method: "GET", path: `/v2/api/distributionorders/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, undefined, options);
  }
}
