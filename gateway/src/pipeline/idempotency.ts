import type { FastifyReply, FastifyRequest } from "fastify";
import { claimOrAnswer, IDEMPOTENT_METHODS, idempotencyKeyOf, keepAnswer, type KeyOwner } from "../http/idempotency";
import { ANSWERED, type StepOf } from "./step";

/**
 * An account's write with an Idempotency-Key runs at most once per key: the key is claimed before
 * the write, or the kept answer is replayed (422 for another request, 409 while the first runs);
 * the answer as sent (serialized, before compression) is kept for the key's retries.
 */
export const idempotency: StepOf = (ctx, spec) => {
  const keys = ctx.idempotency;
  if (!keys || spec.auth !== "bearer" || !IDEMPOTENT_METHODS.includes(spec.method)) return undefined;
  // The key a request claimed, and whose, until its answer is kept.
  const claims = new WeakMap<FastifyRequest, { key: string; owner: KeyOwner }>();
  const claim = async (request: FastifyRequest, reply: FastifyReply, owner: KeyOwner, key: string) => {
    if (!(await claimOrAnswer(keys, owner, key, request, reply, spec.shownOnce, spec.upload ? (spec.bodyLimit ?? Number.POSITIVE_INFINITY) : undefined))) return ANSWERED;
    claims.set(request, { key, owner });
  };
  return {
    run(request, reply, input) {
      const key = idempotencyKeyOf(request);
      return key === undefined ? undefined : claim(request, reply, input.caller, key);
    },
    onSend: async (request, reply, payload) => {
      const claimed = claims.get(request);
      if (claimed === undefined) return payload;
      claims.delete(request);
      await keepAnswer(keys, claimed.owner, claimed.key, reply, payload, spec.shownOnce);
      return payload;
    },
  };
};
