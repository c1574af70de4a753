// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListPlanningSalesPlansQuery {
  /** the product dimension of groupKey (Default: "seasons".) */
  groupBy?: "seasons" | "products" | "variants" | "skus";
  /** required; the window's first day, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it): every period overlapping fromDate..toDate is answered, whole */
  fromDate: string;
  /** required; the window's last day (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate */
  toDate: string;
  /** RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros) */
  updatedSince?: string;
  seasons?: string | Array<string>;
  /** variant group ids */
  variants?: string | Array<string>;
  /** product group ids */
  products?: string | Array<string>;
  skus?: string | Array<string>;
  /** products (SKUs) by integer id or UUID */
  skuIds?: string | Array<string>;
  brands?: string | Array<string>;
  categories?: string | Array<string>;
  sizes?: string | Array<string>;
  /** default every status but 1 (inactive) */
  skuStatus?: string | Array<string>;
  /** default true (Default: "true".) */
  activePlanning?: "true" | "false";
  departments?: string | Array<string>;
  genders?: string | Array<string>;
  collections?: string | Array<string>;
  colors?: string | Array<string>;
  subcategories?: string | Array<string>;
  productTypes?: string | Array<string>;
  merchandiseTypes?: string | Array<string>;
  /** pimCustom1 values; repeatable or comma-separated */
  pimCustom1?: string | Array<string>;
  /** pimCustom2 values; repeatable or comma-separated */
  pimCustom2?: string | Array<string>;
  /** pimCustom3 values; repeatable or comma-separated */
  pimCustom3?: string | Array<string>;
  /** pimCustom4 values; repeatable or comma-separated */
  pimCustom4?: string | Array<string>;
  /** pimCustom5 values; repeatable or comma-separated */
  pimCustom5?: string | Array<string>;
  /** pimCustom6 values; repeatable or comma-separated */
  pimCustom6?: string | Array<string>;
  /** pimCustom7 values; repeatable or comma-separated */
  pimCustom7?: string | Array<string>;
  /** pimCustom8 values; repeatable or comma-separated */
  pimCustom8?: string | Array<string>;
  /** pimCustom9 values; repeatable or comma-separated */
  pimCustom9?: string | Array<string>;
  /** pimCustom10 values; repeatable or comma-separated */
  pimCustom10?: string | Array<string>;
  /** groups per page (a group: a groupKey with all its warehouse or channel rows); absent: the whole answer */
  pageSize?: number;
  /** the previous page's last groupKey (exclusive), as the Link rel="next" header names it; absent: from the first group */
  after?: string;
  /** calendar months (default), ISO weeks (Monday first) or total (one period: the window itself), in the account's timezone; at most 106 periods (Default: "month".) */
  period?: "month" | "week" | "total";
  /** 1 (D2C), 2 (B2B); repeatable or comma-separated; default both. Narrows the sales figures only */
  channel?: string | Array<string>;
}

