import { createHash, type Hash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Db } from "@analytics/db";
import { HttpError } from "./errors";

/** The methods a key applies to (CONTRACT "Retries"). */
export const IDEMPOTENT_METHODS = ["POST", "PUT", "PATCH", "DELETE"];

/** 1 to 255 printable ASCII characters. */
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

/** Expired claims deleted per statement: each stays short; a prune repeats it until none are left. */
const PRUNE_BATCH = 1000;
const PRUNE_EVERY_MS = 60_000;

/** What a claim found: the request may run, or a kept answer, or why it may not. */
export type Claim =
  | { kind: "claimed" }
  | { kind: "replay"; status: number; contentType: string | null; body: string | null; fileDigest: string | null }
  | { kind: "other-request" }
  | { kind: "running" };

interface KeptRow {
  fingerprint: string;
  status: number | null;
  content_type: string | null;
  body: string | null;
  file_digest: string | null;
}

/**
 * Whose keys: the account's (CONTRACT: at most once per account and key). The API key that made
 * a claim is part of its fingerprint, so another API key of the account sending the same request
 * under the same key gets the 422 of another request, never the first key's kept answer (purchase
 * orders are per API key).
 */
export interface KeyOwner {
  accountId: string;
  apiKeyId: string;
}

/**
 * Idempotency-Key: a write carrying one is done at most once per (account, key) while the key
 * lives (IDEMPOTENCY_KEY_TTL_SECONDS, 24 h). The claim is a row inserted before the write, in its
 * own statement, so of any number of requests at once on any number of gateways exactly one
 * runs; its answer is kept in the row when it is sent (5xx: the row is deleted, a retry runs
 * again). A gateway that dies between the write and keeping its answer leaves the claim without
 * an answer: retries are 409 until the key expires, since nobody can tell whether the write was
 * done, and at most once is the promise.
 */
export class IdempotencyKeys {
  private readonly pruner: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly ttlSeconds: number,
    private readonly logger: Logger,
  ) {
    this.pruner = setInterval(() => void this.prune().catch((err) => this.logger.warn({ err }, "idempotency keys not pruned")), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  close(): void {
    clearInterval(this.pruner);
  }

  async claim(owner: KeyOwner, key: string, fingerprint: string): Promise<Claim> {
    const { accountId } = owner;
    // A claim that lost its row in between (released after a 5xx, or expired) is tried again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rows: claimed } = await this.db.raw<{ rows: unknown[] }>(
        `INSERT INTO idempotency_keys (account_id, key, fingerprint) VALUES (:accountId, :key, :fingerprint)
         ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = now(), status = NULL, content_type = NULL, body = NULL, file_digest = NULL
           WHERE idempotency_keys.created_at <= now() - make_interval(secs => :ttl)
         RETURNING 1`,
        { accountId, key, fingerprint, ttl: this.ttlSeconds },
      );
      if (claimed.length) return { kind: "claimed" };
      // A statement of its own: it sees the row the conflicting insert committed.
      const kept: KeptRow | undefined = await this.db("idempotency_keys")
        .where({ account_id: accountId, key })
        .where("created_at", ">", this.db.raw("now() - make_interval(secs => ?)", [this.ttlSeconds]))
        .first("fingerprint", "status", "content_type", "body", "file_digest");
      if (!kept) continue;
      if (kept.fingerprint !== fingerprint) return { kind: "other-request" };
      if (kept.status === null) return { kind: "running" };
      return { kind: "replay", status: kept.status, contentType: kept.content_type, body: kept.body, fileDigest: kept.file_digest };
    }
    return { kind: "running" };
  }

  /** The answer of a claimed request, kept for its retries (with its uploaded file's digest, if it read one whole). */
  async keep(owner: KeyOwner, key: string, status: number, contentType: string | null, body: string | null, fileDigest?: string): Promise<void> {
    await this.db("idempotency_keys").where({ account_id: owner.accountId, key }).whereNull("status").update({ status, content_type: contentType, body, file_digest: fileDigest ?? null });
  }

  /** A claimed request that failed on the server's side (5xx): its retry runs again. */
  async release(owner: KeyOwner, key: string): Promise<void> {
    await this.db("idempotency_keys").where({ account_id: owner.accountId, key }).whereNull("status").delete();
  }

  /** Deletes every expired claim, a batch per statement, so pruning keeps up with any rate of keyed writes. */
  async prune(): Promise<number> {
    let pruned = 0;
    for (;;) {
      const { rowCount } = await this.db.raw<{ rowCount: number }>(
        `DELETE FROM idempotency_keys WHERE (account_id, key) IN (
           SELECT account_id, key FROM idempotency_keys WHERE created_at <= now() - make_interval(secs => :ttl)
           ORDER BY created_at LIMIT :batch FOR UPDATE SKIP LOCKED)`,
        { ttl: this.ttlSeconds, batch: PRUNE_BATCH },
      );
      pruned += rowCount;
      if (rowCount < PRUNE_BATCH) return pruned;
    }
  }
}

/** On a replay whose kept answer left out a field shown only once: that field's name. */
export const REDACTED_HEADER = "Idempotent-Redacted";

/** A JSON object answer without `field`: what is kept of an answer holding a secret. */
function without(body: string, field: string): string {
  const answer: unknown = JSON.parse(body);
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return body;
  delete (answer as Record<string, unknown>)[field];
  return JSON.stringify(answer);
}

