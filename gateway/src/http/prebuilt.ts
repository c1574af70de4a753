import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { stringifyRest } from "@analytics/contracts";
import { matchesNoneOf, strongTagOf } from "./conditional";
import { docsContentSecurityPolicy } from "./headers";

type Encoding = "br" | "gzip" | "identity";

/**
 * The content-coding to answer with: br, else gzip, when Accept-Encoding takes it (`q=0` refuses
 * one, `*` stands for any not named), else none.
 */
export function acceptedEncoding(header: string | string[] | undefined): Encoding {
  const weights = new Map<string, number>();
  for (const part of (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",")) {
    const [name, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    if (name) weights.set(name, q ? Number(q.slice(2)) || 0 : 1);
  }
  for (const encoding of ["br", "gzip"] as const) if ((weights.get(encoding) ?? weights.get("*") ?? 0) > 0) return encoding;
  return "identity";
}

/**
 * An answer that never changes while the process runs (the OpenAPI document): serialised and
 * compressed (br, gzip) once, at start, so a request costs a lookup and a write however many
 * clients ask. Each coding is its own representation with its own strong ETag (RFC 9110 8.8.3);
 * If-None-Match with it is a 304, and `Cache-Control: no-cache` has clients ask again with it.
 */
export class PrebuiltAnswer {
  private readonly codings: Record<Encoding, { bytes: Buffer; tag: string }>;

  constructor(
    bytes: Buffer,
    private readonly contentType: string,
  ) {
    const tag = strongTagOf(bytes).slice(1, -1);
    // The best gzip and br but brotli's slowest level (ten times longer than 9 for 6 % less): 25 ms for the 430 kB document.
    const br = brotliCompressSync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } });
    this.codings = {
      identity: { bytes, tag: `"${tag}"` },
      gzip: { bytes: gzipSync(bytes, { level: 9 }), tag: `"${tag}-gzip"` },
      br: { bytes: br, tag: `"${tag}-br"` },
    };
  }

  send(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const encoding = acceptedEncoding(request.headers["accept-encoding"]);
    const { bytes, tag } = this.codings[encoding];
    reply.header("Vary", "Accept-Encoding").header("ETag", tag).header("Cache-Control", "no-cache");
    if (!matchesNoneOf(request, tag)) return reply.code(304).send();
    if (encoding !== "identity") reply.header("Content-Encoding", encoding);
    return reply.type(this.contentType).send(bytes);
  }
}

/**
 * The OpenAPI document, anonymous: `/v2/api/openapi.json`, and `/docs` (swagger-ui) with the
 * document it reads (`/docs/json`, `/docs/yaml`), each answered pre-built.
 */
export async function serveDocument(app: FastifyInstance, document: Record<string, unknown>): Promise<void> {
  const json = new PrebuiltAnswer(Buffer.from(stringifyRest(document)), "application/json; charset=utf-8");
  // Not compressed again per request (@fastify/compress): the answer carries its coding.
  app.get("/v2/api/openapi.json", { compress: false }, async (request, reply) => json.send(request, reply));
  await app.register(swagger, { mode: "static", specification: { document: document as never } });
  const yaml = new PrebuiltAnswer(Buffer.from(app.swagger({ yaml: true })), "application/x-yaml");
  const prebuilt: Record<string, PrebuiltAnswer> = { "/docs/json": json, "/docs/yaml": yaml };
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    ...docsContentSecurityPolicy,
    // swagger-ui's own routes would serialise and compress the document per request.
    uiHooks: { onRequest: async (request, reply) => prebuilt[request.routeOptions.url ?? ""]?.send(request, reply) },
  });
}
