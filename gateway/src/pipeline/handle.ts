import { Code, ConnectError } from "@connectrpc/connect";
import { ifMatchFailed } from "../http/conditional";
import { inRequestSpan } from "../http/telemetry";
import { ANSWERED, type StepOf } from "./step";

/**
 * The route's handler, inside the request's span (its service calls carry the trace on), and its
 * answer sent: what it returns, unless it sent the answer itself.
 */
export const handle: StepOf = (_ctx, spec) => ({
  async run(request, reply, input) {
    const result = await inRequestSpan(request, () => spec.handler(input as never, request, reply)).catch((err: unknown) => {
      // The service found the row at another revision than the If-Match's: written meanwhile.
      if (input.ifRevision !== undefined && err instanceof ConnectError && err.code === Code.Aborted) throw ifMatchFailed();
      throw err;
    });
    if (!reply.sent && result !== undefined) reply.send(result);
    return ANSWERED;
  },
});
