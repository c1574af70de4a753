import { httpErrorOf, toConnectError } from "@analytics/errors";

/** What the gateway would answer (to a write) for an error a service's repository threw. */
export const answerOf = (error: unknown) => httpErrorOf(toConnectError(error));
export const statusOf = (error: unknown) => answerOf(error).statusCode;

/** The error `work` fails with; a test failure when it succeeds. */
export async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}
