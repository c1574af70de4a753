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
 * Object keys and array elements of one body, at any depth, together. A wide body costs CPU per
 * field long after it is parsed (validation, conversion to protobuf, the services' checks): this
 * bounds that before JSON.parse. The densest legitimate body within the 10 MiB limit holds fewer:
 * a batch of 500 purchase orders filled with minimal lines (`{"externalRowID":"1","key":"K","quantity":1}`,
 * 4 fields in ~45 bytes) is ~930,000; 1000 products with every field, 100 attributes and 50 cost
 * values each is ~350,000.
 */
export const MAX_JSON_FIELDS = 1_000_000;

/**
 * Keys of one object. V8 keeps a wide object as a hash table: JSON.parse and every walk of it
 * cost several times a narrow one's per field (a 200,000-key object: ~350 ms to parse on a busy
 * 2-core machine). No object of the API has more than ~150 named fields and a free JSON object
 * takes at most MAX_FREE_JSON_FIELDS (values.ts); mapping tables' `mappingValues` take their
 * routes' own `maxObjectKeys`.
 */
export const MAX_JSON_OBJECT_KEYS = 10_000;

declare module "fastify" {
  interface FastifyContextConfig {
    /** Keys one object of the route's body may have (default MAX_JSON_OBJECT_KEYS). */
    maxObjectKeys?: number;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const WHITESPACE = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) WHITESPACE[c] = 1;
/** Bytes of a number or a literal (true, false, null) once it started. */
const IN_TOKEN = new Uint8Array(256);
for (const c of Buffer.from("0123456789+-.eEtruefalsn")) IN_TOKEN[c] = 1;

/**
 * A scan of JSON bytes before they are parsed: more than MAX_JSON_FIELDS fields, an object of more
 * than `maxObjectKeys` keys or a value nested deeper than MAX_JSON_DEPTH is found without building
 * anything: one pass, no allocation per token (the path to the problem is read back from the bytes
 * when found). Malformed JSON is left to JSON.parse, which runs next.
 */
export function jsonShapeProblem(bytes: Uint8Array, maxObjectKeys = MAX_JSON_OBJECT_KEYS): { path: string; message: string } | undefined {
  // Per open container (index 1 is the outermost): an array's current index, or an object's key
  // count and current key (byte offsets of its quoted text).
  const isArray = new Uint8Array(MAX_JSON_DEPTH + 2);
  const index = new Int32Array(MAX_JSON_DEPTH + 2);
  const keyStart = new Int32Array(MAX_JSON_DEPTH + 2);
  const keyEnd = new Int32Array(MAX_JSON_DEPTH + 2);
  const path = (depth: number) => pathAt(bytes, depth, isArray, index, keyStart, keyEnd);
  let depth = 0;
  let fields = 0;
  // In an object, after `{` or `,`: the next string is a key.
  let expectKey = false;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i];
    if (WHITESPACE[c] || c === COLON) continue;
    if (c === COMMA) {
      if (isArray[depth]) index[depth]++;
      else expectKey = true;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth > 0) depth--;
      expectKey = false;
      continue;
    }
    if (c === QUOTE) {
      const start = i;
      for (i++; i < n && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (expectKey) {
        if (++fields > MAX_JSON_FIELDS) return tooManyFields();
        if (++index[depth] > maxObjectKeys) return { path: path(depth - 1), message: `has more than ${maxObjectKeys} fields` };
        keyStart[depth] = start;
        keyEnd[depth] = i + 1;
        expectKey = false;
        continue;
      }
    }
    // A value starts here: an array's element counts as a field (an object's was, by its key).
    if (isArray[depth] && ++fields > MAX_JSON_FIELDS) return tooManyFields();
    if (depth > MAX_JSON_DEPTH) return { path: path(depth), message: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      isArray[depth] = c === OPEN_ARRAY ? 1 : 0;
      index[depth] = 0;
      expectKey = c === OPEN_OBJECT;
    } else if (c !== QUOTE) {
      while (i + 1 < n && IN_TOKEN[bytes[i + 1]]) i++;
    }
  }
  return undefined;
}

function tooManyFields() {
  return { path: "(root)", message: `has more than ${MAX_JSON_FIELDS} fields (object keys and array elements together); send fewer in one request` };
}

/** The path to the current value of container `depth`, its first MAX_JSON_DEPTH steps, as problemIn names it. */
function pathAt(bytes: Uint8Array, depth: number, isArray: Uint8Array, index: Int32Array, keyStart: Int32Array, keyEnd: Int32Array): string {
  const at: (string | number)[] = [];
  for (let d = 1; d <= Math.min(depth, MAX_JSON_DEPTH); d++) {
    if (isArray[d]) {
      at.push(index[d]);
      continue;
    }
    const quoted = Buffer.from(bytes.buffer, bytes.byteOffset + keyStart[d], keyEnd[d] - keyStart[d]).toString("utf8");
    try {
      at.push(JSON.parse(quoted) as string);
    } catch {
      at.push(quoted); // a malformed key: JSON.parse refuses the body anyway
    }
  }
  return fieldPath(at);
}

/** The 400 of a JSON body too wide or too deep to take, found before it is parsed. */
export function refuseJsonShape(bytes: Uint8Array, maxObjectKeys?: number): HttpError | undefined {
  const problem = jsonShapeProblem(bytes, maxObjectKeys);
  return problem && new HttpError(400, `invalid body: ${problem.path}: ${problem.message}`, [problem]);
}

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
