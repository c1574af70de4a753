import { z } from "zod";
import { generalResponseSchema } from "./schemas";

type Shape = z.ZodRawShape;

export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  headers?: Record<string, unknown>;
  contentType?: string;
  /** A sane example answer for the document and `/docs`. */
  example?: unknown;
  /** The same answer in other media types (planning's CSV): text, with its description and a sane example. */
  alternatives?: Record<string, { description: string; example: string }>;
}

/** What the document says of one REST operation (route.ts's RouteSpec adds how it is served). */
export interface OperationSpec<P extends Shape, Q extends Shape, B extends z.ZodType> {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Fastify path syntax: `/v2/api/events/:id`. */
  url: string;
  summary: string;
  /** Longer text of the operation; defaults to the summary. */
  description?: string;
  /** The SDK method name (`listProducts`, `upsertProductsBatch`); defaults to one derived from method and path. */
  operationId?: string;
  tag: string;
  /** A compatibility route (kept for the published client); the document marks it deprecated. */
  deprecated?: boolean;
  /** bearer: an account's access token; admin: ADMIN_TOKEN; none: open. */
  auth: "bearer" | "admin" | "none";
  params?: P;
  query?: Q;
  body?: B;
  /** A sane example body for the document and `/docs`. */
  bodyExample?: unknown;
  /** A body that is not JSON, read by the handler as it arrives (an import's file): its media types and what each holds. */
  bodyMedia?: Record<string, string>;
  responses: Record<number, ResponseSpec>;
}

type AnyRoute = OperationSpec<any, any, any>;

/** A request the platform sends to the account's URLs: an OpenAPI 3.1 top-level `webhooks` entry. */
export interface WebhookSpec {
  /** Its key under `webhooks` (`queueEntry`). */
  name: string;
  summary: string;
  description: string;
  operationId: string;
  tag: string;
  /** Headers every such request carries. */
  headers: Record<string, { description: string; schema: z.ZodType }>;
  body: z.ZodType;
  bodyExample?: unknown;
  /** What each answer means to the sender, by status, range (`2XX`) or `default`. */
  responses: Record<string, { description: string }>;
}
type Json = Record<string, unknown>;

/**
 * Bodies validated item by item (`z.array(z.unknown())`, so one bad item is that item's 400) are
 * still published with their item schema: `documentAs(body, z.array(item))`.
 */
const documented = new WeakMap<z.ZodType, z.ZodType>();
export function documentAs<T extends z.ZodType>(schema: T, doc: z.ZodType): T {
  documented.set(schema, doc);
  return schema;
}

const retryAfterHeader = { description: "seconds to wait", schema: { type: "integer", format: "int32", minimum: 0, maximum: 86400 } };

