import { z } from "zod";
import type { RouteSpec } from "./route";

type AnyRoute = RouteSpec<any, any, any>;

const jsonSchema = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" });

/** Builds the OpenAPI 3.1 document from the routes' own zod schemas. */
export class OpenApi {
  private readonly paths: Record<string, Record<string, unknown>> = {};

  constructor(private readonly info: { title: string; version: string; description: string }) {}

  add(spec: AnyRoute): void {
    const path = spec.url.replace(/:([A-Za-z_]+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [name, schema] of Object.entries((spec.params ?? {}) as Record<string, z.ZodType>)) {
      parameters.push({ name, in: "path", required: true, schema: jsonSchema(schema, "input") });
    }
    for (const [name, schema] of Object.entries((spec.query ?? {}) as Record<string, z.ZodType>)) {
      const s = jsonSchema(schema, "input") as { description?: string };
      parameters.push({ name, in: "query", required: !schema.safeParse(undefined).success, description: s.description, schema: s });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.schema ? { content: { [r.contentType ?? "application/json"]: { schema: jsonSchema(r.schema, "output") } } } : {}),
      };
    }
    const operation: Record<string, unknown> = {
      summary: spec.summary,
      tags: [spec.tag],
      operationId: `${spec.method.toLowerCase()}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string) => (c ?? "").toUpperCase())}`,
      parameters,
      responses,
      security: spec.auth === "bearer" ? [{ bearer: [] }] : spec.auth === "admin" ? [{ admin: [] }] : [],
    };
    if (spec.body) operation.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(spec.body, "input") } } };
    (this.paths[path] ??= {})[spec.method.toLowerCase()] = operation;
  }

  document(): Record<string, unknown> {
    return {
      openapi: "3.1.0",
      info: this.info,
      servers: [{ url: "/" }],
      paths: this.paths,
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "POST /v2/api/auth" },
          admin: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN of the deployment" },
        },
      },
    };
  }
}
