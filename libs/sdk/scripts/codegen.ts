/**
 * The SDK's generated code from the OpenAPI document, as a pure function of it: the same document
 * gives the same bytes (generate.mjs writes them, test/generated.test.ts compares). Types only for
 * the schemas; one class per tag ("resource") with a method per operationId; a table of every
 * operation for the command line.
 */

type Json = Record<string, any>;

export const GENERATED_DIR = "libs/sdk/src/generated";
const HEADER = "// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.\n";

/** How an operation is called: what the core's `call` needs at run time. */
export interface OperationInfo {
  operationId: string;
  tag: string;
  method: string;
  path: string;
  pathParams: string[];
  query: string[];
  /** "json", a media type list for a file body, or absent. */
  body?: "json" | string[];
  /** bearer (an account's token), admin, or none. */
  auth: "bearer" | "admin" | "none";
  /** A JSON array answer with a Link header: iterable page by page. */
  paged: boolean;
  /** The 2xx answer's media type (application/json, application/x-ndjson, ...); absent: no body. */
  answer?: string;
  /** Other media types the answer is available in (Accept), e.g. text/csv. */
  alternatives: string[];
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string) => (identifier.test(name) ? name : JSON.stringify(name));
const words = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean);
const pascal = (s: string) => words(s).map((w) => w[0].toUpperCase() + w.slice(1)).join("");
const camel = (s: string) => {
  const [first = "", ...rest] = words(s);
  // "FX rates" is fxRates, "Price lists" priceLists.
  return (first === first.toUpperCase() ? first.toLowerCase() : first[0].toLowerCase() + first.slice(1)) + pascal(rest.join(" "));
};
const kebab = (s: string) => words(s).map((w) => w.toLowerCase()).join("-");
const argName = (name: string) => (identifier.test(name) ? name : camel(name));
const typeName = (ref: string) => pascal(ref.replace("#/components/schemas/", ""));
const comment = (text: string | undefined, indent: string) => {
  if (!text) return "";
  const line = text.split("\n")[0].replace(/\*\//g, "*\\/").trim();
  return `${indent}/** ${line.length > 300 ? line.slice(0, 297) + "..." : line} */\n`;
};

/** A JSON Schema (2020-12, as the gateway writes it) as a TypeScript type; `ns` prefixes named ones. */
export function typeOf(schema: Json | boolean | undefined, ns: string, indent = ""): string {
  if (schema === undefined || schema === true) return "unknown";
  if (schema === false) return "never";
  if (schema.$ref) return ns + typeName(schema.$ref);
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ") || "never";
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return [...new Set(union.map((s: Json) => wrap(typeOf(s, ns, indent))))].join(" | ");
  if (Array.isArray(schema.allOf)) return schema.allOf.map((s: Json) => wrap(typeOf(s, ns, indent))).join(" & ");
  if (Array.isArray(schema.type)) return schema.type.map((t: string) => wrap(typeOf({ ...schema, type: t }, ns, indent))).join(" | ");
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map((s: Json) => typeOf(s, ns, indent)).join(", ")}]`;
      return `Array<${typeOf(schema.items, ns, indent)}>`;
    case "object":
    case undefined: {
      if (schema.type === undefined && !schema.properties) return "unknown";
      return objectOf(schema, ns, indent);
    }
    default:
      return "unknown";
  }
}

const wrap = (t: string) => (/^[\w.<>[\]", ]+$/.test(t) && !t.includes(" | ") ? t : `(${t})`);

function objectOf(schema: Json, ns: string, indent: string): string {
  const inner = indent + "  ";
  const required = new Set<string>(schema.required ?? []);
  const lines = Object.entries((schema.properties ?? {}) as Record<string, Json>).map(
    ([name, s]) => `${comment(s.description, inner)}${inner}${key(name)}${required.has(name) ? "" : "?"}: ${typeOf(s, ns, inner)};\n`,
  );
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: ${extra === true || !Object.keys(extra).length || lines.length ? "unknown" : typeOf(extra, ns, inner)};\n`);
  return lines.length ? `{\n${lines.join("")}${indent}}` : "Record<string, never>";
}

