// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListStocktriggersQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** warehouse IDs (UUID); repeatable */
  warehouseId?: string | Array<string>;
  /** products by integer id or UUID; repeatable */
  sku_id?: string | Array<string>;
  /** SKU keys; repeatable */
  key?: string | Array<string>;
}

export type CreateStocktriggersBatchBody = Array<S.StockTriggerWriteInput>;

/** Stock triggers operations */
export class StockTriggers {
  constructor(private readonly client: Client) {}

  /** List stock triggers (per-SKU, per-warehouse settings) in creation order */
  listStocktriggers(query?: ListStocktriggersQuery, options?: RequestOptions): Paged<S.StockTriggerResource> {
    return this.client.paged<S.StockTriggerResource>({ method: "GET", path: `/v2/api/stocktriggers`, auth: "bearer" }, query, options);
  }

  /** One stock trigger */
  getStocktrigger(ID: string, options?: RequestOptions): Promise<S.StockTriggerResource> {
    return this.client.call<S.StockTriggerResource>({ method: "GET", path: `/v2/api/stocktriggers/${encodeURIComponent(ID)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Create or replace up to 1000 stock triggers keyed by warehouse (warehouseId or warehouseExternalId) and SKU key; each created or changed trigger is a sku_warehouse_settings_change event */
  createStocktriggersBatch(body: CreateStocktriggersBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/stocktriggers/batch`, auth: "bearer" }, undefined, body, options);
  }
}
