import type { GeneralResponse } from "../generated/schemas";

/** What an error answer's `code` says (the document's GeneralResponse.code). */
export type ErrorCode = NonNullable<GeneralResponse["code"]>;

/** A field the request got wrong, as `details` names it. */
export interface FieldViolation {
  path: string;
  message: string;
}

/** An error answer of the API: its status, `code`, `message`, `details` and the request's id. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly code: ErrorCode | undefined;
  readonly details: FieldViolation[];

  constructor(
    readonly status: number,
    readonly body: Partial<GeneralResponse> | undefined,
    /** X-Request-Id of the answer: quote it to support. */
    readonly requestId: string | undefined,
    readonly headers: Headers | undefined,
  ) {
    super(body?.message ?? `HTTP ${status}`);
    this.code = body?.code ?? undefined;
    this.details = body?.details ?? [];
  }
}

/** 400: the request is not valid; `details` names each wrong field. */
export class BadRequestError extends ApiError {
  override name = "BadRequestError";
}
/** 401: missing, wrong, expired or revoked credentials (after one renewal of the token). */
export class AuthenticationError extends ApiError {
  override name = "AuthenticationError";
}
export class PermissionDeniedError extends ApiError {
  override name = "PermissionDeniedError";
}
export class NotFoundError extends ApiError {
  override name = "NotFoundError";
}
/** 409: a conflict with the resource's state, a key still in use, an import already finished. */
export class ConflictError extends ApiError {
  override name = "ConflictError";
}
/** 410: gone for good (an import's expired results). */
export class GoneError extends ApiError {
  override name = "GoneError";
}
/** 412: If-Match named no current ETag; nothing was changed. */
export class PreconditionFailedError extends ApiError {
  override name = "PreconditionFailedError";
}
/** 413, 414, 415, 422 and other 4xx the API answers with a code. */
export class UnprocessableError extends ApiError {
  override name = "UnprocessableError";
}
/** 429: over a rate limit, after the retries. */
export class RateLimitError extends ApiError {
  override name = "RateLimitError";
}
/** 5xx after the retries; `outcome_unknown` (504): read the resource before writing again. */
export class ServerError extends ApiError {
  override name = "ServerError";
}

/** No answer at all: the connection failed or was cut (after the retries). */
export class ConnectionError extends Error {
  override name = "ConnectionError";
  constructor(override readonly cause: unknown) {
    super(`no answer: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

const byStatus: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  412: PreconditionFailedError,
  429: RateLimitError,
};

/** The error class of a status. */
export function errorOf(status: number, body: Partial<GeneralResponse> | undefined, headers: Headers | undefined): ApiError {
  const Class = byStatus[status] ?? (status >= 500 ? ServerError : status >= 400 ? UnprocessableError : ApiError);
  return new Class(status, body, headers?.get("x-request-id") ?? undefined, headers);
}