const deref = (doc: Json, value: Json) => (value?.$ref ? value.$ref.split("/").slice(1).reduce((o: Json, k: string) => o[k], doc) : value);

/** Every operation of the document in its order, as the core calls it. */
export function operationsOf(doc: Json): Array<OperationInfo & { op: Json }> {
  const out: Array<OperationInfo & { op: Json }> = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op?.operationId) continue;
      const params = ((op.parameters ?? []) as Json[]).map((p) => deref(doc, p));
      const ok = Object.entries(op.responses as Record<string, Json>).find(([status]) => /^2/.test(status));
      const okBody = ok ? deref(doc, ok[1]) : undefined;
      const media = Object.keys(okBody?.content ?? {});
      const content = op.requestBody?.content ?? {};
      const security = (op.security ?? []) as Json[];
      out.push({
        op,
        operationId: op.operationId,
        tag: op.tags?.[0] ?? "Default",
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === "path").map((p) => p.name),
        query: params.filter((p) => p.in === "query").map((p) => p.name),
        body: content["application/json"] ? "json" : Object.keys(content).length ? Object.keys(content) : undefined,
        auth: security.some((s) => "bearer" in s) ? "bearer" : security.some((s) => "admin" in s) ? "admin" : "none",
        paged: !!okBody?.headers?.Link && okBody?.content?.["application/json"]?.schema?.type === "array",
        answer: media[0],
        alternatives: media.slice(1),
      });
    }
  }
  return out;
}

