import { planningV1 } from "@analytics/contracts";
import { ScalarType, type DescField } from "@bufbuild/protobuf";
import { fieldRules } from "@analytics/contracts";
import { isIntegerId, isUuid } from "@analytics/db";
import { invalid, type FieldViolation } from "@analytics/errors";
import { reportedPeriods, type PeriodKind } from "./periods";

const { GroupBy, PimCustomFilterSchema, PlannedVolumesQuerySchema } = planningV1;

/** A field's inclusive bounds (its rules, proto/planning/v1/planning.proto). */
function boundsOf(fields: readonly DescField[], name: string): { min: number; max: number } {
  const { min, max } = fieldRules(fields.find((f) => f.name === name)!);
  return { min: Number(min), max: Number(max) };
}
const skuStatus = boundsOf(PlannedVolumesQuerySchema.fields, "sku_status");
const pimCustomIndex = boundsOf(PimCustomFilterSchema.fields, "index");
const pageSize = boundsOf(PlannedVolumesQuerySchema.fields, "page_size");
const afterMaxLen = fieldRules(PlannedVolumesQuerySchema.fields.find((f) => f.name === "after")!).maxLen;
/** Statuses without a filter: every one but 1 (inactive). */
const DEFAULT_SKU_STATUS = Array.from({ length: skuStatus.max - skuStatus.min + 1 }, (_, i) => skuStatus.min + i).filter((s) => s !== 1);

export type GroupByName = "seasons" | "products" | "variants" | "skus";

/**
 * The SKU filters: the PlannedVolumesQuery's lists and activePlanning as sent (defaults filled in),
 * but pimCustom by index 0..9 = pimCustom1..pimCustom10.
 */
export type VolumeFilters = Omit<planningV1.PlannedVolumesQuery, "$typeName" | "$unknown" | "groupBy" | "fromDate" | "toDate" | "updatedSince" | "activePlanning" | "pimCustom" | "pageSize" | "after"> & {
  activePlanning: boolean;
  pimCustom: string[][];
};

export interface VolumeQuery {
  groupBy: GroupByName;
  fromDate: string;
  toDate: string;
  /** An instant (RFC 3339) or a date read as midnight in the account's timezone. */
  updatedSince?: { instant: string } | { date: string };
  filters: VolumeFilters;
  /** A page of groups (CONTRACT "Pages and CSV"); absent: the whole answer. */
  page?: Page;
}

/** At most `size` groups whose key is after `after` (absent: from the first group). */
export interface Page {
  size: number;
  after?: string;
}

const groupNames: Record<number, GroupByName | undefined> = {
  [GroupBy.UNSPECIFIED]: "seasons",
  [GroupBy.SEASONS]: "seasons",
  [GroupBy.PRODUCTS]: "products",
  [GroupBy.VARIANTS]: "variants",
  [GroupBy.SKUS]: "skus",
};

/** A real calendar date YYYY-MM-DD (2026-02-30 is not one). */
export function isDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export function isRfc3339(value: string): boolean {
  return RFC3339.test(value) && isDate(value.slice(0, 10)) && !Number.isNaN(Date.parse(value.replace(" ", "T")));
}

/** The query's repeated text fields (seasons, skus, brands...): each a filter of the same name, empty when not sent. */
const TEXT_FILTERS = PlannedVolumesQuerySchema.fields.filter((f) => f.fieldKind === "list" && f.listKind === "scalar" && f.scalar === ScalarType.STRING).map((f) => f.localName);

function textFilters(req: planningV1.PlannedVolumesQuery): Omit<VolumeFilters, "skuStatus" | "activePlanning" | "pimCustom"> {
  const given = req as unknown as Record<string, string[] | undefined>;
  return Object.fromEntries(TEXT_FILTERS.map((name) => [name, given[name] ?? []])) as Omit<VolumeFilters, "skuStatus" | "activePlanning" | "pimCustom">;
}