/** On every answer to a request with an account's token, but a 401 (no account, no bucket: limits/rate-limits.ts). */
const rateLimitHeaders = {
  RateLimit: { $ref: "#/components/headers/RateLimit" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" },
};
/** On every answer (app.ts sets it first thing). */
const requestIdHeader = { "X-Request-Id": { $ref: "#/components/headers/RequestId" } };
const replayedHeader = { "Idempotent-Replayed": { $ref: "#/components/headers/IdempotentReplayed" } };
const redactedHeader = { "Idempotent-Redacted": { $ref: "#/components/headers/IdempotentRedacted" } };
/**
 * Statuses of an account's write that are never a kept answer replayed: decided before the key is
 * claimed (401, 413, 414, 415, 429) or not kept (5xx).
 */
const neverReplayed = /^(401|413|414|415|429|5\d\d)$/;

/**
 * The GeneralResponse answers every operation can give, shared as `components.responses`. Each in
 * the variants its operations need, as headers differ: `<name>` for an account's operations
 * (RateLimit headers), `<name>Replayable` where an account's write may replay it
 * (Idempotent-Replayed too), `<name>WithoutAccount` for /auth, admin and image URLs (no bucket).
 */
const sharedResponses: Record<string, { status: number; description: string }> = {
  BadRequest: { status: 400, description: "invalid path, query or body; `details` names each field" },
  Unauthorized: { status: 401, description: "missing, malformed, expired or revoked bearer token" },
  PayloadTooLarge: { status: 413, description: "request body is too large" },
  RequestTimeout: {
    status: 408,
    description: "the body did not arrive within the request timeout (a file upload: went that long without a byte); answered on the connection, which is then closed, with X-Request-Id and none of the other headers",
  },
  UriTooLong: { status: 414, description: "a path parameter is too long (over 5,000 characters as sent)" },
  UnsupportedMediaType: { status: 415, description: "Content-Type must be application/json" },
  PreconditionFailed: { status: 412, description: "If-Match names no current ETag of the resource (it changed, or does not exist); nothing was changed" },
  IdempotencyKeyInUse: { status: 409, description: "a request with this Idempotency-Key is still running, or was interrupted before its answer was kept" },
  IdempotencyKeyReused: { status: 422, description: "this Idempotency-Key was used for another request (method, path, body or API key)" },
  TooManyRequests: { status: 429, description: "over the account's rate limit (see `RateLimit`); retry after `Retry-After` seconds" },
  TooManyFailedAttempts: { status: 429, description: "too many failed attempts from this address (/auth and admin); retry after `Retry-After` seconds" },
  InternalError: { status: 500, description: "internal error; nothing internal is disclosed" },
  Unavailable: { status: 503, description: "a dependency is unavailable or too slow; nothing was written; retry after `Retry-After` seconds" },
  OutcomeUnknown: {
    status: 504,
    description: "`code: outcome_unknown`: the write's service did not answer in time, and the write may still have been applied; read the resource before sending it again under a new Idempotency-Key (a retry under the same key is a 409)",
  },
};

const tagDescriptions: Record<string, string> = {
  Authentication: "Exchange an account id and API key for a bearer access token.",
  Products: "The catalogue: products (one row per SKU), their keys and images.",
  Brands: "Brands and categories, created by product writes.",
  Categories: "Product categories, created by product writes.",
  "Mapping tables": "Account-defined lookup tables from one field's values to others.",
  Events: "The account's event queue: what changed, to be processed and marked.",
  Webhooks: "The event queue pushed to the account's endpoints, signed as Standard Webhooks (standardwebhooks.com).",
  Admin: "Deployment administration: accounts, API keys and settings (only when ADMIN_TOKEN is set).",
};

/** Response schemas stay open to additive fields: a strict generated client would break on each new field. */
function openForAdditions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(openForAdditions);
  if (!value || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "additionalProperties" && v === false) continue;
    out[k] = openForAdditions(v);
  }
  return out;
}

/**
 * In request schemas a default is said in words, not as `default`: generators (openapi-typescript's
 * defaultNonNullable, the default) make a property with a `default` required, while the server
 * fills it in when it is left out.
 */
function defaultsInWords(value: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(value)) return value.map((v) => defaultsInWords(v));
  if (!value || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) if (isPropertyMap || k !== "default") out[k] = defaultsInWords(v, !isPropertyMap && k === "properties");
  if (!isPropertyMap && "default" in value) {
    const said = `Default: ${JSON.stringify((value as Json).default)}.`;
    out.description = typeof out.description === "string" ? `${out.description} (${said})` : said;
  }
  return out;
}

/** Integers say their width (int32 or int64), as generators need to pick a type. */
function integerFormats(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(integerFormats);
  if (!value || typeof value !== "object") return value;
  const out: Json = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, integerFormats(v)]));
  if (out.type === "integer" && out.format === undefined) {
    const int32 = typeof out.minimum === "number" && typeof out.maximum === "number" && out.minimum >= -(2 ** 31) && out.maximum <= 2 ** 31 - 1;
    out.format = int32 ? "int32" : "int64";
  }
  return out;
}

/** `repeatable()` publishes as `string | string[]`; in the document it is an array, `?a=1&a=2`. */
function asRepeatable(schema: Json): Json | undefined {
  const anyOf = schema.anyOf as Json[] | undefined;
  const array = anyOf?.find((s) => s.type === "array");
  if (!anyOf || anyOf.length !== 2 || !array || !anyOf.some((s) => s.type === "string")) return undefined;
  const { anyOf: _, ...rest } = schema;
  return { ...rest, type: "array", items: array.items ?? { type: "string" }, ...(array.maxItems !== undefined ? { maxItems: array.maxItems } : {}) };
}

const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const camel = (s: string) => s.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ?? "").toUpperCase());
const singular = (s: string) => (s.endsWith("ies") ? `${s.slice(0, -3)}y` : s.endsWith("s") ? s.slice(0, -1) : s);

/**
 * The default operationId: `listProducts`, `getBrand`, `createProducts`, `updateProducts`,
 * `deleteMappingTable`, `createProductsBatch`. Routes may name theirs (`operationId`).
 */
