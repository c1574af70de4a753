/** What Postgres can store: services check it first, so bad input is a 400 of its field, never a raw SQL error. */

// NUL is refused by Postgres text and jsonb; a lone surrogate by its JSON parser.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why Postgres cannot store `value` as text or inside jsonb, if it cannot (services answer it as a 400 of that field). */
export function unstorableText(value: string): string | undefined {
  return UNSTORABLE.test(value) ? "must be text without NUL characters or broken surrogates" : undefined;
}

/** Every string and key of a JSON value (attributes) that Postgres cannot store in jsonb, each with its path. */
export function jsonProblems(value: unknown, path: string): { path: string; message: string }[] {
  if (typeof value === "string") {
    const problem = unstorableText(value);
    return problem ? [{ path, message: problem }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => jsonProblems(v, `${path}[${i}]`));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => {
      const problem = unstorableText(k);
      return problem ? [{ path: `${path}.${k}`, message: `key ${problem}` }] : jsonProblems(v, `${path}.${k}`);
    });
  }
  return [];
}
