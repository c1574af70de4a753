import { z } from "zod";
import { Readable } from "node:stream";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { decimalJson, fieldRules, planningV1, RawJson, type catalogueV1 } from "@analytics/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "@analytics/auth";
import { RETRY_AFTER_SECONDS } from "@analytics/errors";
import { batchOf, repeatable, route, type RouteContext } from "../pipeline/route";
import { BATCH_MAX, runBatch, serverFailure } from "../http/batch";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { dateOnly, wholeNumber } from "../http/values";
import { csvAttachment, CSV_CONTENT_TYPE, csvField, csvLine } from "../http/csv";
import { addLink, afterLink } from "../http/paging";
import { answerShape, restAnswerOf } from "../http/proto-schema";
import { HttpError } from "../http/errors";
import type { RateLimiter } from "../limits/rate-limiter";
import { chunkedAnswer, jsonArrayStream } from "../http/json-stream";
import { dataVersionOf, type CallAs } from "../clients";
import { productUuids } from "./product-ids";

const {
  BreakdownPeriodSchema,
  BreakdownQuerySchema,
  BreakdownRowSchema,
  BreakdownWarehouseRowSchema,
  GroupBy,
  Period,
  PimCustomFilterSchema,
  PlannedVolumeRowSchema,
  PlannedVolumeWarehouseRowSchema,
  PlannedVolumesQuerySchema,
  SalesPlanPeriodSchema,
  SalesPlanRowSchema,
} = planningV1;

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
  // A page of groups (CONTRACT "Pages and CSV"); the descriptions are the fields' rules.
  pageSize: { pageSize: wholeNumber(boundsOf(queryField("page_size")).min, boundsOf(queryField("page_size")).max).optional() },
  after: { after: z.string().max(fieldRules(queryField("after")).maxLen).optional() },
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
// The later revision's query (CONTRACT "Planning: the later revision"): everything planned volumes
// takes, with the same meaning and 400s, plus the period and the channels (BreakdownQuery).

const periods = { month: Period.MONTH, week: Period.WEEK, total: Period.TOTAL } as const;
type PeriodName = keyof typeof periods;
/** Periods of rows (one group's figures for one period) that cost one token of the account's bucket. */
export const CELLS_PER_TOKEN = 1_000;
/** What route.ts charged the request before its handler ran (a read). */
const ROUTE_COST = 1;

/**
 * What a later-revision answer costs of its account's bucket: one token per CELLS_PER_TOKEN
 * periods of its rows (rows × periods), at least a read's 1. The widest (SKUs by warehouse,
 * 106 weeks) costs thousands; a season's year by month 1.
 */
export function answerCost(cells: number): number {
  return Math.max(ROUTE_COST, Math.ceil(cells / CELLS_PER_TOKEN));
}

/** What the document says of an answer's cost and its 429s. */
const COST_NOTE = `Costs max(1, ceil(rows × periods / ${CELLS_PER_TOKEN})) of the account's rate limit, spent as the answer ends. An account that already has its share of planning answers running gets a 429 with Retry-After.`;

/** Spends `cost` of the account's bucket, or what it holds when that is less (the answer was already given). */
async function spendUpTo(limiter: RateLimiter, accountId: string, cost: number): Promise<void> {
  if (cost <= 0) return;
  const d = await limiter.spend(accountId, cost);
  if (d && !d.allowed && d.remaining > 0) await limiter.spend(accountId, d.remaining);
}

/** nginx's status for a request whose client left before its answer: only the log line sees it. */
/**
 * The planned-volumes endpoints are deprecated since 2026-11-27, when the breakdowns replaced
 * them, and end on 2027-06-30 (docs/planning.md): every answer says so, with the route that
 * replaces each (RFC 9745 Deprecation, RFC 8594 Sunset, RFC 8288 successor-version).
 */
