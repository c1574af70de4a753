import { Code, ConnectError } from "@connectrpc/connect";
import { ifMatchFailed } from "../http/conditional";
import { inRequestSpan } from "../http/telemetry";
import { ANSWERED, type StepOf } from "./step";

/** The service found the row at another revision than the If-Match's: written meanwhile. */
const staleRevision = (err: unknown) => {
  throw err instanceof ConnectError && err.code === Code.Aborted ? ifMatchFailed() : err;
};

/**
 * The route's handler, inside the request's span (its service calls carry the trace on), and its
 * answer sent: what it returns, unless it sent the answer itself.
 */
export const handle: StepOf = (_ctx, spec) => ({
  run(request, reply, input) {
    const answer = inRequestSpan(request, () => spec.handler(input as never, request, reply));
    return (input.ifRevision === undefined ? answer : answer.catch(staleRevision)).then((result) => {
      if (!reply.sent && result !== undefined) reply.send(result);
      return ANSWERED;
    });
  },
});