/** The request as the repository takes it, or a 400 naming every bad field. */
export function volumeQueryOf(q: planningV1.PlannedVolumesQuery | undefined): VolumeQuery {
  const req = q ?? ({} as planningV1.PlannedVolumesQuery);
  const details: FieldViolation[] = [];
  const groupBy = groupNames[req.groupBy ?? 0];
  if (!groupBy) details.push({ path: "groupBy", message: "must be one of seasons, products, variants, skus" });
  const fromDate = req.fromDate ?? "";
  const toDate = req.toDate ?? "";
  if (!fromDate) details.push({ path: "fromDate", message: "is required (YYYY-MM-DD)" });
  else if (!isDate(fromDate)) details.push({ path: "fromDate", message: "must be a date YYYY-MM-DD" });
  if (!toDate) details.push({ path: "toDate", message: "is required (YYYY-MM-DD)" });
  else if (!isDate(toDate)) details.push({ path: "toDate", message: "must be a date YYYY-MM-DD" });
  if (isDate(fromDate) && isDate(toDate) && fromDate > toDate) details.push({ path: "toDate", message: "must not be before fromDate" });
  let updatedSince: VolumeQuery["updatedSince"];
  if (req.updatedSince) {
    if (isDate(req.updatedSince)) updatedSince = { date: req.updatedSince };
    else if (isRfc3339(req.updatedSince)) updatedSince = { instant: new Date(Date.parse(req.updatedSince.replace(" ", "T"))).toISOString() };
    else details.push({ path: "updatedSince", message: "must be an RFC 3339 timestamp or a date YYYY-MM-DD" });
  }
  (req.skuStatus ?? []).forEach((s, i) => {
    if (!Number.isInteger(s) || s < skuStatus.min || s > skuStatus.max) details.push({ path: `skuStatus[${i}]`, message: `must be an integer from ${skuStatus.min} to ${skuStatus.max}` });
  });
  (req.skuIds ?? []).forEach((id, i) => {
    if (!isUuid(id) && !isIntegerId(id)) details.push({ path: `skuIds[${i}]`, message: "must be a product's UUID or integer id" });
  });
  const pimCustom: string[][] = Array.from({ length: pimCustomIndex.max }, () => []);
  for (const p of req.pimCustom ?? []) {
    if (p.index < pimCustomIndex.min || p.index > pimCustomIndex.max) details.push({ path: `pimCustom${p.index}`, message: `there are pimCustom${pimCustomIndex.min} to pimCustom${pimCustomIndex.max}` });
    else pimCustom[p.index - 1].push(...p.values);
  }
  if (req.pageSize !== undefined && !(Number.isInteger(req.pageSize) && req.pageSize >= pageSize.min && req.pageSize <= pageSize.max)) {
    details.push({ path: "pageSize", message: `must be an integer from ${pageSize.min} to ${pageSize.max}` });
  }
  if (req.after !== undefined && req.pageSize === undefined) details.push({ path: "after", message: "is a page's start: send it with pageSize" });
  if (req.after !== undefined && [...req.after].length > afterMaxLen) details.push({ path: "after", message: `must be at most ${afterMaxLen} characters` });
  if (details.length) throw invalid(`invalid planning request: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}`, details);
  return {
    groupBy: groupBy!,
    fromDate,
    toDate,
    updatedSince,
    page: req.pageSize === undefined ? undefined : { size: req.pageSize, after: req.after },
    filters: {
      ...textFilters(req),
      skuStatus: req.skuStatus?.length ? req.skuStatus : DEFAULT_SKU_STATUS,
      activePlanning: req.activePlanning ?? true,
      pimCustom,
    },
  };
}

/** A breakdown request (sales plans, breakdown, by warehouse). */
export interface BreakdownQuery {
  volumes: VolumeQuery;
  period: PeriodKind;
  /** 1 D2C, 2 B2B: at least one. */
  channels: number[];
}

/** The most periods one answer reports (the gateway checks the same). */
export const MAX_PERIODS = 106;

const periodNames: Record<number, "month" | "week" | "total" | undefined> = {
  [planningV1.Period.UNSPECIFIED]: "month",
  [planningV1.Period.MONTH]: "month",
  [planningV1.Period.WEEK]: "week",
  [planningV1.Period.TOTAL]: "total",
};

/**
 * A breakdown request (sales plans, breakdown, by warehouse) as breakdown.ts takes it, or a 400
 * naming the field: the planned-volumes query's own checks, then period, channels, and at most
 * MAX_PERIODS periods in the window.
 */
export function breakdownQueryOf(q: planningV1.BreakdownQuery | undefined): BreakdownQuery {
  const details: FieldViolation[] = [];
  const period = periodNames[q?.period ?? 0];
  if (!period) details.push({ path: "period", message: "must be one of month, week, total" });
  (q?.channels ?? []).forEach((c, i) => {
    if (c !== 1 && c !== 2) details.push({ path: `channel[${i}]`, message: "must be 1 (D2C) or 2 (B2B)" });
  });
  if (details.length) throw invalid(`invalid planning request: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}`, details);
  const volumes = volumeQueryOf(q?.volumes);
  const count = reportedPeriods(period!, volumes.fromDate, volumes.toDate).length;
  if (count > MAX_PERIODS) {
    const message = `the window from fromDate to toDate holds more than ${MAX_PERIODS} periods of period=${period}: shorten it or choose a longer period`;
    throw invalid(`invalid planning request: toDate ${message}`, [{ path: "toDate", message }]);
  }
  const channels = [...new Set(q?.channels ?? [])].sort();
  return { volumes, period: period!, channels: channels.length ? channels : [1, 2] };
}