export interface ListPlanningBreakdownQuery {
  /** the product dimension of groupKey (Default: "seasons".) */
  groupBy?: "seasons" | "products" | "variants" | "skus";
  /** required; the window's first day, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it): every period overlapping fromDate..toDate is answered, whole */
  fromDate: string;
  /** required; the window's last day (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate */
  toDate: string;
  /** RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros) */
  updatedSince?: string;
  seasons?: string | Array<string>;
  /** variant group ids */
  variants?: string | Array<string>;
  /** product group ids */
  products?: string | Array<string>;
  skus?: string | Array<string>;
  /** products (SKUs) by integer id or UUID */
  skuIds?: string | Array<string>;
  brands?: string | Array<string>;
  categories?: string | Array<string>;
  sizes?: string | Array<string>;
  /** default every status but 1 (inactive) */
  skuStatus?: string | Array<string>;
  /** default true (Default: "true".) */
  activePlanning?: "true" | "false";
  departments?: string | Array<string>;
  genders?: string | Array<string>;
  collections?: string | Array<string>;
  colors?: string | Array<string>;
  subcategories?: string | Array<string>;
  productTypes?: string | Array<string>;
  merchandiseTypes?: string | Array<string>;
  /** pimCustom1 values; repeatable or comma-separated */
  pimCustom1?: string | Array<string>;
  /** pimCustom2 values; repeatable or comma-separated */
  pimCustom2?: string | Array<string>;
  /** pimCustom3 values; repeatable or comma-separated */
  pimCustom3?: string | Array<string>;
  /** pimCustom4 values; repeatable or comma-separated */
  pimCustom4?: string | Array<string>;
  /** pimCustom5 values; repeatable or comma-separated */
  pimCustom5?: string | Array<string>;
  /** pimCustom6 values; repeatable or comma-separated */
  pimCustom6?: string | Array<string>;
  /** pimCustom7 values; repeatable or comma-separated */
  pimCustom7?: string | Array<string>;
  /** pimCustom8 values; repeatable or comma-separated */
  pimCustom8?: string | Array<string>;
  /** pimCustom9 values; repeatable or comma-separated */
  pimCustom9?: string | Array<string>;
  /** pimCustom10 values; repeatable or comma-separated */
  pimCustom10?: string | Array<string>;
  /** groups per page (a group: a groupKey with all its warehouse or channel rows); absent: the whole answer */
  pageSize?: number;
  /** the previous page's last groupKey (exclusive), as the Link rel="next" header names it; absent: from the first group */
  after?: string;
  /** calendar months (default), ISO weeks (Monday first) or total (one period: the window itself), in the account's timezone; at most 106 periods (Default: "month".) */
  period?: "month" | "week" | "total";
  /** 1 (D2C), 2 (B2B); repeatable or comma-separated; default both. Narrows the sales figures only */
  channel?: string | Array<string>;
}

export interface ListPlanningBreakdownByWarehouseQuery {
  /** the product dimension of groupKey (Default: "seasons".) */
  groupBy?: "seasons" | "products" | "variants" | "skus";
  /** required; the window's first day, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it): every period overlapping fromDate..toDate is answered, whole */
  fromDate: string;
  /** required; the window's last day (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate */
  toDate: string;
  /** RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros) */
  updatedSince?: string;
  seasons?: string | Array<string>;
  /** variant group ids */
  variants?: string | Array<string>;
  /** product group ids */
  products?: string | Array<string>;
  skus?: string | Array<string>;
  /** products (SKUs) by integer id or UUID */
  skuIds?: string | Array<string>;
  brands?: string | Array<string>;
  categories?: string | Array<string>;
  sizes?: string | Array<string>;
  /** default every status but 1 (inactive) */
  skuStatus?: string | Array<string>;
  /** default true (Default: "true".) */
  activePlanning?: "true" | "false";
  departments?: string | Array<string>;
  genders?: string | Array<string>;
  collections?: string | Array<string>;
  colors?: string | Array<string>;
  subcategories?: string | Array<string>;
  productTypes?: string | Array<string>;
  merchandiseTypes?: string | Array<string>;
  /** pimCustom1 values; repeatable or comma-separated */
  pimCustom1?: string | Array<string>;
  /** pimCustom2 values; repeatable or comma-separated */
  pimCustom2?: string | Array<string>;
  /** pimCustom3 values; repeatable or comma-separated */
  pimCustom3?: string | Array<string>;
  /** pimCustom4 values; repeatable or comma-separated */
  pimCustom4?: string | Array<string>;
  /** pimCustom5 values; repeatable or comma-separated */
  pimCustom5?: string | Array<string>;
  /** pimCustom6 values; repeatable or comma-separated */
  pimCustom6?: string | Array<string>;
  /** pimCustom7 values; repeatable or comma-separated */
  pimCustom7?: string | Array<string>;
  /** pimCustom8 values; repeatable or comma-separated */
  pimCustom8?: string | Array<string>;
  /** pimCustom9 values; repeatable or comma-separated */
  pimCustom9?: string | Array<string>;
  /** pimCustom10 values; repeatable or comma-separated */
  pimCustom10?: string | Array<string>;
  /** groups per page (a group: a groupKey with all its warehouse or channel rows); absent: the whole answer */
  pageSize?: number;
  /** the previous page's last groupKey (exclusive), as the Link rel="next" header names it; absent: from the first group */
  after?: string;
  /** calendar months (default), ISO weeks (Monday first) or total (one period: the window itself), in the account's timezone; at most 106 periods (Default: "month".) */
  period?: "month" | "week" | "total";
  /** 1 (D2C), 2 (B2B); repeatable or comma-separated; default both. Narrows the sales figures only */
  channel?: string | Array<string>;
}