export function defaultOperationId(method: string, url: string): string {
  const segments = url.replace(/^\/(v2\/api|admin\/v1)\//, "/").split("/").filter(Boolean);
  const byId = segments.at(-1)?.startsWith(":") ?? false;
  const words = segments.filter((s) => !s.startsWith(":")).map(camel);
  const action = words.length > 1 && ["batch"].includes(words.at(-1)!) ? words.pop()! : "";
  const resource = words.map(upperFirst).join("");
  const verb = { GET: byId ? "get" : "list", POST: "create", PUT: "update", PATCH: "update", DELETE: "delete" }[method] ?? method.toLowerCase();
  return `${verb}${byId ? singular(resource) : resource}${upperFirst(action)}`;
}

/**
 * Whether a route is one resource of an account (its path ends with the resource's id, and it is
 * not a list with a data version, such as a counter's traffic events): strong ETag, If-None-Match
 * and If-Match (route.ts), documented here.
 */
export function isSingleResource(spec: { auth: string; url: string; dataVersion?: unknown }): boolean {
  return spec.auth === "bearer" && /\/:[A-Za-z_]+$/.test(spec.url) && spec.dataVersion === undefined;
}

/** A PUT or DELETE of a resource without a GET at its path takes If-Match as IfMatchUntagged says (route.ts). */
function withUntaggedIfMatch(paths: Record<string, Record<string, unknown>>): Record<string, Record<string, unknown>> {
  const ifMatch = "#/components/parameters/IfMatch";
  return Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      operations.get
        ? operations
        : Object.fromEntries(
            Object.entries(operations).map(([method, operation]) => {
              const op = operation as { parameters: { $ref?: string }[] };
              const parameters = op.parameters.map((p) => (p.$ref === ifMatch ? { $ref: "#/components/parameters/IfMatchUntagged" } : p));
              return [method, { ...op, parameters }];
            }),
          ),
    ]),
  );
}

/** Builds the OpenAPI 3.1 document from the routes' own zod schemas. */
export class OpenApi {
  private readonly paths: Record<string, Record<string, unknown>> = {};
  /** Schemas named with `.meta({ id })`, shared by reference. */
  private readonly schemas: Record<string, unknown> = {};
  private readonly tags = new Map<string, string | undefined>();
  /** The variants of shared responses the operations refer to, with their headers. */
  private readonly responses = new Map<string, { name: string; headers: Record<string, unknown> }>();
  private readonly webhooks: Record<string, Record<string, unknown>> = {};

  constructor(private readonly info: { title: string; version: string; description: string }) {
    this.jsonSchema(generalResponseSchema, "output");
  }

