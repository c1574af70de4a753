import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { planningV1 } from "@analytics/contracts";
import { repeatable, route, type RouteContext } from "../http/route";
import { generalResponseSchema } from "../http/schemas";
import { dateOnly } from "../http/values";
import type { CallAs } from "../clients";

const { GroupBy } = planningV1;

const groups = { seasons: GroupBy.SEASONS, products: GroupBy.PRODUCTS, variants: GroupBy.VARIANTS, skus: GroupBy.SKUS } as const;

const date = dateOnly;

const pimCustomQuery = Object.fromEntries(
  Array.from({ length: 10 }, (_, i) => [`pimCustom${i + 1}`, repeatable().describe(`pimCustom${i + 1} values; repeatable or comma-separated`)]),
) as Record<`pimCustom${1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10}`, ReturnType<typeof repeatable>>;

const volumesQuery = {
  groupBy: z.enum(["seasons", "products", "variants", "skus"]).default("seasons").describe("the product dimension of groupKey"),
  fromDate: date().describe("required; start of the PO and draft-PO delivery window, YYYY-MM-DD (or an RFC 3339 timestamp, read as its date in UTC)"),
  toDate: date().describe("required; end of the window (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as its date in UTC), not before fromDate"),
  updatedSince: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros)"),
  seasons: repeatable(),
  variants: repeatable().describe("variant group ids"),
  products: repeatable().describe("product group ids"),
  skus: repeatable(),
  skuIds: repeatable(z.union([z.string().uuid(), z.string().regex(/^[1-9][0-9]{0,15}$/, "a product's integer id or UUID")])).describe("products (SKUs) by integer id or UUID"),
  brands: repeatable(),
  categories: repeatable(),
  sizes: repeatable(),
  skuStatus: repeatable(z.string().regex(/^[1-7]$/, "must be a status from 1 to 7")).describe("default every status but 1 (inactive)"),
  activePlanning: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true")
    .describe("default true"),
  departments: repeatable(),
  genders: repeatable(),
  collections: repeatable(),
  colors: repeatable(),
  subcategories: repeatable(),
  productTypes: repeatable(),
  merchandiseTypes: repeatable(),
  ...pimCustomQuery,
};

type VolumesQuery = z.infer<z.ZodObject<typeof volumesQuery>>;

function toProtoQuery(q: VolumesQuery) {
  return {
    groupBy: groups[q.groupBy],
    fromDate: q.fromDate,
    toDate: q.toDate,
    updatedSince: q.updatedSince ?? "",
    seasons: q.seasons ?? [],
    variants: q.variants ?? [],
    products: q.products ?? [],
    skus: q.skus ?? [],
    skuIds: q.skuIds ?? [],
    brands: q.brands ?? [],
    categories: q.categories ?? [],
    sizes: q.sizes ?? [],
    skuStatus: (q.skuStatus ?? []).map(Number),
    activePlanning: q.activePlanning,
    departments: q.departments ?? [],
    genders: q.genders ?? [],
    collections: q.collections ?? [],
    colors: q.colors ?? [],
    subcategories: q.subcategories ?? [],
    productTypes: q.productTypes ?? [],
    merchandiseTypes: q.merchandiseTypes ?? [],
    pimCustom: Array.from({ length: 10 }, (_, i) => ({ index: i + 1, values: q[`pimCustom${(i + 1) as 1}`] ?? [] })).filter((p) => p.values.length),
  };
}

const volumeFields = {
  groupKey: z.string().describe("the season, productGroupId, variantGroupId or SKU key"),
  stockVolume: z.number().int().describe("available stock"),
  poVolume: z.number().int().describe("open quantity of non-cancelled, non-draft orders delivered in the window"),
  draftPOVolume: z.number().int().describe("open quantity of draft orders delivered in the window"),
};
const plannedVolumeRow = z.object(volumeFields).meta({ id: "PlannedVolumeRow" });
const plannedVolumeWarehouseRow = z
  .object({
    ...volumeFields,
    warehouseId: z.string().describe('the warehouse ID; "" for PO volume without a (known) warehouse'),
    warehouseName: z.string(),
  })
  .meta({ id: "PlannedVolumeWarehouseRow" });

/** /v2/api/planning -> analytics.planning.v1.PlanningService (answers from planning's replica). */
export function planningRoutes(ctx: RouteContext, planning: Client<typeof planningV1.PlanningService>, as: CallAs): void {
  const tag = "Planning";
  const responses400 = { 400: { description: "missing or bad fromDate/toDate or another bad parameter", schema: generalResponseSchema } };
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/planned-volumes",
    summary: "Stock, PO and draft-PO volumes per group over the window fromDate..toDate",
    tag,
    auth: "bearer",
    query: volumesQuery,
    responses: { 200: { description: "one row per group, ordered by groupKey", schema: z.array(plannedVolumeRow) }, ...responses400 },
    handler: async ({ query, caller }) => {
      const res = await planning.getPlannedVolumes({ query: toProtoQuery(query) }, as(caller));
      return res.rows.map((r) => ({
        groupKey: r.groupKey,
        stockVolume: Number(r.stockVolume),
        poVolume: Number(r.poVolume),
        draftPOVolume: Number(r.draftPoVolume),
      }));
    },
  });
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/planned-volumes/by-warehouse",
    summary: "The same volumes per group and warehouse",
    tag,
    auth: "bearer",
    query: volumesQuery,
    responses: {
      200: { description: "one row per group and warehouse, ordered by groupKey then warehouseId", schema: z.array(plannedVolumeWarehouseRow) },
      ...responses400,
    },
    handler: async ({ query, caller }) => {
      const res = await planning.getPlannedVolumesByWarehouse({ query: toProtoQuery(query) }, as(caller));
      return res.rows.map((r) => ({
        groupKey: r.groupKey,
        warehouseId: r.warehouseId,
        warehouseName: r.warehouseName,
        stockVolume: Number(r.stockVolume),
        poVolume: Number(r.poVolume),
        draftPOVolume: Number(r.draftPoVolume),
      }));
    },
  });
}
