import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import type { catalogueV1, inventoryV1, ordersV1 } from "@analytics/contracts";
import type { CallAs } from "../clients";
import type { RouteContext } from "../pipeline/route";
import { jsonObject, jsonValue } from "../http/values";

/**
 * The fields the order resources (purchase orders, distribution orders, transactions) share: their
 * dates, their `id` on a write, and the published client's names and additional fields
 * (CONTRACT.md, "Compatibility"). A module of its own so that no route file imports another.
 */

/** RFC 3339 with `Z`, a colon offset or a colon-less offset; a date alone means its UTC midnight. */
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)(Z|z|[+-]\d{2}:?\d{2}))?$/;
const MIN_MS = Date.UTC(1970, 0, 1);
const MAX_MS = Date.UTC(2105, 11, 31, 23, 59, 59, 999);

/** The instant of an accepted layout, or undefined. */
export function parseTimestamp(value: string, dateOnly: boolean): Date | undefined {
  const m = TIMESTAMP.exec(value);
  if (!m || (!m[2] && !dateOnly)) return undefined;
  const zone = !m[3] || /z/i.test(m[3]) ? "Z" : m[3].includes(":") ? m[3] : `${m[3].slice(0, 3)}:${m[3].slice(3)}`;
  const date = new Date(`${m[1]}T${m[2] ?? "00:00:00"}${zone}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // 2026-02-30 rolls over in Date; the written day must exist.
  const [y, mo, d] = m[1].split("-").map(Number);
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return undefined;
  return date;
}

/** A date of an order resource: within 1970-01-01 .. 2105-12-31 23:59:59, sent on as RFC 3339 UTC. */
export const orderTimestamp = z
  .string()
  .max(40)
  .transform((v, ctx) => {
    const date = parseTimestamp(v, true);
    if (!date) {
      ctx.addIssue({ code: "custom", message: "must be an RFC 3339 timestamp (or YYYY-MM-DD)" });
      return z.NEVER;
    }
    if (date.getTime() < MIN_MS || date.getTime() > MAX_MS) {
      ctx.addIssue({ code: "custom", message: "must lie between 1970-01-01 00:00:00 and 2105-12-31 23:59:59" });
      return z.NEVER;
    }
    return date.toISOString();
  })
  .meta({ format: "date-time" });

/**
 * Compatibility with the published client (CONTRACT.md): names that differ only in letter case
 * are the contract's, and `externalPurchaseNo` is `externalPONo` (both, differing, is a 400).
 */
export function canonicalNames(names: string[], aliases: Record<string, string> = {}) {
  const exact = new Set(names);
  const byLower = new Map(names.map((n) => [n.toLowerCase(), n]));
  for (const [alias, name] of Object.entries(aliases)) byLower.set(alias.toLowerCase(), name);
  return (value: unknown, ctx: z.core.$RefinementCtx) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return value;
    // Most bodies use the contract's names already (5,500 objects in a batch of 500 orders).
    if (Object.keys(value).every((k) => exact.has(k))) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const name = byLower.get(k.toLowerCase()) ?? k;
      if (name in out && out[name] !== v) {
        ctx.addIssue({ code: "custom", message: `${k} and ${name} differ`, path: [name] });
        continue;
      }
      out[name] = v;
    }
    return out;
  };
}

/** A nested object of a body (a delivery, a statement): its fields, names in any letter case. */
export function nested(shape: Record<string, z.ZodType>) {
  return z.preprocess(canonicalNames(Object.keys(shape)), z.strictObject(shape));
}

/**
 * An order's `id` on a write: its integer id (what GET answers as `id`) or its UUID (`uuid`).
 * Required by the replacing PUT, ignored elsewhere.
 */
export const clientId = z
  .union([z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).transform(String), z.string().max(100)])
  .optional()
  .describe("the integer id, or the UUID (`uuid`)");

/** The published client's fields answered from `attributes` (deprecated properties of a read schema). */
export function clientFieldsOut(fields: readonly string[]) {
  return Object.fromEntries(fields.map((f) => [f, z.unknown().optional().meta({ deprecated: true, description: "the published client's field, from attributes (when kept)" })]));
}

/** A resource's `attributes`: the published client's additional fields as it sent them. */
export const attributes = jsonObject();

/**
 * A write body of an order resource with the published client's names and additional fields
 * (CONTRACT.md, "Compatibility"): names in any letter case, its renamed fields, and its additional
 * fields, each documented as deprecated and kept in the resource's `attributes` object (which a
 * client may also send whole, as GET answers it; a loose field wins over the same name in it).
 */
export function withClientFields<S extends z.ZodRawShape>(shape: S, extras: readonly string[], renamed: Record<string, string> = {}) {
  const loose = Object.fromEntries(extras.map((f) => [f, jsonValue().optional().meta({ deprecated: true, description: "sent by the published client; kept in attributes" })]));
  // Documented only: canonicalNames has made each alias its contract name before the object sees it.
  const aliases = Object.fromEntries(
    Object.entries(renamed).map(([alias, name]) => [alias, (shape[name] as z.ZodType).optional().meta({ deprecated: true, description: `the published client's spelling of ${name}; use ${name}` })]),
  );
  const full = z.strictObject({ ...shape, attributes: attributes.nullish().describe("the published client's additional fields, kept as sent"), ...loose, ...aliases });
  const extra = new Set(extras);
  const names = Object.keys(full.shape).filter((k) => !(k in renamed));
  return z.preprocess(canonicalNames(names, renamed), full).transform((value) => {
    const fields = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    let kept = fields.attributes ? { ...(fields.attributes as Record<string, unknown>) } : undefined;
    for (const k of Object.keys(fields)) {
      const v = fields[k];
      if (k === "attributes") continue;
      if (!extra.has(k)) out[k] = v;
      else if (v !== undefined) (kept ??= {})[k] = v;
    }
    out.attributes = kept ?? null;
    return out as z.output<z.ZodObject<S>> & { attributes: Record<string, unknown> | null };
  });
}

/** What the order routes (purchase orders, distribution orders) register with and call: orders, and the catalogue and inventory for references. */
export interface OrderRouteDeps {
  ctx: RouteContext;
  orders: Client<typeof ordersV1.OrdersService>;
  catalogue: Client<typeof catalogueV1.CatalogueService>;
  inventory: Client<typeof inventoryV1.InventoryService>;
  as: CallAs;
}
