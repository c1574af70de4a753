import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Code, ConnectError } from "@connectrpc/connect";
import { z } from "zod";
import type { Caller } from "@analytics/auth";
import type { DataVersions } from "@analytics/rpc";
import type { AnsweringCaller, DataVersionOf } from "../clients";
import { HttpError } from "./errors";
import { describe, violations } from "./validation";
import { documentAs, isSingleResource, type OpenApi, type OperationSpec } from "./openapi";
import { inRequestSpan } from "./telemetry";
import { MAX_WRITE_COST, MIN_WRITE_COST, type RateLimiter } from "../accounts/rate-limiter";
import { spendOrRefuse } from "./rate-limits";
import { checkIfMatch, ifMatchFailed, matchesNoneOf, tagAnswer, weakTagOf } from "./conditional";
import { negotiated } from "./negotiation";
import { claimOrAnswer, IDEMPOTENT_METHODS, idempotencyKeyOf, keepAnswer, type IdempotencyKeys } from "./idempotency";

type Shape = z.ZodRawShape;

/**
 * One REST operation: its zod schemas are both the validation at the edge and its OpenAPI
 * description (OperationSpec), so the document cannot drift from the code.
 */
export interface RouteSpec<P extends Shape, Q extends Shape, B extends z.ZodType> extends OperationSpec<P, Q, B> {
  bodyLimit?: number;
  /** Keys one object of the body may have, when the route takes wider objects than MAX_JSON_OBJECT_KEYS (hostile-input.ts). */
  maxObjectKeys?: number;
  /**
   * A field of the answer shown only once (a webhook's signing secret): an answer kept for its
   * Idempotency-Key leaves it out, and its replay says so (Idempotent-Redacted).
   */
  shownOnce?: string;
  /**
   * The media types the route answers in, its default first (planning's JSON and CSV): chosen by
   * the request's Accept (negotiation.ts; none of them acceptable: a 406), passed to the handler
   * as `format`, and part of the answer's weak ETag, since each is its own representation.
   */
  formats?: readonly string[];
  /** Headers of every answer the route itself gives, a 304 included (a deprecated route's Deprecation and Sunset). */
  answerHeaders?: Record<string, string>;
  handler(
    input: {
      params: z.infer<z.ZodObject<P>>;
      query: z.infer<z.ZodObject<Q>>;
      body: z.infer<B>;
      /** Pass it to `as(caller)` for every call: a list's calls collect its data versions through it. */
      caller: AnsweringCaller;
      /** A conditional PUT or DELETE: the row revision its If-Match named, for the service's write to check under the row's lock. */
      ifRevision?: string;
      /** The media type to answer in, of the route's `formats`. */
      format?: string;
    },
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<unknown>;
  /**
   * A list's, planning answer's or queue's weak ETag: the version of the caller's data behind the
   * answer (each owning service's, e.g. `planning-<version>-<today>`,
   * `catalogue-<version>.pricing-<version>`; clients.ts dataVersionOf), never read after the data.
   * With If-None-Match it is read first (GetAccountVersion calls), and a current one is a 304
   * without computing the answer; without, each service reads it with the answer's first call to
   * it, and the answer carries it (no call more).
   */
  dataVersion?: DataVersionOf;
  /** The route's own error handler (what it throws goes on to the gateway's). */
  errorHandler?: (error: Error, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

export interface RouteContext {
  app: FastifyInstance;
  openapi: OpenApi;
  authenticate(request: FastifyRequest): Promise<Caller>;
  authenticateAdmin(request: FastifyRequest): Promise<void>;
  /** Idempotency-Key claims (CONTRACT "Retries"); absent: the header is ignored. */
  idempotency?: IdempotencyKeys;
  /** Per-account rate limits (CONTRACT "Rate limits"); absent: none. */
  rateLimiter?: RateLimiter;
}

/**
 * What a request costs of its account's bucket: a read 1, a write 1 per item, at least
 * MIN_WRITE_COST and at most MAX_WRITE_COST. Items are the elements of every array of the body at
 * any depth (a batch's elements, and the lines nested in them: a purchase order's items and their
 * deliveries, a transaction's items and statements; the `keys` of DELETE /prices/batch) and the
 * values of a mapping table's `mappingValues`; read before validation, so whatever the body says.
 */
export function costOf(method: string, body: unknown): number {
  if (method === "GET" || method === "HEAD") return 1;
  return Math.min(MAX_WRITE_COST, Math.max(MIN_WRITE_COST, MAX_WRITE_COST - budgetLeft(body, MAX_WRITE_COST)));
}

/**
 * What is left of `budget` once the body's items are counted off it; counting stops when it is
 * spent, so a 10 MiB body is not walked to its end. Objects are walked for the arrays they hold.
 */
function budgetLeft(value: unknown, budget: number): number {
  if (value === null || typeof value !== "object") return budget;
  if (Array.isArray(value)) {
    budget -= value.length;
    for (let i = 0; i < value.length && budget > 0; i++) budget = budgetLeft(value[i], budget);
    return budget;
  }
  const fields = value as Record<string, unknown>;
  for (const name in fields) {
    if (budget <= 0) break;
    const field = fields[name];
    if (name === "mappingValues" && field !== null && typeof field === "object" && !Array.isArray(field)) {
      for (const _ in field) if (--budget <= 0) break;
    } else budget = budgetLeft(field, budget);
  }
  return budget;
}

/**
 * A path or query value with a NUL character: no resource can have one (Postgres cannot store
 * it), so it is that parameter's 400 here rather than an unnamed failure further in.
 */
function refuseNul(values: unknown, where: string): void {
  for (const [name, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
    if ((Array.isArray(value) ? value : [value]).some((v) => typeof v === "string" && v.includes("\u0000"))) {
      const details = [{ path: name, message: "must be text without NUL characters" }];
      throw new HttpError(400, `invalid ${where}: ${describe(details)}`.slice(0, 500), details);
    }
  }
}

/**
 * A query parameter the route does not take is a 400 naming it: ignored, a misspelt filter
 * (`?pagesize=5`, `?key=` where the route takes `keys`) would answer unfiltered data as if it
 * were the answer asked for.
 */
function refuseUnknownQuery(values: unknown, known: string[]): void {
  const unknown = Object.keys((values ?? {}) as Record<string, unknown>).filter((name) => !known.includes(name));
  if (!unknown.length) return;
  const takes = known.length ? `this route takes ${known.join(", ")}` : "this route takes no query parameters";
  const details = unknown.map((name) => ({ path: name, message: `is not a query parameter of this route (${takes})` }));
  throw new HttpError(400, `invalid query: ${describe(details)}`.slice(0, 500), details, {}, "unknown_field");
}

function parse<T extends z.ZodType>(schema: T, value: unknown, where: string, prefix = ""): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = violations(result.error, prefix);
  // Only fields the route does not take: a client written for another version drops them and sends again.
  const unknownOnly = result.error.issues.every((issue) => issue.code === "unrecognized_keys");
  throw new HttpError(400, `invalid ${where}: ${describe(details)}`.slice(0, 500), details, {}, unknownOnly ? "unknown_field" : undefined);
}

export function route<P extends Shape = {}, Q extends Shape = {}, B extends z.ZodType = z.ZodUndefined>(
  ctx: RouteContext,
  spec: RouteSpec<P, Q, B>,
): void {
  const params = z.strictObject(spec.params ?? ({} as P));
  const query = z.object(spec.query ?? ({} as Q));
  const knownQuery = Object.keys(spec.query ?? {});
  ctx.openapi.add(spec);
  const callers = new WeakMap<FastifyRequest, Caller>();
  // Writes of an account may carry Idempotency-Key; the key a request claimed, until its answer is kept.
  const idempotency = spec.auth === "bearer" && IDEMPOTENT_METHODS.includes(spec.method) ? ctx.idempotency : undefined;
  const claims = new WeakMap<FastifyRequest, string>();
  // A list asked without If-None-Match: the versions its calls collect, for the ETag of its answer.
  const collecting = new WeakMap<FastifyRequest, { versions: DataVersions; caller: Caller; asked: string }>();
  /** What the request asked for, as its weak ETag names it: the URL, and a format other than the route's default. */
  const askedOf = (request: FastifyRequest, format: string | undefined) => (format && format !== spec.formats![0] ? `${request.url}\n${format}` : request.url);
  const tagCollected = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const collected = collecting.get(request);
    if (!collected || reply.statusCode !== 200) return payload;
    collecting.delete(request);
    const { versions, caller, asked } = collected;
    const version = await spec.dataVersion!.collected(versions, caller).catch((err: unknown) => {
      request.log.warn({ err }, "data version not read; answering without an ETag");
      return undefined;
    });
    if (version !== undefined) reply.header("ETag", weakTagOf(version, caller, spec.method, asked));
    return payload;
  };
  // A single resource of an account: strong ETag, If-None-Match, If-Match.
  const singleResource = isSingleResource(spec);
  const conditionalWrite = singleResource && (spec.method === "PUT" || spec.method === "DELETE");
  // A list of an account without a data version to read first: a weak tag of its answer.
  const answerTaggedList = spec.auth === "bearer" && spec.method === "GET" && !singleResource && !spec.dataVersion;
  const keepClaimed = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const key = claims.get(request);
    if (key === undefined) return payload;
    claims.delete(request);
    await keepAnswer(idempotency!, callers.get(request)!, key, reply, payload, spec.shownOnce);
    return payload;
  };
  ctx.app.route({
    method: spec.method,
    url: spec.url,
    bodyLimit: spec.bodyLimit,
    errorHandler: spec.errorHandler,
    // An account's route: answers it refuses before the handler are rate limited too (rate-limits.ts).
    config: { rateLimited: spec.auth === "bearer", maxObjectKeys: spec.maxObjectKeys },
    // Before the body is read: a stranger's body is never buffered nor parsed, and a declared
    // length over the limit is refused before a byte of it arrives.
    onRequest: async (request) => {
      const limit = spec.bodyLimit ?? ctx.app.initialConfig.bodyLimit ?? Infinity;
      if (Number(request.headers["content-length"] ?? 0) > limit) throw new HttpError(413, "request body is too large");
      if (spec.auth === "bearer") callers.set(request, await ctx.authenticate(request));
      if (spec.auth === "admin") await ctx.authenticateAdmin(request);
    },
    onSend: [
      // A single resource's answer gets its ETag (304 when the client has it).
      ...(singleResource && spec.method === "GET" ? [async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => tagAnswer(request, reply, payload)] : []),
      ...(answerTaggedList ? [async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => tagAnswer(request, reply, payload, true)] : []),
      // Before the first byte of the answer, a stream's too.
      ...(spec.dataVersion ? [tagCollected] : []),
      // The answer as sent (serialized, before compression), kept for the key's retries.
      ...(idempotency ? [(request: FastifyRequest, reply: FastifyReply, payload: unknown) => keepClaimed(request, reply, payload)] : []),
    ],
    handler: async (request, reply) => {
      if (spec.answerHeaders) reply.headers(spec.answerHeaders);
      // The request id travels with the caller to the service (X-Request-Id on the Connect call).
      const caller = { ...(callers.get(request) ?? { accountId: "", apiKeyId: "" }), requestId: request.id };
      if (spec.auth === "bearer" && ctx.rateLimiter) await spendOrRefuse(ctx.rateLimiter, request, reply, caller.accountId, costOf(spec.method, request.body));
      const key = idempotency ? idempotencyKeyOf(request) : undefined;
      if (key !== undefined) {
        if (!(await claimOrAnswer(idempotency!, caller, key, request, reply, spec.shownOnce))) return reply;
        claims.set(request, key);
      }
      const ifRevision = conditionalWrite ? await checkIfMatch(ctx.app, request, ctx.app.hasRoute({ method: "GET", url: spec.url })) : undefined;
      // Another representation answers another Accept: caches keep them apart.
      if (spec.formats) reply.header("Vary", "Accept");
      const format = spec.formats ? negotiated(request.headers.accept, spec.formats) : undefined;
      refuseNul(request.params, "path");
      refuseNul(request.query, "query");
      refuseUnknownQuery(request.query, knownQuery);
      const input: { params: z.infer<z.ZodObject<P>>; query: z.infer<z.ZodObject<Q>>; body: z.infer<B>; caller: AnsweringCaller; ifRevision?: string; format?: string } = {
        params: parse(params, request.params, "path"),
        query: parse(query, request.query, "query"),
        body: spec.body ? parse(spec.body, request.body, "body") : (undefined as z.infer<B>),
        caller,
        ifRevision,
        format,
      };
      if (spec.dataVersion && request.headers["if-none-match"] === undefined) {
        // No tag to compare: the services read their versions with the answer's calls (tagCollected).
        const versions = spec.dataVersion.collect();
        collecting.set(request, { versions, caller, asked: askedOf(request, format) });
        input.caller = { ...caller, dataVersions: versions };
      } else if (spec.dataVersion) {
        // A version that cannot be read (a service older than the gateway mid-rollout, a slow
        // store) costs the tag, never the answer: the query runs and the answer has no ETag.
        const version = await spec.dataVersion.read(caller).catch((err: unknown) => {
          request.log.warn({ err }, "data version not read; answering without an ETag");
          return undefined;
        });
        if (version !== undefined) {
          const tag = weakTagOf(version, caller, spec.method, askedOf(request, format));
          reply.header("ETag", tag);
          if (!matchesNoneOf(request, tag)) return reply.code(304).send();
        }
      }
      const result = await inRequestSpan(request, () => spec.handler(input, request, reply)).catch((err: unknown) => {
        // The service found the row at another revision than the If-Match's: written meanwhile.
        if (ifRevision !== undefined && err instanceof ConnectError && err.code === Code.Aborted) throw ifMatchFailed();
        throw err;
      });
      if (!reply.sent && result !== undefined) return reply.send(result);
      return reply;
    },
  });
}

/** A repeatable query parameter: `?skus=a&skus=b` or `?skus=a,b`. */
export function repeatable(item: z.ZodType<string, string> = z.string().min(1).max(500), max = 1000) {
  return z
    .union([z.string().max(100_000), z.array(z.string().max(500)).max(max)])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(",")).map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(item).max(max))
    .optional();
}

/**
 * A batch body validated item by item (a bad item is that item's 400, the rest still go through),
 * published in the document as an array of `item`.
 */
export function batchOf(item: z.ZodType, max: number) {
  return documentAs(z.array(z.unknown()).min(1).max(max), z.array(item).min(1).max(max));
}
