import { z } from "zod";
import { documentAs } from "../http/openapi";
import { answerHeaders } from "./answer-headers";
import { authenticate } from "./authenticate";
import { conditional } from "./conditional";
import { dataVersion } from "./data-version";
import { declaredLength } from "./declared-length";
import { handle } from "./handle";
import { idempotency } from "./idempotency";
import { negotiate } from "./negotiate";
import { rateLimit } from "./rate-limit";
import { ANSWERED, type Exchange, type RouteContext, type RouteSpec, type Shape, type Step, type StepOf } from "./step";
import { validate } from "./validate";

export type { RouteContext, RouteSpec } from "./step";

/**
 * The steps a request of every route meets, in this order (docs/architecture.md draws them). A
 * new concern is a new step here, in a file of its own.
 */
export const PIPELINE: readonly StepOf[] = [declaredLength, authenticate, answerHeaders, rateLimit, idempotency, conditional, negotiate, validate, dataVersion, handle];

/** Before any step has run: no caller yet (authenticate names it). */
const NOBODY = { accountId: "", apiKeyId: "", requestId: "" };

/** One REST operation: its steps built once, its description added to the OpenAPI document. */
export function route<P extends Shape = {}, Q extends Shape = {}, B extends z.ZodType = z.ZodUndefined>(ctx: RouteContext, spec: RouteSpec<P, Q, B>): void {
  ctx.openapi.add(spec);
  const steps = (ctx.pipeline ?? PIPELINE).map((stepOf) => stepOf(ctx, spec)).filter((step): step is Step => step !== undefined);
  const runs = steps.flatMap((step) => (step.run ? [step.run] : []));
  ctx.app.route({
    method: spec.method,
    url: spec.url,
    bodyLimit: spec.bodyLimit,
    errorHandler: spec.errorHandler,
    // An account's route: answers it refuses before the handler are rate limited too (limits/rate-limits.ts).
    config: { rateLimited: spec.auth === "bearer", maxObjectKeys: spec.maxObjectKeys, upload: spec.upload },
    onRequest: steps.flatMap((step) => (step.onRequest ? [step.onRequest] : [])),
    // The answer goes back through the steps: the last one's first.
    onSend: steps.flatMap((step) => (step.onSend ? [step.onSend] : [])).reverse(),
    handler: async (request, reply) => {
      const input: Exchange = { params: undefined, query: undefined, body: undefined, caller: NOBODY, ifRevision: undefined, format: undefined };
      for (const run of runs) {
        const running = run(request, reply, input);
        if (running !== undefined && (await running) === ANSWERED) return reply;
      }
      // A pipeline without handle: a 500, never a request left without an answer.
      throw new Error(`no step answered ${spec.method} ${spec.url}`);
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
