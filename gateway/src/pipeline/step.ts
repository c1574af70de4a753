import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onSendHookHandler } from "fastify";
import type { z } from "zod";
import type { Caller } from "@analytics/auth";
import type { AnsweringCaller, DataVersionOf } from "../clients";
import type { OpenApi, OperationSpec } from "../http/openapi";
import type { IdempotencyKeys } from "../http/idempotency";
import type { RateLimiter } from "../limits/rate-limiter";

export type Shape = z.ZodRawShape;

/**
 * One REST operation: its zod schemas are both the validation at the edge and its OpenAPI
 * description (OperationSpec), so the document cannot drift from the code.
 */
export interface RouteSpec<P extends Shape, Q extends Shape, B extends z.ZodType> extends OperationSpec<P, Q, B> {
  bodyLimit?: number;
  /** The body is a file streamed on as it arrives (an import): REQUEST_TIMEOUT_MS counts from its last byte (request-deadline.ts). */
  upload?: boolean;
  /** Keys one object of the body may have, when the route takes wider objects than MAX_JSON_OBJECT_KEYS (hostile-input.ts). */
  maxObjectKeys?: number;
  /**
   * A field of the answer shown only once (a webhook's signing secret): an answer kept for its
   * Idempotency-Key leaves it out, and its replay says so (Idempotent-Redacted).
   */
  shownOnce?: string;
  /**
   * The media types the route answers in, its default first (planning's JSON and CSV): chosen by
   * the request's Accept (negotiate.ts; none of them acceptable: a 406), passed to the handler
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
  /** The steps every request of a route meets, in order; absent: PIPELINE (route.ts). Tests take one out. */
  pipeline?: readonly StepOf[];
}

/** A route's spec as every step sees it (its own zod types erased). */
export type AnyRouteSpec = RouteSpec<Shape, Shape, z.ZodType>;

/** What the steps learn of one request on its way to the handler: its input (validate fills in params, query and body). */
export interface Exchange {
  params: unknown;
  query: unknown;
  body: unknown;
  caller: AnsweringCaller;
  ifRevision?: string;
  /** The media type negotiate chose, of the route's `formats`. */
  format?: string;
}

/** A step's word that it gave the answer itself (a 304, a replay): the steps after it do not run. */
export const ANSWERED = "answered";

/**
 * One concern of every request, built once per route (nothing is built per request). Each part is
 * optional: `onRequest` runs before the body is read, `run` in the handler in the pipeline's
 * order (synchronous, or a promise of ANSWERED when it answered), `onSend` on the answer before
 * it is sent, in the reverse order (the answer goes back through the steps).
 */
export interface Step {
  onRequest?: onRequestHookHandler;
  run?(request: FastifyRequest, reply: FastifyReply, input: Exchange): Promise<unknown> | undefined;
  onSend?: onSendHookHandler;
}

/** A step for one route, or undefined when the concern is not the route's (idempotency of a GET). */
export type StepOf = (ctx: RouteContext, spec: AnyRouteSpec) => Step | undefined;
