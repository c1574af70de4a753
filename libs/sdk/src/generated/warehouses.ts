// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListWarehousesQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** warehouse IDs (UUID); repeatable or comma-separated */
  warehouse_id?: string | Array<string>;
}

export type CreateWarehousesBody = Array<S.WarehouseUpsertInput>;

export interface ListStockQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  keys?: string | Array<string>;
  skus?: string | Array<string>;
  eans?: string | Array<string>;
}

export type UpsertStockBody = Array<S.StockRowWriteInput>;

export interface ListWarehouseStockQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  keys?: string | Array<string>;
  skus?: string | Array<string>;
  eans?: string | Array<string>;
}

export type UpsertWarehouseStockBody = Array<S.StockRowWriteInput>;

export type UpdateWarehouseBody = {
  /** read-only */
  ID?: unknown;
  externalId?: string;
  /** Default: "". */
  name?: string;
  /** Default: false. */
  centralWarehouse?: boolean;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

/** Warehouses operations */
export class Warehouses {
  constructor(private readonly client: Client) {}

  /** List warehouses in creation order */
  listWarehouses(query?: ListWarehousesQuery, options?: RequestOptions): Paged<S.Warehouse> {
    return this.client.paged<S.Warehouse>({ method: "GET", path: `/v2/api/warehouses`, auth: "bearer" }, query, options);
  }

  /** Create or update warehouses by externalId (all or nothing) */
  createWarehouses(body: CreateWarehousesBody, options?: RequestOptions): Promise<Array<S.Warehouse>> {
    return this.client.call<Array<S.Warehouse>>({ method: "POST", path: `/v2/api/warehouses`, auth: "bearer" }, undefined, body, options);
  }

  /** Stock of every warehouse, one row per (warehouse, SKU) */
  listStock(query?: ListStockQuery, options?: RequestOptions): Paged<S.StockRow> {
    return this.client.paged<S.StockRow>({ method: "GET", path: `/v2/api/warehouses/stock`, auth: "bearer" }, query, options);
  }

  /** Stock snapshots per (warehouse, SKU): a row older (by `date`) than the stored one is accepted and ignored (its message says so), so replays and out-of-order deliveries never move stock backwards */
  upsertStock(body: UpsertStockBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/warehouses/stock`, auth: "bearer" }, undefined, body, options);
  }

  /** The stock of one warehouse, one row per SKU */
  listWarehouseStock(externalWarehouseID: string, query?: ListWarehouseStockQuery, options?: RequestOptions): Paged<S.StockRow> {
    return this.client.paged<S.StockRow>({ method: "GET", path: `/v2/api/warehouses/${encodeURIComponent(externalWarehouseID)}/stock`, auth: "bearer" }, query, options);
  }

  /** Stock snapshots per (warehouse, SKU): a row older (by `date`) than the stored one is accepted and ignored (its message says so), so replays and out-of-order deliveries never move stock backwards */
  upsertWarehouseStock(externalWarehouseID: string, body: UpsertWarehouseStockBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/warehouses/${encodeURIComponent(externalWarehouseID)}/stock`, auth: "bearer" }, undefined, body, options);
  }

  /** One warehouse by externalId */
  getWarehouse(externalWarehouseID: string, options?: RequestOptions): Promise<S.Warehouse> {
    return this.client.call<S.Warehouse>({ method: "GET", path: `/v2/api/warehouses/${encodeURIComponent(externalWarehouseID)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Replace a warehouse's name and centralWarehouse (fields not sent take their defaults); externalId, when sent, must equal the path's */
  updateWarehouse(externalWarehouseID: string, body: UpdateWarehouseBody, options?: RequestOptions): Promise<S.Warehouse> {
    return this.client.call<S.Warehouse>({ method: "PUT", path: `/v2/api/warehouses/${encodeURIComponent(externalWarehouseID)}`, auth: "bearer" }, undefined, body, options);
  }

  /** Delete a warehouse. A warehouse that still holds stock rows or stock triggers is a 409: the client deletes those first */
  deleteWarehouse(externalWarehouseID: string, options?: RequestOptions): Promise<S.GeneralResponse> {
    return this.client.call<S.GeneralResponse>({ method: "DELETE", path: `/v2/api/warehouses/${encodeURIComponent(externalWarehouseID)}`, auth: "bearer" }, undefined, undefined, options);
  }
}
