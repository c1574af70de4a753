// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export type CreatePriceListsBody = {
  externalPriceListId: string;
  name: string;
  /** an ISO 4217 code (e.g. EUR) */
  currency: string;
  /** Default: false. */
  defaultPriceList?: boolean;
  /** Default: 0. */
  defaultVat?: number;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export type UpdatePriceListBody = {
  externalPriceListId?: string;
  name: string;
  /** an ISO 4217 code (e.g. EUR) */
  currency: string;
  /** Default: false. */
  defaultPriceList?: boolean;
  /** Default: 0. */
  defaultVat?: number;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export interface ListPriceListsPricesQuery {
  /** 1-based page; with neither page nor pageSize every price is streamed */
  page?: number;
  /** page size, at most 1000 (default 10 when page is sent) */
  pageSize?: number;
}

export interface ListPricesQuery {
  /** 1-based page; with neither page nor pageSize every price is streamed */
  page?: number;
  /** page size, at most 1000 (default 10 when page is sent) */
  pageSize?: number;
}

export type CreatePricesBatchBody = Array<S.PriceUpdateRequestInput>;

export type DeletePricesBatchBody = S.PriceDeleteRequestInput;

/** Price lists and prices operations */
export class PriceListsAndPrices {
  constructor(private readonly client: Client) {}

  /** All price lists of the account */
  listPriceLists(options?: RequestOptions): Promise<Array<S.PriceList>> {
    return this.client.call<Array<S.PriceList>>({ method: "GET", path: `/v2/api/price-lists`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Create a price list (an existing externalPriceListId is updated) */
  createPriceLists(body: CreatePriceListsBody, options?: RequestOptions): Promise<S.PriceList> {
    return this.client.call<S.PriceList>({ method: "POST", path: `/v2/api/price-lists`, auth: "bearer" }, undefined, body, options);
  }

  /** One price list */
  getPriceList(externalPriceListId: string, options?: RequestOptions): Promise<S.PriceList> {
    return this.client.call<S.PriceList>({ method: "GET", path: `/v2/api/price-lists/${encodeURIComponent(externalPriceListId)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Update a price list */
  updatePriceList(externalPriceListId: string, body: UpdatePriceListBody, options?: RequestOptions): Promise<S.PriceList> {
    return this.client.call<S.PriceList>({ method: "PUT", path: `/v2/api/price-lists/${encodeURIComponent(externalPriceListId)}`, auth: "bearer" }, undefined, body, options);
  }

  /** The prices of one price list */
  listPriceListsPrices(externalPriceListId: string, query?: ListPriceListsPricesQuery, options?: RequestOptions): Paged<S.PriceResponse> {
    return this.client.paged<S.PriceResponse>({ method: "GET", path: `/v2/api/price-lists/${encodeURIComponent(externalPriceListId)}/prices`, auth: "bearer" }, query, options);
  }

  /** All prices of the account: streamed whole without page/pageSize, else one page */
  listPrices(query?: ListPricesQuery, options?: RequestOptions): Paged<S.PriceResponse> {
    return this.client.paged<S.PriceResponse>({ method: "GET", path: `/v2/api/prices`, auth: "bearer" }, query, options);
  }

  /** Upsert up to 1000 prices, one per (list, SKU, season); customPrices are merged; one answer per item */
  createPricesBatch(body: CreatePricesBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/prices/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** Delete the listed keys' prices of one price list (of one season when sent) */
  deletePricesBatch(body: DeletePricesBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "DELETE", path: `/v2/api/prices/batch`, auth: "bearer" }, undefined, body, options);
  }
}
