// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListStoresQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
}

export type CreateStoresBody = Array<S.StoreUpsertInput>;

export type UpdateStoreBody = {
  externalStoreId?: string;
  /** Default: "". */
  name?: string;
  trafficCounterID?: string | null;
  /** 1 D2C, 2 B2B; 0 (the published client's unset) or null is none */
  channelType?: (0 | 1 | 2) | null;
  address?: string | null;
  address2?: string | null;
  zip?: string | null;
  city?: string | null;
  state?: string | null;
  countryCode?: string | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode?: string | null;
  /** warehouses by externalId, or as the published client sends them ({name, externalId}, name ignored; null for none); an unknown one is a 400 */
  warehouses?: (Array<string | ({
    externalId: string;
    name?: unknown;
  })>) | null;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

/** Stores operations */
export class Stores {
  constructor(private readonly client: Client) {}

  /** List stores in creation order */
  listStores(query?: ListStoresQuery, options?: RequestOptions): Paged<S.Store> {
    return this.client.paged<S.Store>({ method: "GET", path: `/v2/api/stores`, auth: "bearer" }, query, options);
  }

  /** Create or update stores by externalStoreId (all or nothing); `warehouses` names warehouses by externalId */
  createStores(body: CreateStoresBody, options?: RequestOptions): Promise<Array<S.Store>> {
    return this.client.call<Array<S.Store>>({ method: "POST", path: `/v2/api/stores`, auth: "bearer" }, undefined, body, options);
  }

  /** One store */
  getStore(externalStoreID: string, options?: RequestOptions): Promise<S.Store> {
    return this.client.call<S.Store>({ method: "GET", path: `/v2/api/stores/${encodeURIComponent(externalStoreID)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Replace a store (fields not sent take their defaults); externalStoreId, when sent, must equal the path's */
  updateStore(externalStoreID: string, body: UpdateStoreBody, options?: RequestOptions): Promise<S.Store> {
    return this.client.call<S.Store>({ method: "PUT", path: `/v2/api/stores/${encodeURIComponent(externalStoreID)}`, auth: "bearer" }, undefined, body, options);
  }

  /** Delete a store */
  deleteStore(externalStoreID: string, options?: RequestOptions): Promise<S.GeneralResponse> {
    return this.client.call<S.GeneralResponse>({ method: "DELETE", path: `/v2/api/stores/${encodeURIComponent(externalStoreID)}`, auth: "bearer" }, undefined, undefined, options);
  }
}
