import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "@analytics/auth";
import type { DataVersions } from "@analytics/rpc";
import { matchesNoneOf, weakTagOf } from "../http/conditional";
import { ANSWERED, type Exchange, type StepOf } from "./step";

/**
 * The weak ETag of a list, planning answer or queue: the version of the caller's data behind it
 * (RouteSpec.dataVersion). With If-None-Match it is read first, a current tag a 304 without
 * computing the answer; without, the services answer it with the answer's calls. After validate:
 * a bad query is a 400, never a 304. A version not read costs the tag, never the answer.
 */
export const dataVersion: StepOf = (_ctx, spec) => {
  const of = spec.dataVersion;
  if (!of) return undefined;
  const unread = (request: FastifyRequest) => (err: unknown) => void request.log.warn({ err }, "data version not read; answering without an ETag");
  /** What the request asked for, as its tag names it: the URL, and a format other than the route's default (negotiate). */
  const askedOf = (request: FastifyRequest, format: string | undefined) => (format && format !== spec.formats?.[0] ? `${request.url}\n${format}` : request.url);
  const tagOf = (version: string | undefined, caller: Caller, asked: string) => (version === undefined ? undefined : weakTagOf(version, caller, spec.method, asked));
  const readFirst = async (request: FastifyRequest, reply: FastifyReply, input: Exchange) => {
    const tag = tagOf(await of.read(input.caller).catch(unread(request)), input.caller, askedOf(request, input.format));
    if (tag === undefined) return undefined;
    reply.header("ETag", tag);
    if (matchesNoneOf(request, tag)) return undefined;
    reply.code(304).send();
    return ANSWERED;
  };
  // The versions a request's calls collect, until its answer (a 200) is tagged: before its first byte, a stream's too.
  const collecting = new WeakMap<FastifyRequest, { versions: DataVersions; caller: Caller; asked: string }>();
  return {
    run(request, reply, input) {
      if (request.headers["if-none-match"] !== undefined) return readFirst(request, reply, input);
      const versions = of.collect();
      collecting.set(request, { versions, caller: input.caller, asked: askedOf(request, input.format) });
      input.caller = { ...input.caller, dataVersions: versions };
      return undefined;
    },
    onSend: async (request, reply, payload) => {
      const collected = collecting.get(request);
      if (!collected || reply.statusCode !== 200) return payload;
      collecting.delete(request);
      const tag = tagOf(await of.collected(collected.versions, collected.caller).catch(unread(request)), collected.caller, collected.asked);
      if (tag !== undefined) reply.header("ETag", tag);
      return payload;
    },
  };
};