export interface ListPlanningPlannedVolumesQuery {
  /** the product dimension of groupKey (Default: "seasons".) */
  groupBy?: "seasons" | "products" | "variants" | "skus";
  /** required; start of the PO and draft-PO delivery window, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it) */
  fromDate: string;
  /** required; end of the window (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate */
  toDate: string;
  /** RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros) */
  updatedSince?: string;
  seasons?: string | Array<string>;
  /** variant group ids */
  variants?: string | Array<string>;
  /** product group ids */
  products?: string | Array<string>;
  skus?: string | Array<string>;
  /** products (SKUs) by integer id or UUID */
  skuIds?: string | Array<string>;
  brands?: string | Array<string>;
  categories?: string | Array<string>;
  sizes?: string | Array<string>;
  /** default every status but 1 (inactive) */
  skuStatus?: string | Array<string>;
  /** default true (Default: "true".) */
  activePlanning?: "true" | "false";
  departments?: string | Array<string>;
  genders?: string | Array<string>;
  collections?: string | Array<string>;
  colors?: string | Array<string>;
  subcategories?: string | Array<string>;
  productTypes?: string | Array<string>;
  merchandiseTypes?: string | Array<string>;
  /** pimCustom1 values; repeatable or comma-separated */
  pimCustom1?: string | Array<string>;
  /** pimCustom2 values; repeatable or comma-separated */
  pimCustom2?: string | Array<string>;
  /** pimCustom3 values; repeatable or comma-separated */
  pimCustom3?: string | Array<string>;
  /** pimCustom4 values; repeatable or comma-separated */
  pimCustom4?: string | Array<string>;
  /** pimCustom5 values; repeatable or comma-separated */
  pimCustom5?: string | Array<string>;
  /** pimCustom6 values; repeatable or comma-separated */
  pimCustom6?: string | Array<string>;
  /** pimCustom7 values; repeatable or comma-separated */
  pimCustom7?: string | Array<string>;
  /** pimCustom8 values; repeatable or comma-separated */
  pimCustom8?: string | Array<string>;
  /** pimCustom9 values; repeatable or comma-separated */
  pimCustom9?: string | Array<string>;
  /** pimCustom10 values; repeatable or comma-separated */
  pimCustom10?: string | Array<string>;
  /** groups per page (a group: a groupKey with all its warehouse or channel rows); absent: the whole answer */
  pageSize?: number;
  /** the previous page's last groupKey (exclusive), as the Link rel="next" header names it; absent: from the first group */
  after?: string;
}

export type CreatePlanningSalesPlansBatchBody = Array<S.SalesPlanWriteInput>;