  /** JSON Schema of a zod schema; its named parts move to components and are referenced from there. */
  private jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
    const { $schema: _, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, any>;
    const relink = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/'));
    // Input and output shapes of one named schema may differ (defaults): inputs get their own name.
    const name = (id: string) => (io === "input" ? `${id}Input` : id);
    const renamed = (value: unknown) =>
      io === "input" ? JSON.parse(JSON.stringify(value).replace(/"#\/components\/schemas\/([^"]+)"/g, '"#/components/schemas/$1Input"')) : value;
    const finish = (value: unknown) => integerFormats(io === "output" ? openForAdditions(value) : defaultsInWords(value)) as Json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) this.schemas[name(id)] = finish(renamed(relink(def)));
    return finish(renamed(relink(rest)));
  }

  /** A tag's description for the document's top-level `tags`. */
  tag(name: string, description: string): void {
    this.tags.set(name, description);
  }

  add(spec: AnyRoute): void {
    const path = spec.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [name, schema] of Object.entries((spec.params ?? {}) as Record<string, z.ZodType>)) {
      parameters.push({ name, in: "path", required: true, schema: this.jsonSchema(schema, "input") });
    }
    for (const [name, schema] of Object.entries((spec.query ?? {}) as Record<string, z.ZodType>)) {
      const s = this.jsonSchema(schema, "input") as { description?: string };
      const array = asRepeatable(s);
      parameters.push({
        name,
        in: "query",
        required: !schema.safeParse(undefined).success,
        description: s.description,
        ...(array ? { style: "form", explode: true, schema: array } : { schema: s }),
      });
    }
    // Writes of an account take Idempotency-Key (CONTRACT "Retries"); their replayed answers say so.
    const idempotent = spec.auth === "bearer" && spec.method !== "GET";
    if (idempotent) parameters.push({ $ref: "#/components/parameters/IdempotencyKey" });
    // Single resources of an account answer conditional requests (CONTRACT "Conditional requests").
    const singleResource = isSingleResource(spec);
    // Lists, planning answers and the event queue with a data version (route.ts): a weak ETag, and a 304 decided before the answer is computed.
    const weakTagged = spec.method === "GET" && (spec as { dataVersion?: unknown }).dataVersion !== undefined;
    // Other lists of an account (webhook endpoints, a delivery log): a weak ETag of the answer (route.ts).
    // A streamed answer that is not JSON (an import's NDJSON results) is never hashed: no tag.
    const streamed = (spec.responses[200]?.contentType ?? "application/json") !== "application/json";
    const answerTaggedList = spec.auth === "bearer" && spec.method === "GET" && !singleResource && !weakTagged && !streamed;
    const tagged = (singleResource && spec.method === "GET") || weakTagged || answerTaggedList;
    const etagHeader = { ETag: { $ref: `#/components/headers/${weakTagged ? "WeakETag" : answerTaggedList ? "AnswerWeakETag" : "ETag"}` } };
    if (tagged) parameters.push({ $ref: "#/components/parameters/IfNoneMatch" });
    if (singleResource && (spec.method === "PUT" || spec.method === "DELETE")) parameters.push({ $ref: "#/components/parameters/IfMatch" });
    // An account's operation: its answers carry the bucket's headers (a 401 has no account).
    const account = spec.auth === "bearer";
    const headersOf = (status: string) => ({
      ...requestIdHeader,
      ...(account && status !== "401" ? rateLimitHeaders : {}),
      ...(idempotent && /^[24]/.test(status) && !neverReplayed.test(status) ? replayedHeader : {}),
      ...(idempotent && (spec as { shownOnce?: string }).shownOnce && /^2/.test(status) ? redactedHeader : {}),
      ...(status === "429" || status === "503" ? { "Retry-After": retryAfterHeader } : {}),
    });
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      const headers = {
        ...(r.headers ?? {}),
        ...headersOf(status),
        ...(tagged && status === "200" ? etagHeader : {}),
      };
      responses[status] = {
        description: r.description,
        ...(Object.keys(headers).length ? { headers: integerFormats(headers) } : {}),
        ...(r.schema
          ? {
              content: {
                [r.contentType ?? "application/json"]: { schema: this.jsonSchema(r.schema, "output"), ...(r.example !== undefined ? { example: r.example } : {}) },
                ...Object.fromEntries(Object.entries(r.alternatives ?? {}).map(([type, a]) => [type, { schema: { type: "string", description: a.description }, example: a.example }])),
              },
            }
          : {}),
      };
    }
    // What any operation can answer besides its own statuses, as shared GeneralResponses, in the variant of their headers.
    const shared = (name: keyof typeof sharedResponses) => {
      const status = String(sharedResponses[name].status);
      if (responses[status]) return;
      // A 408 is written on the socket whatever the request was (http/request-deadline.ts): its request id, no header of an operation.
      const ownHeaders = name === "RequestTimeout" ? requestIdHeader : headersOf(status);
      const headers: Record<string, unknown> = { ...ownHeaders, ...(name === "PreconditionFailed" ? { ETag: { $ref: "#/components/headers/CurrentETag" } } : {}) };
      const variant = name === "Unauthorized" || name === "TooManyFailedAttempts" || name === "RequestTimeout" ? name : !account ? `${name}WithoutAccount` : headers["Idempotent-Replayed"] && name !== "PreconditionFailed" ? `${name}Replayable` : name;
      const known = this.responses.get(variant);
      if (known && JSON.stringify(known.headers) !== JSON.stringify(headers)) throw new Error(`shared response ${variant} with other headers on ${spec.method} ${spec.url}`);
      this.responses.set(variant, { name, headers });
      responses[status] = { $ref: `#/components/responses/${variant}` };
    };
    if (spec.body || spec.params || spec.query) shared("BadRequest");
    if (spec.auth !== "none") shared("Unauthorized");
    if (spec.params) shared("UriTooLong");
    if (spec.body || spec.bodyMedia) {
      shared("PayloadTooLarge");
      shared("UnsupportedMediaType");
      shared("RequestTimeout");
    }
    if (spec.auth !== "none") shared(account ? "TooManyRequests" : "TooManyFailedAttempts");
    if (tagged) {
      // A route's own answer headers (a deprecated route's Deprecation, Sunset, Link) go on its 304 too (route.ts).
      const answerHeaders = Object.keys((spec as { answerHeaders?: Record<string, string> }).answerHeaders ?? {});
      const ownOn304 = Object.fromEntries(Object.entries((responses["200"] as { headers?: Record<string, unknown> } | undefined)?.headers ?? {}).filter(([name]) => answerHeaders.includes(name)));
      responses["304"] ??= { description: "not modified: the ETag sent in If-None-Match is current; no body", headers: { ...etagHeader, ...headersOf("304"), ...ownOn304 } };
    }
    if (singleResource && (spec.method === "PUT" || spec.method === "DELETE")) shared("PreconditionFailed");
    if (idempotent) {
      shared("IdempotencyKeyInUse");
      shared("IdempotencyKeyReused");
    }
    shared("InternalError");
    shared("Unavailable");
    if (idempotent) shared("OutcomeUnknown");
    if (!this.tags.has(spec.tag)) this.tags.set(spec.tag, undefined);
    const operation: Record<string, unknown> = {
      summary: spec.summary,
      description: spec.description ?? spec.summary,
      tags: [spec.tag],
      operationId: spec.operationId ?? defaultOperationId(spec.method, spec.url),
      parameters,
      responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))),
      security: spec.auth === "bearer" ? [{ bearer: [] }] : spec.auth === "admin" ? [{ admin: [] }] : [],
      ...(spec.deprecated ? { deprecated: true } : {}),
    };
    if (spec.body) {
      const schema = this.jsonSchema(documented.get(spec.body) ?? spec.body, "input");
      const examples = spec.bodyExample !== undefined ? { example: spec.bodyExample } : {};
      operation.requestBody = { required: true, content: { "application/json": { schema, ...examples } } };
    }
    if (spec.bodyMedia) {
      // At most the route's body limit (route.ts), an import's 1 GiB.
      const maxLength = (spec as { bodyLimit?: number }).bodyLimit;
      const content = Object.fromEntries(Object.entries(spec.bodyMedia).map(([media, description]) => [media, { schema: { type: "string", maxLength, description } }]));
      operation.requestBody = { required: true, content };
    }
    (this.paths[path] ??= {})[spec.method.toLowerCase()] = operation;
  }

  /**
   * A request the platform sends. Its body and headers are the platform's output, so their schemas
   * are the output shapes the paths' answers use (`data` of a queue entry is the very `Event`).
   */
  webhook(spec: WebhookSpec): void {
    if (!this.tags.has(spec.tag)) this.tags.set(spec.tag, undefined);
    this.webhooks[spec.name] = {
      post: {
        summary: spec.summary,
        description: spec.description,
        tags: [spec.tag],
        operationId: spec.operationId,
        parameters: Object.entries(spec.headers).map(([name, h]) => ({ name, in: "header", required: true, description: h.description, schema: this.jsonSchema(h.schema, "output") })),
        requestBody: {
          required: true,
          content: { "application/json": { schema: this.jsonSchema(spec.body, "output"), ...(spec.bodyExample !== undefined ? { example: spec.bodyExample } : {}) } },
        },
        responses: spec.responses,
      },
    };
  }

  document(): Record<string, unknown> {
    const general = { content: { "application/json": { schema: { $ref: "#/components/schemas/GeneralResponse" } } } };
    return {
      openapi: "3.1.0",
      info: this.info,
      servers: [{ url: "/", description: "the deployment serving this document (local, staging or production)", "x-internal": false }],
      tags: [...this.tags].map(([name, description]) => ({ name, description: description ?? tagDescriptions[name] ?? `${name} operations` })),
      paths: withUntaggedIfMatch(this.paths),
      ...(Object.keys(this.webhooks).length ? { webhooks: this.webhooks } : {}),
      components: {
        schemas: this.schemas,
        responses: Object.fromEntries(
          [...this.responses].sort(([a], [b]) => a.localeCompare(b)).map(([variant, { name, headers }]) => [
            variant,
            { description: sharedResponses[name].description, headers: integerFormats(headers), ...general },
          ]),
        ),
        parameters: {
          IfNoneMatch: {
            name: "If-None-Match",
            in: "header",
            required: false,
            description: "ETags the client holds (or `*`): when one is current the answer is 304 with no body",
            schema: { type: "string", maxLength: 2000 },
          },
          IfMatch: {
            name: "If-Match",
            in: "header",
            required: false,
            description: "ETags the change is meant for (or `*`): when none is the resource's current one the answer is 412 and nothing changes",
            schema: { type: "string", maxLength: 2000 },
          },
          IfMatchUntagged: {
            name: "If-Match",
            in: "header",
            required: false,
            description:
              "This resource has no GET of its own, so no ETag of it is served: any listed ETag is a 412 with nothing changed (RFC 9110: no current ETag can match), and `*` lets the change run (a resource that does not exist answers 404, as without If-Match, RFC 9110 §13.2.1)",
            schema: { type: "string", maxLength: 2000 },
          },
          IdempotencyKey: {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description:
              "Makes a retry safe: the request is done at most once per account and key for 24 hours; a repeat answers the first answer again (with `Idempotent-Replayed: true`), writing nothing. Kept per account; the same key with another method, path, body or API key is a 422 (an API key never sees another's kept answer); a repeat while the first runs is a 409; 5xx answers are not kept (the retry runs again), but after a 504 `outcome_unknown` the key stays claimed and its retries are 409 (read the resource, resend under a new key).",
            schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
          },
        },
        headers: {
          ETag: { description: "the resource's strong entity-tag: changes whenever the resource does", schema: { type: "string", maxLength: 100 } },
          WeakETag: {
            description:
              "a weak entity-tag (`W/\"...\"`) of the answer: changes whenever the account's data behind it may have (a planning answer also with the account's date) and differs between queries (another filter or page is another tag); a current If-None-Match is a 304 decided before the answer is computed",
            schema: { type: "string", maxLength: 200 },
          },
          AnswerWeakETag: {
            description: "a weak entity-tag (`W/\"...\"`) of the answer as sent: a current If-None-Match is a 304 without a body",
            schema: { type: "string", maxLength: 100 },
          },
          RateLimit: {
            description:
              'the account\'s bucket after this request (IETF httpapi ratelimit-headers draft): `"account";r=<tokens left>;t=<seconds until full>` (over the limit: seconds until the request\'s cost is available). The tokens left are approximate while the bucket is well filled: each gateway leases tokens of the shared bucket for up to a second, and counts what the bucket had at its lease less what it spent since (not the refill nor other gateways\' requests meanwhile); near the limit they are exact. A read costs 1, a write 1 per element of every array in its body at any depth (batch items, purchase-order and transaction lines, deliveries, statements, keys) and per mapping value, at least 5 and at most 1000. Sent on every answer to a request with an account\'s valid token (404 and 405 under /v2/api too; an answer refused before its route ran costs 1); not on a 401 (without a valid token there is no account), nor on /auth and admin answers (their own brake) and image URLs (no token); absent when the limiter\'s store failed (the request passed unlimited).',
            schema: { type: "string", maxLength: 100 },
          },
          "RateLimit-Policy": {
            description: 'the account\'s limit: `"account";q=<bucket size>;w=<seconds to refill it>` (default q=6000;w=60: 100 a second, bursts of 6000; an account setting). Sent with `RateLimit`.',
            schema: { type: "string", maxLength: 100 },
          },
          IdempotentRedacted: {
            description: "on a replayed answer: the field of the first answer that is shown only once and was left out (`secret`: a webhook's signing secret is never kept; rotate it if the first answer was lost)",
            schema: { type: "string", enum: ["secret"] },
          },
          IdempotentReplayed: { description: "`true` on an answer replayed for a repeated Idempotency-Key", schema: { type: "string", enum: ["true"] } },
          CurrentETag: {
            description: "the resource's current strong entity-tag, when it exists and the gateway compared it (absent when the service found the change meanwhile)",
            schema: { type: "string", maxLength: 100 },
          },
          RequestId: {
            description: "the request's id: the client's X-Request-Id when it is 1 to 128 characters of `A-Za-z0-9._:@/+=-`, else a new UUID; on every log line of the request",
            schema: { type: "string", maxLength: 128 },
          },
        },
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            description:
              "An access token: `POST /v2/api/auth` with `{\"accountID\": ..., \"apiKey\": ...}` (the account id and an API key your administrator issued) answers `accessToken`, valid for an hour; send it as `Authorization: Bearer <accessToken>` and sign in again when it expires. Tokens follow RFC8725 (JWT best current practices): HS256 only, with exp and iat, tied to the API key (revoking the key ends them).",
          },
          admin: { type: "http", scheme: "bearer", description: "The deployment's admin token (its ADMIN_TOKEN setting); the admin API exists only when it is set." },
        },
      },
    };
  }
}