const DEPRECATED_AT = Date.UTC(2026, 10, 27) / 1000;
const SUNSET = new Date(Date.UTC(2027, 5, 30)).toUTCString();
const deprecation = (successor: string) => ({ Deprecation: `@${DEPRECATED_AT}`, Sunset: SUNSET, Link: `<${successor}>; rel="successor-version"` });
const deprecationHeaders = (successor: string) => ({
  Deprecation: { description: `RFC 9745: deprecated since ${new Date(DEPRECATED_AT * 1000).toISOString().slice(0, 10)} (a structured date, @<Unix seconds>)`, schema: { type: "string", example: `@${DEPRECATED_AT}` } },
  Sunset: { description: "RFC 8594: the endpoint is removed after this HTTP date", schema: { type: "string", example: SUNSET } },
  Link: {
    description: `RFC 8288: the route that replaces it, rel="successor-version" (${successor}); with pageSize, while groups remain after the page, also rel="next": this request with after=<the page's last groupKey>`,
    schema: { type: "string" },
  },
});

const CLIENT_CLOSED_REQUEST = 499;
/** Why a call is cancelled when its client left (one shared error: no stack trace per request). */
const CLIENT_LEFT = new ConnectError("the client closed the request", Code.Canceled);

/** More periods than this (about two years of weeks) is a 400: an answer by SKU grows with them. */
export const MAX_PERIODS = 106;
const DAY_MS = 86_400_000;

/** How many whole periods overlap [fromDate, toDate] (YYYY-MM-DD, fromDate not after toDate). */
export function periodsIn(period: PeriodName, fromDate: string, toDate: string): number {
  if (period === "total") return 1;
  const [fy, fm] = fromDate.split("-").map(Number);
  const [ty, tm] = toDate.split("-").map(Number);
  if (period === "month") return (ty - fy) * 12 + (tm - fm) + 1;
  /** The Monday of an ISO week, as UTC milliseconds. */
  const monday = (date: string) => {
    const t = Date.parse(`${date}T00:00:00Z`);
    return t - ((new Date(t).getUTCDay() + 6) % 7) * DAY_MS;
  };
  return Math.round((monday(toDate) - monday(fromDate)) / (7 * DAY_MS)) + 1;
}

const channelsField = BreakdownQuerySchema.fields.find((f) => f.name === "channels")!;
const breakdownQuery = {
  ...volumesQuery,
  fromDate: dateOnly().describe(
    "required; the window's first day, YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it): every period overlapping fromDate..toDate is answered, whole",
  ),
  toDate: dateOnly().describe("required; the window's last day (inclusive), YYYY-MM-DD (or an RFC 3339 timestamp, read as the date written in it), not before fromDate"),
  period: z
    .enum(["month", "week", "total"])
    .default("month")
    .describe(`calendar months (default), ISO weeks (Monday first) or total (one period: the window itself), in the account's timezone; at most ${MAX_PERIODS} periods`),
  channel: repeatable(boundedInteger(channelsField, "a channel")).describe("1 (D2C), 2 (B2B); repeatable or comma-separated; default both. Narrows the sales figures only"),
};

type BreakdownRestQuery = VolumesQuery & { period: PeriodName; channel?: string[]; fromDate: string; toDate: string };

