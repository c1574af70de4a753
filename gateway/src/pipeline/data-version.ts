import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "@analytics/auth";
import type { DataVersions } from "@analytics/rpc";
import { matchesNoneOf, weakTagOf } from "../http/conditional";
import { ANSWERED, type Exchange, type StepOf } from "./step";

/**
 * A list's, planning answer's or queue's weak ETag, from the version of the caller's data behind it
 * (RouteSpec.dataVersion). With If-None-Match it is read first, and a current tag is a 304 without
 * computing the answer; without, each service reads it with the answer's first call to it and the
 * answer carries it. After validate: a bad query is a 400, never a 304. A version that cannot be
 * read (a service older than the gateway mid-rollout, a slow store) costs the tag, never the answer.
 */
export const dataVersion: StepOf = (_ctx, spec) => {
  const of = spec.dataVersion;
  if (!of) return undefined;
  const unread = (request: FastifyRequest) => (err: unknown) => void request.log.warn({ err }, "data version not read; answering without an ETag");
  const tag = (version: string | undefined, caller: Caller, request: FastifyRequest, reply: FastifyReply) => {
    if (version === undefined) return undefined;
    const etag = weakTagOf(version, caller, spec.method, request.url);
    reply.header("ETag", etag);
    return etag;
  };
  const readFirst = async (request: FastifyRequest, reply: FastifyReply, input: Exchange) => {
    const etag = tag(await of.read(input.caller).catch(unread(request)), input.caller, request, reply);
    if (etag === undefined || matchesNoneOf(request, etag)) return undefined;
    reply.code(304).send();
    return ANSWERED;
  };
  // The versions a request's calls collect, until its answer (200 only) is tagged.
  const collecting = new WeakMap<FastifyRequest, { versions: DataVersions; caller: Caller }>();
  return {
    run(request, reply, input) {
      if (request.headers["if-none-match"] !== undefined) return readFirst(request, reply, input);
      const versions = of.collect();
      collecting.set(request, { versions, caller: input.caller });
      input.caller = { ...input.caller, dataVersions: versions };
      return undefined;
    },
    // Before the first byte of the answer, a stream's too.
    onSend: async (request, reply, payload) => {
      const collected = collecting.get(request);
      if (!collected || reply.statusCode !== 200) return payload;
      collecting.delete(request);
      tag(await of.collected(collected.versions, collected.caller).catch(unread(request)), collected.caller, request, reply);
      return payload;
    },
  };
};
