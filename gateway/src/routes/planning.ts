import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { ScalarType, type DescField } from "@bufbuild/protobuf";
import { fieldRules, planningV1, type catalogueV1 } from "@analytics/contracts";
import type { Caller } from "@analytics/auth";
import { batchOf, repeatable, route, type RouteContext } from "../http/route";
import { BATCH_MAX, runBatch, serverFailure } from "../http/batch";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { dateOnly } from "../http/values";
import { answerShape, restAnswerOf } from "../http/proto-schema";
import type { CallAs } from "../clients";
import { productUuids } from "./product-ids";

const { GroupBy, PimCustomFilterSchema, PlannedVolumeRowSchema, PlannedVolumeWarehouseRowSchema, PlannedVolumesQuerySchema } = planningV1;

const groups = { seasons: GroupBy.SEASONS, products: GroupBy.PRODUCTS, variants: GroupBy.VARIANTS, skus: GroupBy.SKUS } as const;

// ---------------------------------------------------------------------------------------------
// The query: the PlannedVolumesQuery message's fields, in its order, with their rules (bounds,
// lengths, descriptions). A repeated text field is a repeatable filter of the same name; what REST
// takes differently from the message is named here.

const date = dateOnly;
const queryField = (name: string): DescField => PlannedVolumesQuerySchema.fields.find((f) => f.name === name)!;
const boundsOf = (field: DescField) => {
  const { min, max } = fieldRules(field);
  return { min: Number(min), max: Number(max) };
};

/** Integers within a field's bounds, as query text (`what`: the error's noun). */
function boundedInteger(field: DescField, what: string) {
  const { min, max } = boundsOf(field);
  return z.string().refine((v) => /^-?(0|[1-9][0-9]{0,9})$/.test(v) && Number(v) >= min && Number(v) <= max, `must be ${what} from ${min} to ${max}`);
}

/** pimCustom1..pimCustomN, N the bound of PimCustomFilter.index. */
const pimCustomIndex = boundsOf(PimCustomFilterSchema.fields.find((f) => f.name === "index")!);
const pimCustomNames = Array.from({ length: pimCustomIndex.max - pimCustomIndex.min + 1 }, (_, i) => `pimCustom${pimCustomIndex.min + i}`);

const restQuery: Record<string, Record<string, z.ZodType>> = {
  groupBy: { groupBy: z.enum(["seasons", "products", "variants", "skus"]).default("seasons").describe("the product dimension of groupKey") },
  fromDate: { fromDate: date().describe("required; start of the PO and draft-PO delivery window, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it)") },
  toDate: { toDate: date().describe("required; end of the window (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate") },
  updatedSince: {
    updatedSince: z
      .string()
      .min(1)
      .max(fieldRules(queryField("updated_since")).maxLen)
      .optional()
      .describe("RFC 3339, or YYYY-MM-DD read as midnight in the account's timezone: only the groups whose PO or draft-PO volume changed after it, in either direction (a group that lost all of it comes back with zeros)"),
  },
  skuIds: { skuIds: repeatable(z.union([z.string().uuid(), z.string().regex(/^[1-9][0-9]{0,15}$/, "a product's integer id or UUID")])) },
  skuStatus: { skuStatus: repeatable(boundedInteger(queryField("sku_status"), "a status")) },
  activePlanning: {
    activePlanning: z
      .enum(["true", "false"])
      .default("true")
      .transform((v) => v === "true")
      .describe("default true"),
  },
  pimCustom: Object.fromEntries(pimCustomNames.map((name) => [name, repeatable().describe(`${name} values; repeatable or comma-separated`)])),
};

function queryParameters(field: DescField): Record<string, z.ZodType> {
  const given = restQuery[field.jsonName];
  if (given) return given;
  if (field.fieldKind === "list" && field.listKind === "scalar" && field.scalar === ScalarType.STRING) return { [field.jsonName]: repeatable() };
  throw new Error(`planning: no REST query parameter for PlannedVolumesQuery.${field.name}`);
}

const volumesQuery = Object.fromEntries(
  PlannedVolumesQuerySchema.fields.flatMap((field) => {
    const description = fieldRules(field).description;
    return Object.entries(queryParameters(field)).map(([name, schema]) => [name, description && !schema.description ? schema.describe(description) : schema] as const);
  }),
);

type VolumesQuery = Record<string, unknown> & { groupBy: keyof typeof groups; updatedSince?: string; skuStatus?: string[] };

/** The filters by their names (a filter not sent is an empty list), and what REST takes differently. */
function toProtoQuery(q: VolumesQuery) {
  return {
    ...(q as unknown as Omit<planningV1.PlannedVolumesQuery, "$typeName" | "$unknown">),
    groupBy: groups[q.groupBy],
    updatedSince: q.updatedSince ?? "",
    skuStatus: (q.skuStatus ?? []).map(Number),
    pimCustom: pimCustomNames.map((name, i) => ({ index: pimCustomIndex.min + i, values: (q[name] as string[] | undefined) ?? [] })).filter((p) => p.values.length),
  };
}

// ---------------------------------------------------------------------------------------------
// Answers: the rows' messages, as REST names them.

