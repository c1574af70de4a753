import type { StepOf } from "./step";

/**
 * A route's own headers (a deprecated route's Deprecation and Sunset) on every answer its handler
 * gives: a 429, a 412, a 304 and a replay included.
 */
export const answerHeaders: StepOf = (_ctx, spec) => {
  const headers = spec.answerHeaders;
  if (!headers) return undefined;
  return {
    run(_request, reply) {
      reply.headers(headers);
      return undefined;
    },
  };
};
