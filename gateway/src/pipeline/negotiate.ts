import { negotiated } from "../http/negotiation";
import type { StepOf } from "./step";

/**
 * A route that answers in more than one media type (RouteSpec.formats): the one the request's
 * Accept takes (none of them: a 406, before the query is checked), for the handler and the ETag.
 * Each representation is its own to caches: `Vary: Accept`.
 */
export const negotiate: StepOf = (_ctx, spec) => {
  const formats = spec.formats;
  if (!formats) return undefined;
  return {
    run(request, reply, input) {
      reply.header("Vary", "Accept");
      input.format = negotiated(request.headers.accept, formats);
      return undefined;
    },
  };
};