/** REST's name of draft_po_volume (its JSON name, draftPoVolume, is wire format). */
const names = { draftPoVolume: "draftPOVolume" };
const plannedVolumeRow = z.object(answerShape(PlannedVolumeRowSchema, { names })).meta({ id: "PlannedVolumeRow" });
const plannedVolumeWarehouseRow = z.object(answerShape(PlannedVolumeWarehouseRowSchema, { names })).meta({ id: "PlannedVolumeWarehouseRow" });
/** toRestJson of the rows, made once (an answer by SKU is tens of thousands of them). */
const restRow = restAnswerOf(PlannedVolumeRowSchema, names);
const restWarehouseRow = restAnswerOf(PlannedVolumeWarehouseRowSchema, names);

// ---------------------------------------------------------------------------------------------
// Stored sales plans (CONTRACT "Sales plans").

const salesPlanWrite = z
  .strictObject({
    key: z.string().min(1).max(500).describe("the product's key"),
    channel: z.number().int().min(1).max(2).describe("1 D2C, 2 B2B"),
    month: z.string().max(7).regex(/^\d{4}-(0[1-9]|1[0-2])$/, "must be a month YYYY-MM").describe("YYYY-MM"),
    volume: z.number().min(0).max(1e12).nullable().describe("units planned for the month (>= 0); null removes the stored plan, and the month's plan is the year-over-year baseline again"),
  })
  .meta({ id: "SalesPlanWrite" });
type SalesPlanWrite = z.infer<typeof salesPlanWrite>;

/** /v2/api/planning -> analytics.planning.v1.PlanningService (answers from planning's replica). */
export function planningRoutes(ctx: RouteContext, planning: Client<typeof planningV1.PlanningService>, catalogue: Client<typeof catalogueV1.CatalogueService>, as: CallAs): void {
  /** The query as proto, its integer product ids as the UUIDs the catalogue knows them by. */
  const protoQuery = async (query: VolumesQuery, caller: Caller) => {
    const q = toProtoQuery(query);
    return q.skuIds?.length ? { ...q, skuIds: await productUuids(catalogue, as(caller), q.skuIds) } : q;
  };
  /** The weak ETag's base of every planning answer: the account's planning data version and its local date (answers change with "today"). */
  const dataVersion = async (caller: Caller) => {
    const { version, today } = await planning.getAccountVersion({}, as(caller));
    return `planning-${version}-${today}`;
  };
  const tag = "Planning";
  const responses400 = { 400: { description: "missing or bad fromDate/toDate or another bad parameter", schema: generalResponseSchema } };
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/planned-volumes",
    summary: "Stock, PO and draft-PO volumes per group over the window fromDate..toDate",
    tag,
    auth: "bearer",
    query: volumesQuery,
    dataVersion,
    responses: { 200: { description: "one row per group, ordered by groupKey", schema: z.array(plannedVolumeRow) }, ...responses400 },
    handler: async ({ query, caller }) => {
      const res = await planning.getPlannedVolumes({ query: await protoQuery(query as VolumesQuery, caller) }, as(caller));
      return res.rows.map(restRow);
    },
  });
  route(ctx, {
    method: "POST",
    url: "/v2/api/planning/sales-plans/batch",
    summary: `Store, replace or remove (volume null) up to ${BATCH_MAX} of the account's sales plans, per SKU key, channel and month; where none is stored, a month's plan is the year-over-year baseline`,
    tag,
    auth: "bearer",
    body: batchOf(salesPlanWrite, BATCH_MAX),
    bodyExample: [
      { key: "SKU-1001-BLK-M", channel: 1, month: "2026-09", volume: 120 },
      { key: "SKU-1001-BLK-M", channel: 2, month: "2026-09", volume: 40.5 },
      { key: "SKU-1001-BLK-L", channel: 1, month: "2026-09", volume: null },
    ],
    responses: {
      ...batchFailureResponses,
      200: {
        description: "one BatchResponse per item, in request order (201 created, 200 updated, removed, or unchanged when sent as stored, 400 invalid, 404 unknown key, 409 the same key, channel and month twice in the request)",
        schema: z.array(batchResponseSchema),
      },
      400: { description: "the body is not an array of 1 to 1000 items", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const results = await runBatch(body, salesPlanWrite, "key", async (valid) => {
        const plans = valid as SalesPlanWrite[];
        const { skus } = await catalogue.resolveSkus({ references: plans.map((p) => ({ key: p.key })) }, as(caller));
        const res = await planning.upsertSalesPlans(
          {
            plans: plans.map((p, i) => ({
              key: p.key,
              skuFound: !!skus[i]?.found,
              skuId: skus[i]?.found ? skus[i].id : "",
              channel: p.channel,
              month: p.month,
              volume: p.volume === null ? undefined : { value: String(p.volume) },
            })),
          },
          as(caller),
        );
        return res.results.map((r) => ({ message: r.message, reference: r.reference, referenceField: r.referenceField, statusCode: r.statusCode }));
      });
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/planned-volumes/by-warehouse",
    summary: "The same volumes per group and warehouse",
    tag,
    auth: "bearer",
    query: volumesQuery,
    dataVersion,
    responses: {
      200: { description: "one row per group and warehouse, ordered by groupKey then warehouseId", schema: z.array(plannedVolumeWarehouseRow) },
      ...responses400,
    },
    handler: async ({ query, caller }) => {
      const res = await planning.getPlannedVolumesByWarehouse({ query: await protoQuery(query as VolumesQuery, caller) }, as(caller));
      return res.rows.map(restWarehouseRow);
    },
  });
}
