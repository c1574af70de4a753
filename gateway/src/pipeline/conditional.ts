import type { FastifyRequest } from "fastify";
import { checkIfMatch, tagAnswer } from "../http/conditional";
import { isSingleResource } from "../http/openapi";
import type { Exchange, StepOf } from "./step";

/**
 * Conditional requests on the answer itself (http/conditional.ts): a single resource's GET gets a
 * strong ETag (304 when the client has it), a list without a data version a weak one of its
 * answer; a PUT or DELETE of a single resource with If-Match is a 412 before its service is
 * called when the tag is stale, and hands the tag's revision to the service's write.
 */
export const conditional: StepOf = (ctx, spec) => {
  const single = isSingleResource(spec);
  if (single && spec.method === "GET") return { onSend: async (request, reply, payload) => tagAnswer(request, reply, payload) };
  if (!single && spec.method === "GET" && spec.auth === "bearer" && !spec.dataVersion) return { onSend: async (request, reply, payload) => tagAnswer(request, reply, payload, true) };
  if (!single || (spec.method !== "PUT" && spec.method !== "DELETE")) return undefined;
  // Whether the resource has a GET of its own (an ETag a client could hold): asked once every route is known.
  let readable: boolean | undefined;
  const ifMatched = async (request: FastifyRequest, input: Exchange) => {
    readable ??= ctx.app.hasRoute({ method: "GET", url: spec.url });
    input.ifRevision = await checkIfMatch(ctx.app, request, readable);
  };
  return { run: (request, _reply, input) => (request.headers["if-match"] === undefined ? undefined : ifMatched(request, input)) };
};