/** The request's Idempotency-Key, if it sent one; a malformed one is a 400 naming the header. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const value = request.headers["idempotency-key"];
  if (value === undefined) return undefined;
  // Node joins a header sent twice into "a, b", which would pass as one key: counted as sent.
  let sent = 0;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === "idempotency-key") sent++;
  if (sent > 1) {
    const details = [{ path: "Idempotency-Key", message: `was sent ${sent} times; send it once` }];
    throw new HttpError(400, `invalid header: Idempotency-Key was sent ${sent} times; send it once`, details);
  }
  if (typeof value !== "string" || !KEY_FORMAT.test(value)) {
    const details = [{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters, sent once" }];
    throw new HttpError(400, "invalid header: Idempotency-Key must be 1 to 255 printable ASCII characters, sent once", details);
  }
  return value;
}

/** What makes two requests the same: the API key, method, path with query, and body. */
export function fingerprintOf(request: FastifyRequest, apiKeyId: string): string {
  return createHash("sha256")
    .update(`${apiKeyId} ${request.method} ${request.url}\n`)
    .update(request.body === undefined ? "" : JSON.stringify(request.body))
    .digest("base64url");
}

/**
 * An upload's file (POST /imports) streams past the claim, so its fingerprint holds no body: the
 * file is hashed as the route reads it (fileOf) and its digest kept with the answer; a repeat
 * reads and hashes its own file before its kept answer is replayed, and another file is a 422.
 */
const uploads = new WeakMap<FastifyRequest, { hash: Hash; digest?: string }>();

/** The request's body as an upload route reads it: hashed as it streams when it claimed a key. */
export function fileOf(request: FastifyRequest): AsyncIterable<Buffer> {
  const upload = uploads.get(request);
  if (!upload) return request.raw;
  return (async function* () {
    for await (const chunk of request.raw as AsyncIterable<Buffer>) {
      upload.hash.update(chunk);
      yield chunk;
    }
    // Only a file read to its end has a digest: an answer given part way is replayed to any file.
    upload.digest = upload.hash.digest("base64url");
  })();
}

/** The digest of the request's whole body, read to its end (a repeat of an upload); undefined past `limit` bytes. */
async function digestOfBody(request: FastifyRequest, limit: number): Promise<string | undefined> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of request.raw as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limit) return undefined;
    hash.update(chunk);
  }
  return hash.digest("base64url");
}

const otherRequest = (message: string) => new HttpError(422, message, [{ path: "Idempotency-Key", message: "was used for another request" }]);

/**
 * Runs before a write's handler: claims the key, or answers for it (a replay of the kept answer,
 * 422 for another request under the key, 409 while the first runs). True when the handler may run.
 * `shownOnce`: the answer's field that is never kept (a secret); a replay says it left it out.
 * `uploadLimit`: the route streams a file of at most that many bytes (fileOf), compared by digest.
 */
export async function claimOrAnswer(
  keys: IdempotencyKeys,
  owner: KeyOwner,
  key: string,
  request: FastifyRequest,
  reply: FastifyReply,
  shownOnce?: string,
  uploadLimit?: number,
): Promise<boolean> {
  const claim = await keys.claim(owner, key, fingerprintOf(request, owner.apiKeyId));
  switch (claim.kind) {
    case "claimed":
      if (uploadLimit !== undefined) uploads.set(request, { hash: createHash("sha256") });
      return true;
    case "replay":
      if (uploadLimit !== undefined && claim.fileDigest !== null && (await digestOfBody(request, uploadLimit)) !== claim.fileDigest) {
        throw otherRequest(`Idempotency-Key ${JSON.stringify(key)} was already used for another file; use a new key`);
      }
      reply.status(claim.status).header("Idempotent-Replayed", "true");
      if (shownOnce) reply.header(REDACTED_HEADER, shownOnce);
      if (claim.contentType) reply.header("Content-Type", claim.contentType);
      await reply.send(claim.body ?? undefined);
      return false;
    case "other-request":
      throw otherRequest("Idempotency-Key was already used for another request (method, path, body or API key); use a new key");
    case "running":
      throw new HttpError(
        409,
        "a request with this Idempotency-Key is still running, or was interrupted before its answer was kept (then whether it was done is unknown: read the resource, and resend with a new key)",
        [{ path: "Idempotency-Key", message: "is in use by a request without an answer" }],
        {},
        "idempotency_key_in_use",
      );
  }
}

/**
 * Keeps a claimed request's answer (a 5xx releases the key instead); a failure to keep it is
 * logged, the answer still goes out. `shownOnce`: a field of the answer that is not kept.
 * A 504 (`outcome_unknown`: the write may have committed after the gateway stopped waiting) keeps
 * the claim without an answer, as a gateway killed mid-write does: its retries are 409, never a
 * second write.
 */
export async function keepAnswer(keys: IdempotencyKeys, owner: KeyOwner, key: string, reply: FastifyReply, payload: unknown, shownOnce?: string): Promise<void> {
  try {
    if (reply.statusCode === 504) return;
    if (reply.statusCode >= 500) return await keys.release(owner, key);
    const contentType = reply.getHeader("content-type");
    const body = typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString("utf8") : null;
    const kept = shownOnce && body ? without(body, shownOnce) : body;
    await keys.keep(owner, key, reply.statusCode, typeof contentType === "string" ? contentType : null, kept, uploads.get(reply.request)?.digest);
  } catch (err) {
    reply.log.error({ err, idempotencyKey: key }, "idempotent answer not kept: retries of this key answer 409 until it expires");
  }
}
