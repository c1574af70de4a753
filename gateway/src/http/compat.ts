import { z } from "zod";
import { documentAs } from "./openapi";

/** What the published client sends besides the contract's names (CONTRACT.md, "Compatibility with the published client"). */
export interface ClientCompatibility {
  /** Its spelling -> the contract's (names that differ in more than letter case, or that the document should show). */
  aliases: Record<string, string>;
  /** Additional fields it sends, kept in the resource's attributes object. */
  extras: string[];
  /** The attributes object (e.g. externalAttributes). */
  extrasInto: string;
}

/**
 * A write schema that also takes the published client's fields: names matched case-insensitively
 * (answers keep the contract's spelling), its aliases (documented as deprecated properties; both
 * spellings with different values is a 400), and its additional fields, moved into the attributes
 * object. Any other unknown field is still a 400. Returns the runtime schema (documented as the strict
 * object with the aliases) and that documented schema.
 */
export function compatible<T extends z.ZodRawShape>(shape: T, compat: ClientCompatibility, refine?: (value: Record<string, unknown>) => boolean, refineMessage?: { message: string; path: string[] }) {
  const aliasFields = Object.fromEntries(
    Object.entries(compat.aliases).map(([alias, name]) => [alias, (shape[name] as z.ZodType).meta({ deprecated: true, description: `the published client's spelling of ${name}; use ${name}` })]),
  );
  const extraFields = Object.fromEntries(
    compat.extras.map((f) => [f, z.unknown().optional().meta({ deprecated: true, description: `sent by the published client; kept in ${compat.extrasInto}` })]),
  );
  const documented = z.strictObject({ ...shape, ...aliasFields, ...extraFields });
  const known = Object.keys(documented.shape);
  const byLowerCase = new Map(known.map((k) => [k.toLowerCase(), k]));
  const runtime = z
    .preprocess((value, ctx) => {
      if (!value || typeof value !== "object" || Array.isArray(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const name = known.includes(k) ? k : (byLowerCase.get(k.toLowerCase()) ?? k);
        if (name in out && JSON.stringify(out[name]) !== JSON.stringify(v)) {
          ctx.addIssue({ code: "custom", message: `sent twice with different values (as ${name} and ${k})`, path: [name] });
        }
        out[name] = v;
      }
      return out;
    }, documented)
    .transform((value, ctx) => {
      const out: Record<string, unknown> = { ...value };
      for (const [alias, name] of Object.entries(compat.aliases)) {
        if (out[alias] === undefined) continue;
        if (out[name] !== undefined && JSON.stringify(out[name]) !== JSON.stringify(out[alias])) {
          ctx.addIssue({ code: "custom", message: `${alias} and ${name} differ; send one of them`, path: [alias] });
        }
        out[name] ??= out[alias];
        delete out[alias];
      }
      const extras = compat.extras.filter((f) => out[f] !== undefined);
      if (extras.length) {
        const into = (out[compat.extrasInto] ?? {}) as Record<string, unknown>;
        out[compat.extrasInto] = { ...Object.fromEntries(extras.map((f) => [f, out[f]])), ...into };
        for (const f of extras) delete out[f];
      }
      return out as z.output<typeof documented>;
    })
    .refine((v) => (refine ? refine(v as Record<string, unknown>) : true), refineMessage ?? { message: "invalid" });
  return { runtime: documentAs(runtime, documented), documented };
}
