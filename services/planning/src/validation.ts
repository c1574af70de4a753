import { planningV1 } from "@analytics/contracts";
import { isIntegerId, isUuid } from "@analytics/db";
import { invalid, type FieldViolation } from "@analytics/errors";

const { GroupBy } = planningV1;

export type GroupByName = "seasons" | "products" | "variants" | "skus";

export interface VolumeFilters {
  seasons: string[];
  variants: string[];
  products: string[];
  skus: string[];
  skuIds: string[];
  brands: string[];
  categories: string[];
  sizes: string[];
  skuStatus: number[];
  activePlanning: boolean;
  departments: string[];
  genders: string[];
  collections: string[];
  colors: string[];
  subcategories: string[];
  productTypes: string[];
  merchandiseTypes: string[];
  /** index 0..9 = pimCustom1..pimCustom10 */
  pimCustom: string[][];
}

export interface VolumeQuery {
  groupBy: GroupByName;
  fromDate: string;
  toDate: string;
  /** An instant (RFC 3339) or a date read as midnight in the account's timezone. */
  updatedSince?: { instant: string } | { date: string };
  filters: VolumeFilters;
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
    if (!Number.isInteger(s) || s < 1 || s > 7) details.push({ path: `skuStatus[${i}]`, message: "must be an integer from 1 to 7" });
  });
  (req.skuIds ?? []).forEach((id, i) => {
    if (!isUuid(id) && !isIntegerId(id)) details.push({ path: `skuIds[${i}]`, message: "must be a product's UUID or integer id" });
  });
  const pimCustom: string[][] = Array.from({ length: 10 }, () => []);
  for (const p of req.pimCustom ?? []) {
    if (p.index < 1 || p.index > 10) details.push({ path: `pimCustom${p.index}`, message: "there are pimCustom1 to pimCustom10" });
    else pimCustom[p.index - 1].push(...p.values);
  }
  if (details.length) throw invalid(`invalid planning request: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}`, details);
  return {
    groupBy: groupBy!,
    fromDate,
    toDate,
    updatedSince,
    filters: {
      seasons: req.seasons ?? [],
      variants: req.variants ?? [],
      products: req.products ?? [],
      skus: req.skus ?? [],
      skuIds: req.skuIds ?? [],
      brands: req.brands ?? [],
      categories: req.categories ?? [],
      sizes: req.sizes ?? [],
      skuStatus: req.skuStatus?.length ? req.skuStatus : [2, 3, 4, 5, 6, 7],
      activePlanning: req.activePlanning ?? true,
      departments: req.departments ?? [],
      genders: req.genders ?? [],
      collections: req.collections ?? [],
      colors: req.colors ?? [],
      subcategories: req.subcategories ?? [],
      productTypes: req.productTypes ?? [],
      merchandiseTypes: req.merchandiseTypes ?? [],
      pimCustom,
    },
  };
}
