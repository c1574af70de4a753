import { Code, ConnectError } from "@connectrpc/connect";
import {
  DomainError,
  ERROR_CODES,
  ERROR_CODE_NAMES,
  changed,
  conflict,
  generalResponse,
  httpErrorOf,
  invalid,
  notFound,
  toConnectError,
} from "../src";

describe("errors", () => {
  it("maps domain errors to Connect codes and back to HTTP with details", () => {
    const wire = toConnectError(invalid("bad input", [{ path: "items[3].sku", message: "required" }]));
    expect(wire.code).toBe(Code.InvalidArgument);
    expect(httpErrorOf(wire)).toEqual({
      statusCode: 400,
      error: "Bad Request",
      message: "bad input",
      details: [{ path: "items[3].sku", message: "required" }],
      code: "validation_failed",
    });
    expect(httpErrorOf(toConnectError(notFound("event not found")))).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: "event not found",
      code: "not_found",
    });
    expect(httpErrorOf(toConnectError(conflict("already processed"))).statusCode).toBe(409);
    expect(httpErrorOf(toConnectError(new DomainError("too_many_requests", "slow down"))).statusCode).toBe(429);
  });

  it("never lets an internal error's text through", () => {
    const reported: unknown[] = [];
    const wire = toConnectError(new Error('relation "x" does not exist at db.internal:5432'), (e) => reported.push(e));
    expect(wire.code).toBe(Code.Internal);
    expect(reported).toHaveLength(1);
    const body = httpErrorOf(wire);
    expect(body).toEqual({ statusCode: 500, error: "Internal Server Error", message: "internal error", code: "internal" });
    expect(JSON.stringify(httpErrorOf(new ConnectError("secret sql", Code.Unknown)))).not.toMatch(/secret/);
  });

  it("answers 400, without the driver's text, for a value Postgres refuses", () => {
    const pgError = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: "22021", severity: "ERROR" });
    const reported: unknown[] = [];
    const body = httpErrorOf(toConnectError(pgError, (e) => reported.push(e)));
    expect(body).toEqual({ statusCode: 400, error: "Bad Request", message: "a value in the request cannot be stored", code: "validation_failed" });
    expect(reported).toHaveLength(0);
    // Other Postgres errors stay internal (a deadlock is "unavailable": see libs/db faults test).
    expect(toConnectError(Object.assign(new Error("syntax"), { code: "42601", severity: "ERROR" })).code).toBe(Code.Internal);
  });

  it("answers 503 when a service is unreachable", () => {
    expect(httpErrorOf(new ConnectError("connect ECONNREFUSED 10.0.0.3:50055", Code.Unavailable))).toEqual({
      statusCode: 503,
      error: "Service Unavailable",
      message: "a service is unavailable, try again",
      code: "service_unavailable",
    });
  });

  it("answers 503 when the connection to a service is refused", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    expect(httpErrorOf(new ConnectError("connect ECONNREFUSED", Code.Internal, undefined, undefined, refused)).statusCode).toBe(503);
  });

  it("builds the delete body with an empty error and no code", () => {
    expect(generalResponse(200, "deleted")).toEqual({ statusCode: 200, error: "", message: "deleted" });
  });

  it("gives every error answer a code of its status: the status's own, or a narrower one of the same status", () => {
    const answered = [
      [toConnectError(changed("changed meanwhile")), 412, "precondition_failed"],
      [toConnectError(conflict("taken")), 409, "conflict"],
      [new ConnectError("no", Code.FailedPrecondition), 409, "conflict"],
      [toConnectError(new DomainError("unauthenticated", "who")), 401, "unauthenticated"],
      [toConnectError(new DomainError("permission_denied", "no")), 403, "forbidden"],
      [toConnectError(new DomainError("too_many_requests", "slow down")), 429, "rate_limited"],
      [toConnectError(new DomainError("unavailable", "later")), 503, "service_unavailable"],
      [new ConnectError("no such method", Code.Unimplemented), 501, "not_implemented"],
      [new ConnectError("late", Code.DeadlineExceeded), 504, "outcome_unknown"],
    ] as const;
    for (const [error, statusCode, code] of answered) expect(httpErrorOf(error)).toMatchObject({ statusCode, code });
    // A read that got no answer in time is a 503: nothing was written.
    expect(httpErrorOf(new ConnectError("late", Code.DeadlineExceeded), false).code).toBe("service_unavailable");
    for (const code of ERROR_CODE_NAMES) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      const { status } = ERROR_CODES[code];
      expect(generalResponse(status, "x", undefined, code).code).toBe(code);
    }
    expect(generalResponse(409, "in use", undefined, "idempotency_key_in_use").code).toBe("idempotency_key_in_use");
    expect(generalResponse(418, "teapot").code).toBe("validation_failed");
    expect(generalResponse(502, "bad gateway").code).toBe("internal");
  });
});
