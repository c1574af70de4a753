// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, RequestOptions } from "../core/client";
import type * as S from "./schemas";

/** Product categories, created by product writes. */
export class Categories {
  constructor(private readonly client: Client) {}

  /** List all categories */
  listCategories(options?: RequestOptions): Promise<Array<S.Category>> {
    return this.client.call<Array<S.Category>>({ method: "GET", path: `/v2/api/categories`, auth: "bearer" }, undefined, undefined, options);
  }

  /** One category */
  getCategory(ID: string, options?: RequestOptions): Promise<S.Category> {
    return this.client.call<S.Category>({ method: "GET", path: `/v2/api/categories/${encodeURIComponent(ID)}`, auth: "bearer" }, undefined, undefined, options);
  }
}
