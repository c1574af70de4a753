import { STATUS_CODES } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { ValidationErrorsSchema } from "@analytics/contracts";

/** A wrong input field: `path` as the client wrote it (`items[3].sku`). */
export interface FieldViolation {
  path: string;
  message: string;
}

export type ErrorKind =
  | "invalid"
  | "not_found"
  | "conflict"
  | "unauthenticated"
  | "permission_denied"
  | "too_many_requests"
  | "unavailable"
  /** A conditional write whose resource changed since the revision it named (the gateway's 412). */
  | "changed";

/** The one error type of the domain; everything else that escapes a handler is an internal error. */
export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: FieldViolation[] = [],
  ) {
    super(message);
    this.name = "DomainError";
  }
}

export const invalid = (message: string, details: FieldViolation[] = []) => new DomainError("invalid", message, details);
export const notFound = (message: string) => new DomainError("not_found", message);
export const conflict = (message: string) => new DomainError("conflict", message);
export const changed = (message: string) => new DomainError("changed", message);

const codeOfKind: Record<ErrorKind, Code> = {
  invalid: Code.InvalidArgument,
  not_found: Code.NotFound,
  conflict: Code.AlreadyExists,
  unauthenticated: Code.Unauthenticated,
  permission_denied: Code.PermissionDenied,
  too_many_requests: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
  changed: Code.Aborted,
};

export const INTERNAL_MESSAGE = "internal error";

/**
 * Service side: a DomainError becomes its Connect code (field violations travel as a typed detail);
 * a ConnectError passes; anything else is reported as `onInternal` and leaves as a bare Internal,
 * so no stack, SQL text or host name crosses the wire.
 */
export function toConnectError(error: unknown, onInternal?: (error: unknown) => void): ConnectError {
  if (error instanceof DomainError) {
    const details = error.details.length
      ? [{ desc: ValidationErrorsSchema, value: { violations: error.details } }]
      : [];
    return new ConnectError(error.message, codeOfKind[error.kind], undefined, details);
  }
  if (error instanceof ConnectError) return error;
  const infrastructure = infrastructureKind(error);
  if (infrastructure === "conflict") return new ConnectError(CONFLICT_MESSAGE, Code.AlreadyExists);
  if (infrastructure === "unavailable") return new ConnectError(UNAVAILABLE_MESSAGE, Code.Unavailable);
  // DEADLINE_EXCEEDED: by gRPC's definition, a change it answers may have been made all the same.
  if (infrastructure === "outcome_unknown") return new ConnectError(OUTCOME_UNKNOWN_MESSAGE, Code.DeadlineExceeded);
  if (isPostgresDataException(error)) {
    // Postgres refused a value the checks let through (a NUL in text, an out-of-range number):
    // the caller's input, so a 400 — without the driver's text.
    return new ConnectError(DATA_EXCEPTION_MESSAGE, Code.InvalidArgument);
  }
  onInternal?.(error);
  return new ConnectError(INTERNAL_MESSAGE, Code.Internal);
}

export const UNAVAILABLE_MESSAGE = "a service is unavailable, try again";
export const OUTCOME_UNKNOWN_MESSAGE = "no answer in time: the write may or may not have been applied; read the resource before sending it again";
const CONFLICT_MESSAGE = "the change conflicts with an existing one";
/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 5;

const NETWORK_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EAI_AGAIN", "EPIPE"]);

/**
 * SQLSTATEs that say "not now" rather than "wrong": serialization failure and deadlock (retried
 * first, see libs/db retrying), query cancelled (statement_timeout), shutdown, "the database
 * system is starting up", too many connections, and every connection exception (class 08).
 */
const UNAVAILABLE_SQLSTATE = /^(40001|40P01|57014|57P0[1-4]|53300|08...)$/;
/**
 * node-postgres and knex errors without a SQLSTATE (knex puts the SQL before the driver's text): a
 * dead or frozen server, a connection the server terminated (a statement sent on it after the
 * driver saw it die is "not queryable"), a pool with no free connection.
 */
