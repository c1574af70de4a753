import { costOf } from "../limits/cost";
import { spendOrRefuse } from "../limits/rate-limits";
import type { StepOf } from "./step";

/**
 * An account's request spends its cost of the account's bucket (a read 1, a write 1 per item), the
 * answer saying what is left (RateLimit headers); over the limit a 429 before any work. Answers
 * refused before this step are charged by installRateLimits (limits/rate-limits.ts).
 */
export const rateLimit: StepOf = (ctx, spec) => {
  const limiter = ctx.rateLimiter;
  if (spec.auth !== "bearer" || !limiter) return undefined;
  return {
    run: (request, reply, input) => spendOrRefuse(limiter, request, reply, input.caller.accountId, costOf(spec.method, request.body)),
  };
};
