// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListBrandsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** name or synonym, case-insensitive */
  name?: string;
  /** the integer id or the UUID */
  id?: string;
}

/** Brands and categories, created by product writes. */
export class Brands {
  constructor(private readonly client: Client) {}

  /** List brands (created by product writes) */
  listBrands(query?: ListBrandsQuery, options?: RequestOptions): Paged<S.Brand> {
    return this.client.paged<S.Brand>({ method: "GET", path: `/v2/api/brands`, auth: "bearer" }, query, options);
  }

  /** One brand (as an array, as the specification declares) */
  getBrand(ID: string, options?: RequestOptions): Promise<Array<S.Brand>> {
    return this.client.call<Array<S.Brand>>({ method: "GET", path: `/v2/api/brands/${encodeURIComponent(ID)}`, auth: "bearer" }, undefined, undefined, options);
  }
}
