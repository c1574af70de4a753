import type { FastifyRequest } from "fastify";
import type { Caller } from "@analytics/auth";
import type { StepOf } from "./step";

const NOBODY = { accountId: "", apiKeyId: "" };

/**
 * Before the body is read: an account's route takes a valid token of an active key, an admin
 * route the admin token (a stranger's body is never buffered nor parsed). The caller, with the
 * request id it carries to the services (X-Request-Id on the Connect call), is the handler's.
 */
export const authenticate: StepOf = (ctx, spec) => {
  const callers = new WeakMap<FastifyRequest, Caller>();
  const onRequest =
    spec.auth === "bearer"
      ? async (request: FastifyRequest) => void callers.set(request, await ctx.authenticate(request))
      : spec.auth === "admin"
        ? (request: FastifyRequest) => ctx.authenticateAdmin(request)
        : undefined;
  return {
    onRequest,
    run(request, _reply, input) {
      input.caller = { ...(callers.get(request) ?? NOBODY), requestId: request.id };
      return undefined;
    },
  };
};
