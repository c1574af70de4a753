import { z } from "zod";
import type { RouteSpec } from "./route";

type AnyRoute = RouteSpec<any, any, any>;

/** Builds the OpenAPI 3.1 document from the routes' own zod schemas. */
export class OpenApi {
  private readonly paths: Record<string, Record<string, unknown>> = {};
  /** Schemas named with `.meta({ id })`, shared by reference. */
  private readonly schemas: Record<string, unknown> = {};

  constructor(private readonly info: { title: string; version: string; description: string }) {}

  /** JSON Schema of a zod schema; its named parts move to components and are referenced from there. */
  private jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
    const { $schema: _, $defs, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, any>;
    const relink = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/'));
    // Input and output shapes of one named schema may differ (defaults): inputs get their own name.
    const name = (id: string) => (io === "input" ? `${id}Input` : id);
    const renamed = (value: unknown) =>
      io === "input" ? JSON.parse(JSON.stringify(value).replace(/"#\/components\/schemas\/([^"]+)"/g, '"#/components/schemas/$1Input"')) : value;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) this.schemas[name(id)] = renamed(relink(def));
    return renamed(relink(rest));
  }

  add(spec: AnyRoute): void {
    const path = spec.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [name, schema] of Object.entries((spec.params ?? {}) as Record<string, z.ZodType>)) {
      parameters.push({ name, in: "path", required: true, schema: this.jsonSchema(schema, "input") });
    }
    for (const [name, schema] of Object.entries((spec.query ?? {}) as Record<string, z.ZodType>)) {
      const s = this.jsonSchema(schema, "input") as { description?: string };
      parameters.push({ name, in: "query", required: !schema.safeParse(undefined).success, description: s.description, schema: s });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.schema ? { content: { [r.contentType ?? "application/json"]: { schema: this.jsonSchema(r.schema, "output") } } } : {}),
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
    if (spec.body) operation.requestBody = { required: true, content: { "application/json": { schema: this.jsonSchema(spec.body, "input") } } };
    (this.paths[path] ??= {})[spec.method.toLowerCase()] = operation;
  }

  document(): Record<string, unknown> {
    return {
      openapi: "3.1.0",
      info: this.info,
      servers: [{ url: "/" }],
      paths: this.paths,
      components: {
        schemas: this.schemas,
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "POST /v2/api/auth" },
          admin: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN of the deployment" },
        },
      },
    };
  }
}
