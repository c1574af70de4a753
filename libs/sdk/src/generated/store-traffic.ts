// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListStoretrafficeventsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** eventTime at or after (RFC 3339) */
  from?: string;
  /** eventTime before (RFC 3339) */
  to?: string;
}

export type CreateStoretrafficeventsBody = Array<S.StoreTrafficEventInput>;

export interface GetStoretrafficeventQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** eventTime at or after (RFC 3339) */
  from?: string;
  /** eventTime before (RFC 3339) */
  to?: string;
}

/** Store traffic operations */
export class StoreTraffic {
  constructor(private readonly client: Client) {}

  /** Store traffic events in creation order */
  listStoretrafficevents(query?: ListStoretrafficeventsQuery, options?: RequestOptions): Paged<S.StoreTrafficEventResource> {
    return this.client.paged<S.StoreTrafficEventResource>({ method: "GET", path: `/v2/api/storetrafficevents`, auth: "bearer" }, query, options);
  }

  /** Record up to 1000 traffic events in one write (all or nothing); (storeTrafficCounterID, eventTime) is unique and a replay overwrites */
  createStoretrafficevents(body: CreateStoretrafficeventsBody, options?: RequestOptions): Promise<S.GeneralResponse> {
    return this.client.call<S.GeneralResponse>({ method: "POST", path: `/v2/api/storetrafficevents`, auth: "bearer" }, undefined, body, options);
  }

  /** Traffic events of one counter */
  getStoretrafficevent(storeTrafficCounterID: string, query?: GetStoretrafficeventQuery, options?: RequestOptions): Paged<S.StoreTrafficEventResource> {
    return this.client.paged<S.StoreTrafficEventResource>({ method: "GET", path: `/v2/api/storetrafficevents/${encodeURIComponent(storeTrafficCounterID)}`, auth: "bearer" }, query, options);
  }
}