const UNAVAILABLE_DRIVER = /Connection terminated|not queryable|Query read timeout|timeout exceeded when trying to connect|Timeout acquiring a connection/;
/** libs/db's codes: a transaction rolled back because its call ended, and a COMMIT whose answer was lost. */
const CALL_ENDED = "CALL_ENDED";
const OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN";

/**
 * The database's errors mapped once, for services and the gateway alike: a unique violation is a
 * conflict (409); a database that is down, starting, shutting down, frozen or out of connections,
 * a transaction that kept failing to serialize, and one rolled back because its call's deadline
 * passed, is "unavailable" (503: nothing was written); a COMMIT whose answer was lost is
 * "outcome_unknown" (504); anything else is not an infrastructure error (undefined).
 */
export function infrastructureKind(error: unknown): "conflict" | "unavailable" | "outcome_unknown" | undefined {
  const e = error as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown } | undefined;
  if (!e || typeof e !== "object") return undefined;
  if (e.code === "23505") return "conflict";
  if (e.code === OUTCOME_UNKNOWN) return "outcome_unknown";
  if (e.code === CALL_ENDED) return "unavailable";
  if (typeof e.code === "string" && (UNAVAILABLE_SQLSTATE.test(e.code) || NETWORK_ERRORS.has(e.code))) return "unavailable";
  if (e.name === "KnexTimeoutError") return "unavailable";
  if (typeof e.message === "string" && UNAVAILABLE_DRIVER.test(e.message)) return "unavailable";
  // pg reports a refused connection to a host with several addresses as an AggregateError.
  if (Array.isArray(e.errors) && e.errors.length && e.errors.every((inner) => infrastructureKind(inner) === "unavailable")) return "unavailable";
  return undefined;
}

const DATA_EXCEPTION_MESSAGE = "a value in the request cannot be stored";

/** SQLSTATE class 22, "data exception": caused by the data sent, not by the system. */
export function isPostgresDataException(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown };
  return typeof e?.code === "string" && /^22[0-9A-Z]{3}$/.test(e.code) && typeof e.severity === "string";
}

/**
 * Every `code` an error answer may carry, with its status and what it tells a client: the one list
 * behind the GeneralResponse schema's enum (the OpenAPI document) and the code of each answer
 * (`generalResponse`). The first code of a status is that status's code; the others are narrower
 * ones a route names itself. Additive only: a code is never renamed or removed.
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, meaning: "the request is not valid; `details` names each wrong field" },
  unknown_field: { status: 400, meaning: "every wrong field is one this route does not take (a query parameter or body field): `details` names them" },
  unauthenticated: { status: 401, meaning: "missing, malformed, expired or revoked credentials" },
  forbidden: { status: 403, meaning: "the credentials may not do this" },
  not_found: { status: 404, meaning: "no such resource, or no such route" },
  method_not_allowed: { status: 405, meaning: "the path has no such method (`Allow` lists its methods)" },
  not_acceptable: { status: 406, meaning: "no representation the `Accept` header takes" },
  conflict: { status: 409, meaning: "the change conflicts with the resource's current state or another resource" },
  idempotency_key_in_use: { status: 409, meaning: "a request with this Idempotency-Key is still running, or ended without a kept answer" },
  import_finished: { status: 409, meaning: "the import has already finished: it can no longer be cancelled" },
  gone: { status: 410, meaning: "the resource existed and is gone for good" },
  precondition_failed: { status: 412, meaning: "If-Match names no current ETag of the resource; nothing was changed" },
  payload_too_large: { status: 413, meaning: "the request body is too large" },
  request_timeout: { status: 408, meaning: "the request did not arrive in time (REQUEST_TIMEOUT_MS; a file upload: that long without a byte); the connection is closed" },
  uri_too_long: { status: 414, meaning: "a path parameter is too long" },
  unsupported_media_type: { status: 415, meaning: "the body is not `application/json` (or its Content-Encoding is not one the gateway reads)" },
  idempotency_key_reused: { status: 422, meaning: "this Idempotency-Key was used for another request" },
  rate_limited: { status: 429, meaning: "over a rate limit or a brake; retry after `Retry-After` seconds" },
  client_closed_request: { status: 499, meaning: "the client left before the answer (logged; no client reads it)" },
  internal: { status: 500, meaning: "an internal error; nothing internal is disclosed" },
  not_implemented: { status: 501, meaning: "a service does not know the call (a newer gateway than the service)" },
  service_unavailable: { status: 503, meaning: "a dependency is unavailable or too slow; nothing was written; retry after `Retry-After` seconds" },
  outcome_unknown: { status: 504, meaning: "a write got no answer in time and may still have been applied: read the resource before sending it again" },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

const codeOfStatus = new Map<number, ErrorCode>();
for (const code of ERROR_CODE_NAMES) if (!codeOfStatus.has(ERROR_CODES[code].status)) codeOfStatus.set(ERROR_CODES[code].status, code);

/** The code an error answer of `statusCode` carries unless it names a narrower one; a status without one takes its class's. */
export function errorCodeOf(statusCode: number): ErrorCode {
  return codeOfStatus.get(statusCode) ?? (statusCode >= 500 ? "internal" : "validation_failed");
}