/** The generated files, path (under the repository) to content. */
export function generate(doc: Json): Record<string, string> {
  const files: Record<string, string> = {};
  const schemas = Object.entries((doc.components?.schemas ?? {}) as Record<string, Json>)
    .map(([name, s]) => `${comment(s.description, "")}export type ${typeName(name)} = ${typeOf(s, "")};\n`)
    .join("\n");
  files[`${GENERATED_DIR}/schemas.ts`] = `${HEADER}/* eslint-disable */\n\n${schemas}`;

  const ops = operationsOf(doc);
  const tags = [...new Set(ops.map((o) => o.tag))];
  for (const tag of tags) {
    const cls = pascal(tag);
    const mine = ops.filter((o) => o.tag === tag);
    const types: string[] = [];
    const methods: string[] = [];
    const runtime = new Set<string>();
    for (const o of mine) {
      const { op } = o;
      const params = ((op.parameters ?? []) as Json[]).map((p) => deref(doc, p));
      const args: string[] = o.pathParams.map((name) => `${argName(name)}: string`);
      const pathExpr = "`" + o.path.replace(/\{([^}]+)\}/g, (_m, name: string) => "${encodeURIComponent(" + argName(name) + ")}") + "`";
      let bodyArg = "undefined";
      if (o.body === "json") {
        const bodyType = `${pascal(o.operationId)}Body`;
        types.push(`export type ${bodyType} = ${typeOf(op.requestBody.content["application/json"].schema, "S.")};\n`);
        args.push(`body: ${bodyType}`);
        bodyArg = "body";
      } else if (o.body) {
        runtime.add("Upload");
        args.push("body: Upload");
        bodyArg = "body";
      }
      let queryArg = "undefined";
      const queryParams = params.filter((p) => p.in === "query");
      if (queryParams.length) {
        const queryName = `${pascal(o.operationId)}Query`;
        // A repeatable parameter takes one value or several (`?skus=a&skus=b`).
        const queryType = (s: Json) => (s?.type === "array" ? `${wrap(typeOf(s.items, "S.", "  "))} | ${typeOf(s, "S.", "  ")}` : typeOf(s, "S.", "  "));
        const fields = queryParams.map((p) => `${comment(p.description ?? p.schema?.description, "  ")}  ${key(p.name)}${p.required ? "" : "?"}: ${queryType(p.schema)};\n`);
        types.push(`export interface ${queryName} {\n${fields.join("")}}\n`);
        args.push(`query${queryParams.some((p) => p.required) ? "" : "?"}: ${queryName}`);
        queryArg = "query";
      }
      args.push("options?: RequestOptions");
      const okEntry = Object.entries(op.responses as Record<string, Json>).find(([status]) => /^2/.test(status));
      const okSchema = okEntry ? deref(doc, okEntry[1])?.content?.[o.answer ?? ""]?.schema : undefined;
      // A read the document gives no body schema (an image's bytes) answers a Blob.
      const answerType = okSchema ? typeOf(okSchema, "S.", "  ") : o.method === "GET" ? "Blob" : "void";
      const spec = `{ method: ${JSON.stringify(o.method)}, path: ${pathExpr}, auth: ${JSON.stringify(o.auth)}${o.body && o.body !== "json" ? `, media: ${JSON.stringify(o.body[0])}` : ""} }`;
      let call: string;
      let returns: string;
      if (o.paged) {
        runtime.add("Paged");
        const item = okSchema?.items ? typeOf(okSchema.items, "S.", "  ") : "unknown";
        returns = `Paged<${item}>`;
        call = `this.client.paged<${item}>(${spec}, ${queryArg}, options)`;
      } else if (o.answer === "application/x-ndjson") {
        returns = `AsyncIterable<${answerType}>`;
        call = `this.client.lines<${answerType}>(${spec}, ${queryArg}, options)`;
      } else {
        returns = `Promise<${answerType}>`;
        call = `this.client.call<${answerType}>(${spec}, ${queryArg}, ${bodyArg}, options)`;
      }
      methods.push(
        `${comment(op.summary, "  ")}  ${o.operationId}(${args.join(", ")}): ${returns} {\n    return ${call};\n  }\n`,
      );
    }
    const imports = ["Client", "RequestOptions", ...runtime].sort();
    const usesSchemas = [...types, ...methods].some((s) => s.includes("S."));
    const file = kebab(tag);
    files[`${GENERATED_DIR}/${file}.ts`] =
      `${HEADER}import type { ${imports.join(", ")} } from "../core/client";\n` +
      (usesSchemas ? `import type * as S from "./schemas";\n` : "") +
      `\n${types.join("\n")}${types.length ? "\n" : ""}` +
      `${comment(doc.tags?.find((t: Json) => t.name === tag)?.description, "")}export class ${cls} {\n  constructor(private readonly client: Client) {}\n\n${methods.join("\n")}}\n`;
  }
  const classes = tags.map((t) => pascal(t));
  files[`${GENERATED_DIR}/index.ts`] =
    `${HEADER}import { Client } from "../core/client";\n` +
    classes.map((c, i) => `import { ${c} } from "./${kebab(tags[i])}";\n`).join("") +
    `\nexport { ${classes.join(", ")} };\nexport type * from "./schemas";\n\n` +
    `/** A client with every resource: \`new Analytics({ baseUrl, accountID, apiKey }).products.listProducts()\`. */\n` +
    `export class Analytics extends Client {\n${classes.map((c, i) => `  readonly ${camel(tags[i])} = new ${c}(this);\n`).join("")}}\n`;

  const table = ops.map(({ op: _op, operationId, ...info }) => `  ${operationId}: ${JSON.stringify({ ...info, resource: camel(info.tag) })},\n`).join("");
  files[`${GENERATED_DIR}/operations.ts`] =
    `${HEADER}/** Every operation of the document, for the command line's \`call\`: how to send it. */\n` +
    `export const OPERATIONS = {\n${table}} as const;\n\nexport type OperationId = keyof typeof OPERATIONS;\n\n` +
    `/** The resource classes, property name to class name, in the document's order of tags. */\n` +
    `export const RESOURCES = ${JSON.stringify(Object.fromEntries(tags.map((t) => [camel(t), pascal(t)])), null, 2)} as const;\n`;
  return files;
}
