import { z } from "zod";
import { parse, refuseNul, refuseUnknownQuery } from "../http/validation";
import type { StepOf } from "./step";

/**
 * The path, query and body checked against the route's zod schemas (the same that describe it in
 * the OpenAPI document), each failure a 400 naming its fields; the parsed values are the handler's.
 */
export const validate: StepOf = (_ctx, spec) => {
  const params = z.strictObject(spec.params ?? {});
  const query = z.object(spec.query ?? {});
  const knownQuery = Object.keys(spec.query ?? {});
  const body = spec.body;
  return {
    run(request, _reply, input) {
      refuseNul(request.params, "path");
      refuseNul(request.query, "query");
      refuseUnknownQuery(request.query, knownQuery);
      input.params = parse(params, request.params, "path");
      input.query = parse(query, request.query, "query");
      input.body = body ? parse(body, request.body, "body") : undefined;
      return undefined;
    },
  };
};