/** The contract's error body (and the body of a successful delete). */
export interface GeneralResponse {
  statusCode: number;
  error: string;
  message: string;
  details?: FieldViolation[];
  /** On every error answer (ERROR_CODES); absent on a success. */
  code?: ErrorCode;
}

/** Every error body is made here: its `code` is the narrower one given, else its status's. */
export function generalResponse(statusCode: number, message: string, details?: FieldViolation[], code?: ErrorCode): GeneralResponse {
  const body: GeneralResponse = {
    statusCode,
    error: statusCode < 300 ? "" : (STATUS_CODES[statusCode] ?? "Error"),
    message,
  };
  if (details && details.length) body.details = details;
  if (statusCode >= 400) body.code = code ?? errorCodeOf(statusCode);
  return body;
}

const httpOfCode: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.OutOfRange]: 400,
  [Code.FailedPrecondition]: 409,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 412,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.Unavailable]: 503,
  [Code.Unimplemented]: 501,
};

/** connect-node reports a refused connection as Internal; its cause tells it was the network. */
function unreachable(error: ConnectError): boolean {
  const cause = error.cause as { code?: string } | undefined;
  return typeof cause?.code === "string" && NETWORK_ERRORS.has(cause.code);
}

/**
 * Gateway side: a service's Connect error as the HTTP answer of the contract. Internal and unknown
 * errors keep no message of theirs; a service that cannot be reached is a 503 (answered with
 * Retry-After): nothing was written. A call that got no answer within its deadline, or whose
 * COMMIT's answer was lost, is, for a `write`, a 504 whose code says the outcome is unknown (the
 * service may commit it a moment later); a read's is a 503. Without `write`, a call is taken
 * for a write.
 */
export function httpErrorOf(error: unknown, write = true): GeneralResponse {
  // The gateway's own database (accounts, keys) fails the same ways a service's does.
  const infrastructure = error instanceof ConnectError ? undefined : infrastructureKind(error);
  if (infrastructure === "unavailable") return generalResponse(503, UNAVAILABLE_MESSAGE);
  if (infrastructure === "conflict") return generalResponse(409, CONFLICT_MESSAGE);
  if (infrastructure === "outcome_unknown") return outcomeUnknown(write);
  if (!(error instanceof ConnectError) && isPostgresDataException(error)) return generalResponse(400, DATA_EXCEPTION_MESSAGE);
  const connectError = ConnectError.from(error);
  if (connectError.code === Code.DeadlineExceeded) return outcomeUnknown(write);
  const statusCode = unreachable(connectError) ? 503 : (httpOfCode[connectError.code] ?? 500);
  if (statusCode >= 500 && statusCode !== 503 && statusCode !== 501) {
    return generalResponse(statusCode, INTERNAL_MESSAGE);
  }
  if (statusCode === 503) return generalResponse(503, UNAVAILABLE_MESSAGE);
  const details = connectError
    .findDetails(ValidationErrorsSchema)
    .flatMap((d) => d.violations.map((v) => ({ path: v.path, message: v.message })));
  return generalResponse(statusCode, connectError.rawMessage, details);
}

const outcomeUnknown = (write: boolean) => (write ? generalResponse(504, OUTCOME_UNKNOWN_MESSAGE) : generalResponse(503, UNAVAILABLE_MESSAGE));
