import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { generalResponse } from "@analytics/errors";
import { HttpError } from "./errors";
import { fieldPath } from "./validation";

/**
 * JSON nesting allowed in a request: far beyond any resource of the API (a product with its
 * externalAttributes is under 10), well under what protobuf (100 levels, two per JSON level in a
 * Struct) and a recursive JSON.stringify survive.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * The first problem in a parsed value that no route can store: too deep, or a string that is not
 * well-formed UTF-16. Every string and field name of a 500-order batch passes here, so the walk
 * allocates nothing until it finds a problem; the path is built on the way back from it.
 */
function problemIn(value: unknown): { path: string; message: string } | undefined {
  const found = problemAt(value, 0);
  return found && { path: fieldPath(found.at.slice(0, MAX_JSON_DEPTH)), message: found.message };
}

function problemAt(value: unknown, depth: number): { at: (string | number)[]; message: string } | undefined {
  if (depth > MAX_JSON_DEPTH) return { at: [], message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  if (typeof value === "string") return value.isWellFormed() ? undefined : { at: [], message: "contains a lone UTF-16 surrogate (not valid Unicode)" };
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = problemAt(value[i], depth + 1);
      if (found) return (found.at.unshift(i), found);
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!key.isWellFormed()) return { at: [], message: "has a field name with a lone UTF-16 surrogate" };
    const found = problemAt((value as Record<string, unknown>)[key], depth + 1);
    if (found) return (found.at.unshift(key), found);
  }
  return undefined;
}

/**
 * Input that passes JSON parsing but would break later (protobuf's depth limit, a stack overflow,
 * invalid UTF-8 on the wire) is a 400 naming the field, before any route looks at it.
 */
export function refuseHostileInput(app: FastifyInstance): void {
  app.addHook("preValidation", async (request: FastifyRequest) => {
    for (const [where, value] of [["path", request.params], ["query", request.query], ["body", request.body]] as const) {
      const problem = problemIn(value);
      if (problem) throw new HttpError(400, `invalid ${where}: ${problem.path}: ${problem.message}`, [problem]);
    }
  });
}

/**
 * Fastify's router errors (a path parameter over maxParamLength, a malformed URL) as
 * GeneralResponses. No hook runs for them: `headers` sets what the hooks give every answer.
 */
export async function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply, headers: (request: FastifyRequest, reply: FastifyReply) => Promise<void>): Promise<void> {
  const tooLong = error.code === "FST_ERR_MAX_PARAM_LENGTH";
  reply.status(tooLong ? 414 : 400);
  await headers(request, reply).catch((err: unknown) => request.log.warn({ err }, "headers of a router refusal not set"));
  void reply.send(tooLong ? generalResponse(414, "a path parameter is too long") : generalResponse(400, "the URL is malformed"));
}
