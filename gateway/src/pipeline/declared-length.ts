import type { onRequestHookHandler } from "fastify";
import { HttpError } from "../http/errors";
import type { StepOf } from "./step";

/**
 * Before the body is read: a declared length over the route's limit is a 413 before a byte of the
 * body arrives (and before the token is checked).
 */
export const declaredLength: StepOf = (ctx, spec) => {
  const limit = spec.bodyLimit ?? ctx.app.initialConfig.bodyLimit ?? Infinity;
  // A callback hook: no promise per request.
  const onRequest: onRequestHookHandler = (request, _reply, done) => {
    if (Number(request.headers["content-length"] ?? 0) > limit) return done(new HttpError(413, "request body is too large"));
    done();
  };
  return { onRequest };
};
