import type { Knex } from "knex";
import { isIntegerId, isUuid } from "@analytics/db";
import type { GroupByName, VolumeFilters } from "../validation";

export const groupColumn: Record<GroupByName, string> = {
  seasons: "season",
  products: "product_group_id",
  variants: "variant_group_id",
  skus: "key",
};

/** A SKU's group key in `skus s`: its key (never null), else the grouping's column with "" for none. */
export const groupKeyOf = (groupBy: GroupByName) => (groupBy === "skus" ? "s.key" : `coalesce(s.${groupColumn[groupBy]}, '')`);

/** The SKU filters as one WHERE over `skus`, with its bindings. Every list is a `= ANY(array)`. */
export function skuWhere(f: VolumeFilters): { sql: string; bindings: Knex.RawBinding[] } {
  const parts = ["s.status = ANY(?::int[])", "s.active_planning = ?"];
  const bindings: Knex.RawBinding[] = [f.skuStatus, f.activePlanning];
  const any = (column: string, values: string[], cast = "text") => {
    if (!values.length) return;
    parts.push(`s.${column} = ANY(?::${cast}[])`);
    bindings.push(values);
  };
  any("season", f.seasons);
  any("variant_group_id", f.variants);
  any("product_group_id", f.products);
  any("sku", f.skus);
  // A product is named by its UUID or its integer id.
  if (f.skuIds.length) {
    parts.push("(s.sku_id = ANY(?::uuid[]) OR s.sku_seq = ANY(?::bigint[]))");
    bindings.push(f.skuIds.filter(isUuid), f.skuIds.filter(isIntegerId));
  }
  // Brand and category names match case-insensitively, as the catalogue matches them.
  if (f.brands.length) {
    parts.push("lower(s.brand) = ANY(?::text[])");
    bindings.push(f.brands.map((b) => b.toLowerCase()));
  }
  if (f.categories.length) {
    parts.push("lower(s.category) = ANY(?::text[])");
    bindings.push(f.categories.map((c) => c.toLowerCase()));
  }
  any("size", f.sizes);
  any("department", f.departments);
  any("gender", f.genders);
  any("collection", f.collections);
  any("color", f.colors);
  any("sub_category", f.subcategories);
  any("product_type", f.productTypes);
  any("merchandise_type", f.merchandiseTypes);
  f.pimCustom.forEach((values, i) => {
    if (!values.length) return;
    parts.push(`s.pim_custom[${i + 1}] = ANY(?::text[])`);
    bindings.push(values);
  });
  return { sql: parts.join(" AND "), bindings };
}

