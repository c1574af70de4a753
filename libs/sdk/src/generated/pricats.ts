// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListPricatsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  externalids?: string | Array<string>;
  supplierGln?: string | Array<string>;
  /** matches supplierName */
  supplier?: string | Array<string>;
}

export interface ListPricatsProductsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  pricatExternalId?: string | Array<string>;
  sku?: string | Array<string>;
  season?: string | Array<string>;
  supplierGln?: string | Array<string>;
  supplier?: string | Array<string>;
}

export type CreatePricatsProductsBatchBody = {
  pricat: {
    externalId: string;
    /** Default: "". */
    name?: string | null;
    supplierGln?: string | null;
    supplierName?: string | null;
  };
  items: Array<S.PricatSkuUpsertInput>;
};

/** Pricats operations */
export class Pricats {
  constructor(private readonly client: Client) {}

  /** Pricats (supplier price catalogues) */
  listPricats(query?: ListPricatsQuery, options?: RequestOptions): Paged<S.Pricat> {
    return this.client.paged<S.Pricat>({ method: "GET", path: `/v2/api/pricats`, auth: "bearer" }, query, options);
  }

  /** Pricat SKU rows */
  listPricatsProducts(query?: ListPricatsProductsQuery, options?: RequestOptions): Paged<S.PricatSku> {
    return this.client.paged<S.PricatSku>({ method: "GET", path: `/v2/api/pricats/products`, auth: "bearer" }, query, options);
  }

  /** Create or update a pricat and upsert up to 1000 of its SKU rows by (sku, season); one answer per row */
  createPricatsProductsBatch(body: CreatePricatsProductsBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/pricats/products/batch`, auth: "bearer" }, undefined, body, options);
  }
}