/** A window of more periods than MAX_PERIODS is a 400 naming toDate (fromDate..toDate is the window). */
function refuseLongWindow({ period, fromDate, toDate }: BreakdownRestQuery): void {
  if (fromDate > toDate) return; // the service's 400: toDate must not be before fromDate
  const count = periodsIn(period, fromDate, toDate);
  if (count <= MAX_PERIODS) return;
  const details = [{ path: "toDate", message: `makes ${count} ${period === "week" ? "weeks" : "months"} from fromDate; at most ${MAX_PERIODS} periods (a shorter window or a longer period)` }];
  throw new HttpError(400, `invalid query: toDate: ${details[0].message}`, details);
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

/**
 * A row's REST JSON writer, made once (a by-SKU answer holds millions of periods): the message's
 * fields in their order under REST's names, text as JSON strings, Decimals as JSON numbers of
 * their exact digits, unset as null, `periods` each by `period`'s writer. Text is built
 * directly: no object per period, no marked strings to replace after JSON.stringify.
 */
function restJsonOf(desc: DescMessage, omit: readonly string[] = [], period?: (p: object) => string) {
  const fields = desc.fields
    .filter((f) => !omit.includes(f.jsonName))
    .map((f, i) => ({ prefix: `${i ? "," : "{"}${JSON.stringify(names[f.jsonName as keyof typeof names] ?? f.jsonName)}:`, local: f.localName, kind: f.fieldKind }));
  return (message: object): string => {
    const m = message as Record<string, unknown>;
    let out = "";
    for (const f of fields) {
      const v = m[f.local];
      out += f.prefix;
      if (f.kind === "list") out += `[${(v as object[]).map(period!).join(",")}]`;
      else if (v === undefined) out += "null";
      else if (f.kind === "message") out += decimalJson((v as { value: string }).value || "0");
      else out += JSON.stringify(v);
    }
    return `${out}}`;
  };
}

/** What each figure is, for the document (CONTRACT "Planning: the later revision"). */
const figures: Record<string, string> = {
  periodStart: "the period's first day, YYYY-MM-DD",
  periodEnd: "the period's last day (inclusive), YYYY-MM-DD",
  salesPlanVolume:
    "units planned: the stored plan of the SKU, channel and month (a week: its days' share of its months' plans), else the year-over-year baseline (net units sold in the same month a year earlier, times 1 + salesPlanGrowth)",
  salesActualVolume: "net units sold (sale items minus return items) of transactions created in the period and not cancelled, in the selected channels",
  storedPlanShare: "0..1: the part of salesPlanVolume that comes from stored plans rather than the baseline",
  openingStockVolume: "the projection's opening stock: the current stock in the current period, the previous period's closing after it; null in periods that ended before the current one",
  poVolume: "open quantity of non-cancelled, non-draft PO lines delivered in the period",
  draftPOVolume: "open quantity of draft PO lines delivered in the period",
  closingStockVolume:
    "openingStockVolume + poVolume + draftPOVolume - the remaining plan (in the current period max(0, salesPlanVolume - salesActualVolume), later the whole plan); may be below zero; null in periods that ended before the current one",
  targetStockVolume: "the sum of the stock triggers' min over the group's SKU and warehouse pairs (0 where none); null in periods that ended before the current one",
  openToBuyVolume: "max(0, remaining plan + targetStockVolume - openingStockVolume - poVolume): what is still to buy; null in periods that ended before the current one",
  transferInVolume: "open distribution-order quantity (quantity - deliveredQuantity, rows neither COMPLETED nor CANCELLED) into the warehouse, delivered in the period; part of its closing stock",
  transferOutVolume: "open distribution-order quantity out of the warehouse, delivered in the period; part of its closing stock",
};
const withFigures = (shape: Record<string, z.ZodType>) => Object.fromEntries(Object.entries(shape).map(([name, schema]) => [name, figures[name] ? schema.describe(figures[name]) : schema]));

/** Periods of a breakdown by group: no transfers (those are a warehouse's). */
const TRANSFERS = ["transferInVolume", "transferOutVolume"];
const salesPlanPeriod = z.object(withFigures(answerShape(SalesPlanPeriodSchema))).meta({ id: "SalesPlanPeriod" });
const breakdownPeriod = z.object(withFigures(answerShape(BreakdownPeriodSchema, { names, omit: TRANSFERS }))).meta({ id: "BreakdownPeriod" });
const breakdownWarehousePeriod = z.object(withFigures(answerShape(BreakdownPeriodSchema, { names }))).meta({ id: "BreakdownWarehousePeriod" });
const groupKey = z.string().describe("the season, productGroupId, variantGroupId or SKU key");
const periodsOf = (period: z.ZodType) => z.array(period).describe("one entry per period overlapping fromDate..toDate, in order, none left out");
const salesPlanRow = z
  .object(answerShape(SalesPlanRowSchema, { fields: { groupKey, channel: z.number().int().describe("1 D2C, 2 B2B"), periods: periodsOf(salesPlanPeriod) } }))
  .meta({ id: "SalesPlanRow" });
const breakdownRow = z.object(answerShape(BreakdownRowSchema, { fields: { groupKey, periods: periodsOf(breakdownPeriod) } })).meta({ id: "BreakdownRow" });
const breakdownWarehouseRow = z
  .object(
    answerShape(BreakdownWarehouseRowSchema, {
      fields: { groupKey, warehouseId: z.string().describe('the warehouse ID; "" for volume without a (known) warehouse'), periods: periodsOf(breakdownWarehousePeriod) },
    }),
  )
  .meta({ id: "BreakdownWarehouseRow" });

// Each row as RawJson, placed into the answer as it is.
const restSalesPlanRow = restRowOf(SalesPlanRowSchema, restJsonOf(SalesPlanPeriodSchema));
const restBreakdownRow = restRowOf(BreakdownRowSchema, restJsonOf(BreakdownPeriodSchema, TRANSFERS));
const restBreakdownWarehouseRow = restRowOf(BreakdownWarehouseRowSchema, restJsonOf(BreakdownPeriodSchema));
function restRowOf(desc: DescMessage, period: (p: object) => string) {
  const row = restJsonOf(desc, [], period);
  return (r: object) => new RawJson(row(r));
}

// ---------------------------------------------------------------------------------------------
// CSV (CONTRACT "Pages and CSV"): one line per row and period, the row's keys first, then the
// period's fields in the JSON order, under REST's names; null is an empty field.

const JSON_TYPE = "application/json";
const CSV_TYPE = "text/csv";
/** What every planning answer is served as (route.ts negotiates): JSON by default, or CSV. */
const FORMATS = [JSON_TYPE, CSV_TYPE] as const;

/** A message's fields as CSV cells under REST's names, made once: Decimals as their digits, text quoted as RFC 4180 needs. */
function csvCellsOf(desc: DescMessage, omit: readonly string[] = []) {
  const fields = desc.fields
    .filter((f) => !omit.includes(f.jsonName))
    .map((f) => ({ rest: names[f.jsonName as keyof typeof names] ?? f.jsonName, local: f.localName, decimal: f.fieldKind === "message" }));
  return {
    names: fields.map((f) => f.rest),
    /** The message's cells, comma-separated (no line end). */
    cells(message: object): string {
      const m = message as Record<string, unknown>;
      let out = "";
      for (let i = 0; i < fields.length; i++) {
        const v = m[fields[i].local];
        if (i) out += ",";
        if (v !== undefined) out += fields[i].decimal ? (v as { value: string }).value || "0" : csvField(v as string | number | bigint);
      }
      return out;
    },
  };
}

/**
 * The CSV of one answer: its header row, and a row's lines (one per period, its keys repeated;
 * a row without periods, planned volumes', is one line).
 */
function csvOf<R extends object>(rowDesc: DescMessage, periodDesc?: DescMessage, omit: readonly string[] = []) {
  const keys = csvCellsOf(rowDesc, ["periods"]);
  const period = periodDesc && csvCellsOf(periodDesc, omit);
  const header = csvLine([...keys.names, ...(period?.names ?? [])]);
  return {
    header,
    lines(row: R): string {
      const k = keys.cells(row);
      if (!period) return k + "\r\n";
      let out = "";
      for (const p of (row as { periods: object[] }).periods) out += k + "," + period.cells(p) + "\r\n";
      return out;
    },
    /** A REST-shaped answer (the document's example) in this CSV, each cell looked up by its header name. */
    example(rows: Record<string, unknown>[]): string {
      const line = (values: Record<string, unknown>) => csvLine([...keys.names, ...(period?.names ?? [])].map((n) => values[n] as string | number | null));
      return header + rows.flatMap((r) => (period ? (r.periods as object[]).map((p) => line({ ...r, ...p })) : [line(r)])).join("");
    },
  };
}
type CsvOf<R extends object> = ReturnType<typeof csvOf<R>>;

const salesPlanCsv = csvOf<planningV1.SalesPlanRow>(SalesPlanRowSchema, SalesPlanPeriodSchema);
const breakdownCsv = csvOf<planningV1.BreakdownRow>(BreakdownRowSchema, BreakdownPeriodSchema, TRANSFERS);
const breakdownWarehouseCsv = csvOf<planningV1.BreakdownWarehouseRow>(BreakdownWarehouseRowSchema, BreakdownPeriodSchema);
const plannedVolumeCsv = csvOf<planningV1.PlannedVolumeRow>(PlannedVolumeRowSchema);
const plannedVolumeWarehouseCsv = csvOf<planningV1.PlannedVolumeWarehouseRow>(PlannedVolumeWarehouseRowSchema);

/** The 200's CSV alternative in the document, its example the JSON example's rows. */
const csvAlternative = (csv: { example(rows: Record<string, unknown>[]): string }, example: Record<string, unknown>[]) => ({
  [CSV_TYPE]: {
    description:
      "With Accept: text/csv: the same rows as CSV (RFC 4180, UTF-8, a header row, Content-Disposition: attachment), one line per row and period: the row's keys, then periodStart, periodEnd and each volume in the JSON order; null is an empty field; a text starting with =, +, -, @, tab or CR (a formula to a spreadsheet) starts with an apostrophe",
    example: csv.example(example),
  },
});
const notAcceptable = { 406: { description: "Accept takes neither application/json nor text/csv", schema: generalResponseSchema } };
/** The 200's Link header: the next page's, and a deprecated route's successor. */
const nextLinkHeader = {
  description: 'RFC 8288: with pageSize, while groups remain after the page, rel="next": this request with after=<the page\'s last groupKey>',
  schema: { type: "string", example: '</v2/api/planning/breakdown?fromDate=2026-03-01&toDate=2026-04-30&groupBy=skus&pageSize=500&after=SKU-1001-BLK-M>; rel="next"' },
};
const PAGE_NOTE =
  "With pageSize (1-10000 groups; a group is a groupKey with all its rows), the first pageSize groups in groupKey order after `after` (exclusive), and while groups remain a Link rel=\"next\" header to the next page. With Accept: text/csv, CSV (one line per row and period).";

// Realistic answers for the document: March and April 2026 by season, March the current month.
const march = { periodStart: "2026-03-01", periodEnd: "2026-03-31" };
const april = { periodStart: "2026-04-01", periodEnd: "2026-04-30" };
const salesPlansExample = [
  { groupKey: "SS26", channel: 1, periods: [{ ...march, salesPlanVolume: 1240, salesActualVolume: 1012, storedPlanShare: 0.75 }, { ...april, salesPlanVolume: 1380.5, salesActualVolume: 0, storedPlanShare: 1 }] },
  { groupKey: "SS26", channel: 2, periods: [{ ...march, salesPlanVolume: 310, salesActualVolume: 295, storedPlanShare: 0 }, { ...april, salesPlanVolume: 0, salesActualVolume: 0, storedPlanShare: 0 }] },
];
const breakdownExample = [
  {
    groupKey: "SS26",
    periods: [
      { ...march, openingStockVolume: 2400, salesPlanVolume: 1550, salesActualVolume: 1307, poVolume: 600, draftPOVolume: 200, closingStockVolume: 2957, targetStockVolume: 800, openToBuyVolume: 0 },
      { ...april, openingStockVolume: 2957, salesPlanVolume: 1380.5, salesActualVolume: 0, poVolume: 0, draftPOVolume: 0, closingStockVolume: 1576.5, targetStockVolume: 800, openToBuyVolume: 0 },
    ],
  },
];
const breakdownByWarehouseExample = [
  {
    groupKey: "SS26",
    warehouseId: "0b9e0c4e-8f5d-4a53-9f3e-2d1c7a6b5e41",
    warehouseName: "Stockholm DC",
    periods: [
      { ...march, openingStockVolume: 1800, salesPlanVolume: 1100, salesActualVolume: 950, poVolume: 600, draftPOVolume: 0, closingStockVolume: 2200, targetStockVolume: 500, openToBuyVolume: 0, transferInVolume: 0, transferOutVolume: 50 },
      { ...april, openingStockVolume: 2200, salesPlanVolume: 980, salesActualVolume: 0, poVolume: 0, draftPOVolume: 0, closingStockVolume: 1220, targetStockVolume: 500, openToBuyVolume: 0, transferInVolume: 0, transferOutVolume: 0 },
    ],
  },
];

const plannedVolumesExample = [
  { groupKey: "AW26", stockVolume: 5200, poVolume: 1800, draftPOVolume: 400 },
  { groupKey: "SS26", stockVolume: 2400, poVolume: 600, draftPOVolume: 200 },
];
const plannedVolumesByWarehouseExample = [
  { groupKey: "SS26", warehouseId: "", warehouseName: "", stockVolume: 0, poVolume: 0, draftPOVolume: 200 },
  { groupKey: "SS26", warehouseId: "0b9e0c4e-8f5d-4a53-9f3e-2d1c7a6b5e41", warehouseName: "Stockholm DC", stockVolume: 2400, poVolume: 600, draftPOVolume: 0 },
];

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

/**
 * /v2/api/planning -> analytics.planning.v1.PlanningService (answers from planning's replica).
 * `queryTimeoutMs`: how long the service may compute a breakdown (PLANNING_QUERY_TIMEOUT_MS).
 */
export function planningRoutes(
  ctx: RouteContext,
  planning: Client<typeof planningV1.PlanningService>,
  catalogue: Client<typeof catalogueV1.CatalogueService>,
  as: CallAs,
  queryTimeoutMs: number,
): void {
  /** The query as proto, its integer product ids as the UUIDs the catalogue knows them by. */
  const protoQuery = async (query: VolumesQuery, caller: Caller) => {
    const q = toProtoQuery(query);
    return q.skuIds?.length ? { ...q, skuIds: await productUuids(catalogue, as(caller), q.skuIds) } : q;
  };
  /** The later revision's query as proto: the volumes query, the period and the channels (sorted, once each). */
  const breakdownProtoQuery = async ({ period, channel, ...volumes }: BreakdownRestQuery, caller: Caller) => ({
    volumes: await protoQuery(volumes as VolumesQuery, caller),
    period: periods[period],
    channels: [...new Set((channel ?? []).map(Number))].sort(),
  });
  /**
   * A later-revision answer: its rows streamed into the JSON array chunk by chunk as the service
   * sends them (an answer by SKU and week is never held whole); each chunk within a call's
   * deadline, the first within the service's statement timeout more, as the whole statement runs
   * before it (so that the service's own 503 at its timeout comes first). A client that leaves
   * cancels the call, also while the statement runs (the service then cancels it). The service's
   * refusal of an account over its share of planning (RESOURCE_EXHAUSTED) is a 429 with
   * Retry-After. The answer costs its size (answerCost) of the account's bucket, of which the
   * route paid 1 before: the rest is spent before the answer's end reaches the client, or when
   * the client leaves, for what was sent.
   */
  const streamed = async <R extends { periods: unknown[] }>(
    caller: Caller,
    call: (options: CallOptions) => AsyncIterable<{ rows: R[]; nextAfter?: string }>,
    encoding: { toRest: (row: R) => unknown; csv: CsvOf<R>; file: string },
    format: string | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => {
    const options = as(caller);
    const gone = new AbortController();
    reply.raw.once("close", () => gone.abort(CLIENT_LEFT));
    let cells = 0;
    const started = (signal: AbortSignal) => call({ ...options, timeoutMs: undefined, signal: AbortSignal.any([signal, gone.signal]) });
    const timeouts = { idleTimeoutMs: options.timeoutMs, firstTimeoutMs: queryTimeoutMs + options.timeoutMs };
    const csv = format === CSV_TYPE;
    const answer = await (csv
      ? chunkedAnswer(
          started,
          (chunk) => {
            let text = "";
            for (const row of chunk.rows) {
              cells += row.periods.length;
              text += encoding.csv.lines(row);
            }
            return [Buffer.from(text)];
          },
          () => [],
          timeouts,
        )
      : jsonArrayStream(
          started,
          (chunk) =>
            chunk.rows.map((row) => {
              cells += row.periods.length;
              return encoding.toRest(row);
            }),
          timeouts,
        )
    ).catch((error: unknown) => {
      if (gone.signal.aborted) throw new HttpError(CLIENT_CLOSED_REQUEST, "the client closed the request");
      if (error instanceof ConnectError && error.code === Code.ResourceExhausted) {
        throw new HttpError(429, error.rawMessage, undefined, { "Retry-After": String(RETRY_AFTER_SECONDS) });
      }
      throw error;
    });
    const limiter = ctx.rateLimiter;
    async function* charged() {
      try {
        if (csv) yield Buffer.from(encoding.csv.header);
        yield* answer.body;
      } finally {
        if (limiter) await spendUpTo(limiter, caller.accountId, answerCost(cells) - ROUTE_COST);
      }
    }
    // Known before the first row: every chunk of a page says whether a page follows.
    if (answer.first?.nextAfter !== undefined) addLink(reply, afterLink(request, answer.first.nextAfter));
    if (csv) reply.type(CSV_CONTENT_TYPE).header("Content-Disposition", csvAttachment(encoding.file));
    else reply.type("application/json; charset=utf-8");
    return reply.send(Readable.from(charged(), { objectMode: false }));
  };
  /**
   * A planned-volumes answer (unary: whole in both processes, as before pages): JSON or CSV, and a
   * page's next link.
   */
  const volumes = <R extends object>(res: { rows: R[]; nextAfter?: string }, toRest: (row: R) => unknown, csv: CsvOf<R>, file: string, format: string | undefined, request: FastifyRequest, reply: FastifyReply) => {
    if (res.nextAfter !== undefined) addLink(reply, afterLink(request, res.nextAfter));
    if (format !== CSV_TYPE) return res.rows.map(toRest);
    return reply.type(CSV_CONTENT_TYPE).header("Content-Disposition", csvAttachment(file)).send(csv.header + res.rows.map((r) => csv.lines(r)).join(""));
  };
  /** The weak ETag's base of every planning answer: the account's planning data version and its local date (answers change with "today"). */
  const dataVersion = dataVersionOf(as, { planning });
  const tag = "Planning";
  const responses400 = { 400: { description: "missing or bad fromDate/toDate or another bad parameter", schema: generalResponseSchema } };
  const breakdown400 = {
    400: { description: `missing or bad fromDate/toDate, a bad period or channel, a window of more than ${MAX_PERIODS} periods, or another bad parameter`, schema: generalResponseSchema },
  };
  const later = "the later revision's GET /planning/breakdown (per period) replaces it; served unchanged for clients of the first revision";
  /** A later-revision answer's statuses: the rows as JSON (with the example) or CSV, a page's next Link, and its 400s and 406. */
  const laterResponses = <R extends object>(description: string, row: z.ZodType, example: Record<string, unknown>[], csv: CsvOf<R>) => ({
    200: { description, schema: z.array(row), example, alternatives: csvAlternative(csv, example), headers: { Link: nextLinkHeader } },
    ...breakdown400,
    ...notAcceptable,
  });
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/sales-plans",
    summary: "Sales plan and sales actuals per group, channel and period (month, ISO week or the whole window)",
    description:
      `One row per group and channel, each with every period overlapping fromDate..toDate (whole periods, the account's timezone). salesPlanVolume is the stored plan where the account stored one (POST /planning/sales-plans/batch), else the year-over-year baseline; salesActualVolume is net units sold. Streamed; without pageSize the whole answer. ${PAGE_NOTE} ${COST_NOTE}`,
    tag,
    auth: "bearer",
    query: breakdownQuery,
    dataVersion,
    formats: FORMATS,
    responses: laterResponses("one row per group and channel, ordered by groupKey then channel", salesPlanRow, salesPlansExample, salesPlanCsv),
    handler: async ({ query, caller, format }, req, reply) => {
      const q = query as unknown as BreakdownRestQuery;
      refuseLongWindow(q);
      const request = { query: await breakdownProtoQuery(q, caller) };
      return streamed(caller, (options) => planning.getSalesPlans(request, options), { toRest: restSalesPlanRow, csv: salesPlanCsv, file: "sales-plans" }, format, req, reply);
    },
  });
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/breakdown",
    summary: "Per group and period: sales plan and actuals, PO and draft-PO volumes, and the stock projection (opening, closing, target, open-to-buy)",
    description:
      `One row per group, each with every period overlapping fromDate..toDate (whole periods, the account's timezone), summed over the group's SKUs and the selected channels. The projection starts at the current period with the current stock and runs forward (closing = opening + poVolume + draftPOVolume - remaining plan); periods that ended before the current one carry sales and PO figures only. With period=total, poVolume and draftPOVolume equal GET /planning/planned-volumes for the same query. Streamed; without pageSize the whole answer. ${PAGE_NOTE} ${COST_NOTE}`,
    tag,
    auth: "bearer",
    query: breakdownQuery,
    dataVersion,
    formats: FORMATS,
    responses: laterResponses("one row per group, ordered by groupKey", breakdownRow, breakdownExample, breakdownCsv),
    handler: async ({ query, caller, format }, req, reply) => {
      const q = query as unknown as BreakdownRestQuery;
      refuseLongWindow(q);
      const request = { query: await breakdownProtoQuery(q, caller) };
      return streamed(caller, (options) => planning.getBreakdown(request, options), { toRest: restBreakdownRow, csv: breakdownCsv, file: "breakdown" }, format, req, reply);
    },
  });
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/breakdown/by-warehouse",
    summary: "The breakdown per group and warehouse, with distribution-order transfers in and out",
    description:
      `One row per group and warehouse. A SKU's plan and actuals are split over warehouses by each one's share of the SKU's units shipped in the 12 months before today (equally over the warehouses holding its stock without shipments; under warehouseId "" without stock). Open distribution-order quantity enters the closing stock as transferInVolume and transferOutVolume. Every volume but openToBuyVolume sums over a group's warehouses to its breakdown row. Streamed; without pageSize the whole answer. ${PAGE_NOTE} ${COST_NOTE}`,
    tag,
    auth: "bearer",
    query: breakdownQuery,
    dataVersion,
    responses: laterResponses("one row per group and warehouse, ordered by groupKey then warehouseId", breakdownWarehouseRow, breakdownByWarehouseExample, breakdownWarehouseCsv),
    formats: FORMATS,
    handler: async ({ query, caller, format }, req, reply) => {
      const q = query as unknown as BreakdownRestQuery;
      refuseLongWindow(q);
      const request = { query: await breakdownProtoQuery(q, caller) };
      return streamed(
        caller,
        (options) => planning.getBreakdownByWarehouse(request, options),
        { toRest: restBreakdownWarehouseRow, csv: breakdownWarehouseCsv, file: "breakdown-by-warehouse" },
        format,
        req,
        reply,
      );
    },
  });
  route(ctx, {
    method: "GET",
    url: "/v2/api/planning/planned-volumes",
    summary: "Stock, PO and draft-PO volumes per group over the window fromDate..toDate",
    description: `Stock, PO and draft-PO volumes per group over the window fromDate..toDate. Without pageSize the whole answer. ${PAGE_NOTE} Deprecated: ${later}.`,
    deprecated: true,
    tag,
    auth: "bearer",
    query: volumesQuery,
    dataVersion,
    formats: FORMATS,
    responses: {
      200: {
        description: "one row per group, ordered by groupKey",
        schema: z.array(plannedVolumeRow),
        example: plannedVolumesExample,
        alternatives: csvAlternative(plannedVolumeCsv, plannedVolumesExample),
        headers: deprecationHeaders("/v2/api/planning/breakdown"),
      },
      ...responses400,
      ...notAcceptable,
    },
    answerHeaders: deprecation("/v2/api/planning/breakdown"),
    handler: async ({ query, caller, format }, req, reply) => {
      const res = await planning.getPlannedVolumes({ query: await protoQuery(query as VolumesQuery, caller) }, as(caller));
      return volumes(res, restRow, plannedVolumeCsv, "planned-volumes", format, req, reply);
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
    description: `The same volumes per group and warehouse. Without pageSize the whole answer. ${PAGE_NOTE} Deprecated: the later revision's GET /planning/breakdown/by-warehouse replaces it; served unchanged for clients of the first revision.`,
    deprecated: true,
    tag,
    auth: "bearer",
    query: volumesQuery,
    dataVersion,
    responses: {
      200: {
        description: "one row per group and warehouse, ordered by groupKey then warehouseId",
        schema: z.array(plannedVolumeWarehouseRow),
        example: plannedVolumesByWarehouseExample,
        alternatives: csvAlternative(plannedVolumeWarehouseCsv, plannedVolumesByWarehouseExample),
        headers: deprecationHeaders("/v2/api/planning/breakdown/by-warehouse"),
      },
      ...responses400,
      ...notAcceptable,
    },
    formats: FORMATS,
    answerHeaders: deprecation("/v2/api/planning/breakdown/by-warehouse"),
    handler: async ({ query, caller, format }, req, reply) => {
      const res = await planning.getPlannedVolumesByWarehouse({ query: await protoQuery(query as VolumesQuery, caller) }, as(caller));
      return volumes(res, restWarehouseRow, plannedVolumeWarehouseCsv, "planned-volumes-by-warehouse", format, req, reply);
    },
  });
}