export interface ListPlanningPlannedVolumesByWarehouseQuery {
  /** the product dimension of groupKey (Default: "seasons".) */
  groupBy?: "seasons" | "products" | "variants" | "skus";
  /** required; start of the PO and draft-PO delivery window, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it) */
  fromDate: string;
  /** required; end of the window (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate */
  toDate: string;
  /** RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros) */
  updatedSince?: string;
  seasons?: string | Array<string>;
  /** variant group ids */
  variants?: string | Array<string>;
  /** product group ids */
  products?: string | Array<string>;
  skus?: string | Array<string>;
  /** products (SKUs) by integer id or UUID */
  skuIds?: string | Array<string>;
  brands?: string | Array<string>;
  categories?: string | Array<string>;
  sizes?: string | Array<string>;
  /** default every status but 1 (inactive) */
  skuStatus?: string | Array<string>;
  /** default true (Default: "true".) */
  activePlanning?: "true" | "false";
  departments?: string | Array<string>;
  genders?: string | Array<string>;
  collections?: string | Array<string>;
  colors?: string | Array<string>;
  subcategories?: string | Array<string>;
  productTypes?: string | Array<string>;
  merchandiseTypes?: string | Array<string>;
  /** pimCustom1 values; repeatable or comma-separated */
  pimCustom1?: string | Array<string>;
  /** pimCustom2 values; repeatable or comma-separated */
  pimCustom2?: string | Array<string>;
  /** pimCustom3 values; repeatable or comma-separated */
  pimCustom3?: string | Array<string>;
  /** pimCustom4 values; repeatable or comma-separated */
  pimCustom4?: string | Array<string>;
  /** pimCustom5 values; repeatable or comma-separated */
  pimCustom5?: string | Array<string>;
  /** pimCustom6 values; repeatable or comma-separated */
  pimCustom6?: string | Array<string>;
  /** pimCustom7 values; repeatable or comma-separated */
  pimCustom7?: string | Array<string>;
  /** pimCustom8 values; repeatable or comma-separated */
  pimCustom8?: string | Array<string>;
  /** pimCustom9 values; repeatable or comma-separated */
  pimCustom9?: string | Array<string>;
  /** pimCustom10 values; repeatable or comma-separated */
  pimCustom10?: string | Array<string>;
  /** groups per page (a group: a groupKey with all its warehouse or channel rows); absent: the whole answer */
  pageSize?: number;
  /** the previous page's last groupKey (exclusive), as the Link rel="next" header names it; absent: from the first group */
  after?: string;
}

/** Planning operations */
export class Planning {
  constructor(private readonly client: Client) {}

  /** Sales plan and sales actuals per group, channel and period (month, ISO week or the whole window) */
  listPlanningSalesPlans(query: ListPlanningSalesPlansQuery, options?: RequestOptions): Paged<S.SalesPlanRow> {
    return this.client.paged<S.SalesPlanRow>({ method: "GET", path: `/v2/api/planning/sales-plans`, auth: "bearer" }, query, options);
  }

  /** Per group and period: sales plan and actuals, PO and draft-PO volumes, and the stock projection (opening, closing, target, open-to-buy) */
  listPlanningBreakdown(query: ListPlanningBreakdownQuery, options?: RequestOptions): Paged<S.BreakdownRow> {
    return this.client.paged<S.BreakdownRow>({ method: "GET", path: `/v2/api/planning/breakdown`, auth: "bearer" }, query, options);
  }

  /** The breakdown per group and warehouse, with distribution-order transfers in and out */
  listPlanningBreakdownByWarehouse(query: ListPlanningBreakdownByWarehouseQuery, options?: RequestOptions): Paged<S.BreakdownWarehouseRow> {
    return this.client.paged<S.BreakdownWarehouseRow>({ method: "GET", path: `/v2/api/planning/breakdown/by-warehouse`, auth: "bearer" }, query, options);
  }

  /** Stock, PO and draft-PO volumes per group over the window fromDate..toDate */
  listPlanningPlannedVolumes(query: ListPlanningPlannedVolumesQuery, options?: RequestOptions): Paged<S.PlannedVolumeRow> {
    return this.client.paged<S.PlannedVolumeRow>({ method: "GET", path: `/v2/api/planning/planned-volumes`, auth: "bearer" }, query, options);
  }

  /** Store, replace or remove (volume null) up to 1000 of the account's sales plans, per SKU key, channel and month; where none is stored, a month's plan is the year-over-year baseline */
  createPlanningSalesPlansBatch(body: CreatePlanningSalesPlansBatchBody, options?: RequestOptions): Promise<Array<S.BatchResponse>> {
    return this.client.call<Array<S.BatchResponse>>({ method: "POST", path: `/v2/api/planning/sales-plans/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** The same volumes per group and warehouse */
  listPlanningPlannedVolumesByWarehouse(query: ListPlanningPlannedVolumesByWarehouseQuery, options?: RequestOptions): Paged<S.PlannedVolumeWarehouseRow> {
    return this.client.paged<S.PlannedVolumeWarehouseRow>({ method: "GET", path: `/v2/api/planning/planned-volumes/by-warehouse`, auth: "bearer" }, query, options);
  }
}
