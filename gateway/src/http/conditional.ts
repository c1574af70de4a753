import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { HttpError } from "./errors";

/**
 * Conditional requests on single resources (CONTRACT "Conditional requests", RFC 9110): a GET's
 * answer carries a strong ETag, the hash of the representation as sent, so it changes whenever
 * any byte of the resource does (its updatedAt included); If-None-Match with it is a 304. A
 * resource that can be written conditionally prefixes the revision of its row (answerRevision),
 * which If-Match names back to the service's write.
 */
export function strongTagOf(payload: string | Buffer, revision?: string): string {
  const hash = createHash("sha256").update(payload).digest("base64url").slice(0, 32);
  return revision === undefined ? `"${hash}"` : `"${revision}-${hash}"`;
}

/** The row revision a strong tag carries (digits, a dash, then the 32 characters of the hash). */
function revisionOf(tag: string): string | undefined {
  return /^"(\d+)-[A-Za-z0-9_-]{32}"$/.exec(tag)?.[1];
}

const revisions = new WeakMap<FastifyReply, string>();

/**
 * A single resource's GET, of a resource with conditional writes: the revision of the row the
 * answer was read from (the service's GetXResponse.revision), for its strong ETag. A service that
 * sends none (older than the gateway, mid-rollout) leaves the plain hash: If-Match is then only
 * the gateway's check.
 */
export function answerRevision<T extends { revision: string }>(reply: FastifyReply, answer: T): T {
  if (answer.revision) revisions.set(reply, answer.revision);
  return answer;
}

/** The entity-tags a header lists (`"a", W/"b"`), or "*". */
function tagsOf(header: string | undefined): string[] | "*" {
  if (header === undefined) return [];
  if (header.trim() === "*") return "*";
  return header.split(",").map((t) => t.trim()).filter(Boolean);
}

/**
 * A weak ETag of a list, a planning answer or the event queue: the version of the account's data
 * behind it (which the service owning the data moves on with every write of that account), and a
 * hash of what was asked (method, path and query: another filter or page is another tag) and by
 * which account and API key (a purchase order list answers the calling key's own orders), so that
 * a tag never stands for another caller's answer nor another query's.
 */
export function weakTagOf(dataVersion: string, caller: { accountId: string; apiKeyId: string }, method: string, url: string): string {
  const asked = createHash("sha256").update(`${caller.accountId}\n${caller.apiKeyId}\n${method}\n${url}`).digest("base64url").slice(0, 22);
  return `W/"${dataVersion}-${asked}"`;
}

/** Whether the request's If-None-Match lets `tag` be answered in full (weak comparison, RFC 9110 13.1.2): false when the client has it. */
export function matchesNoneOf(request: FastifyRequest, tag: string): boolean {
  const wanted = tagsOf(request.headers["if-none-match"]);
  const opaque = tag.replace(/^W\//, "");
  return !(wanted === "*" || wanted.some((t) => t.replace(/^W\//, "") === opaque));
}

/**
 * onSend of a single resource's GET: the ETag, and 304 without a body when the client has it (weak
 * comparison, as RFC 9110 asks of If-None-Match). `weak`: a list whose data has no version to read
 * first (webhook endpoints, a delivery log) is tagged by its answer's hash too, as a weak tag like
 * every list's; its 304 saves the transfer, not the query.
 */
export function tagAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown, weak = false): unknown {
  if (reply.statusCode !== 200 || (typeof payload !== "string" && !Buffer.isBuffer(payload))) return payload;
  const tag = weak ? `W/${strongTagOf(payload)}` : strongTagOf(payload, revisions.get(reply));
  reply.header("ETag", tag);
  const wanted = tagsOf(request.headers["if-none-match"]);
  if (wanted === "*" || wanted.some((t) => t.replace(/^W\//, "") === tag.replace(/^W\//, ""))) {
    reply.code(304);
    reply.removeHeader("Content-Type");
    reply.removeHeader("Content-Length");
    return null;
  }
  return payload;
}

/**
 * If-Match on a PUT or DELETE of a single resource: the resource's current tag is read through its
 * own GET (same path, same caller), compared strongly; a stale tag, or no resource, is a 412 and
 * the write does not run. The answer is the revision the tag carries: the route passes it to the
 * service's write, which checks it again under the row's lock (a write landing between this read
 * and that write is a 412 too, IF_MATCH_FAILED). A resource without a GET of its own (`readable`
 * false: an FX rate, an event's payload) has no ETag a client could hold, so any listed tag is a
 * 412 (RFC 9110 13.1.1: none matches) and only `*` lets the write run.
 */
export async function checkIfMatch(app: FastifyInstance, request: FastifyRequest, readable: boolean): Promise<string | undefined> {
  const wanted = tagsOf(request.headers["if-match"] as string | undefined);
  if (wanted !== "*" && !wanted.length) return undefined;
  if (!readable) {
    if (wanted === "*") return undefined;
    throw new HttpError(412, "If-Match: this resource serves no ETag, so none can match; send `*` or no If-Match", [{ path: "If-Match", message: "names no ETag this resource has" }]);
  }
  const current = await app.inject({ method: "GET", url: request.url, headers: { authorization: request.headers.authorization ?? "", "x-request-id": request.id } });
  if (current.statusCode === 404) throw new HttpError(412, "If-Match: the resource does not exist", [{ path: "If-Match", message: "no current resource" }]);
  if (current.statusCode !== 200) throw new HttpError(current.statusCode >= 500 ? 503 : current.statusCode, "If-Match: the resource's current version could not be read");
  const tag = current.headers.etag as string;
  if (wanted !== "*" && !wanted.includes(tag)) throw ifMatchFailed({ ETag: tag });
  return wanted === "*" ? undefined : revisionOf(tag);
}

/** The 412 of a stale If-Match, found by the check or by the service's write. */
export function ifMatchFailed(headers: Record<string, string> = {}): HttpError {
  return new HttpError(412, "If-Match: the resource changed since that ETag; read it again", [{ path: "If-Match", message: "is not the resource's current ETag" }], headers);
}
