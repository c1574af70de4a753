import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

// The served OpenAPI document as a contract on answers: the e2e client checks every answer it
// gets, and the gateway's own tests the answers it makes itself (timeouts, refusals).

export type OpenApiDocument = { paths: Record<string, Record<string, any>>; components: Record<string, any> };
const validators = new WeakMap<OpenApiDocument, Map<string, ValidateFunction | null>>();

/**
 * The response contract: `body` as the document the platform serves describes `status` of the
 * operation `method path`. Throws naming the operation when the status is undocumented or the
 * body does not match; paths the document does not describe (/healthz, /docs) are not checked.
 */
export function checkResponse(doc: OpenApiDocument, method: string, path: string, status: number, body: unknown, contentType: string | null): void {
  const bare = path.split("?")[0];
  const template = Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(bare));
  const operation = template && doc.paths[template][method.toLowerCase()];
  if (!operation) return;
  const where = `${method} ${template} ${status}`;
  const cache = validators.get(doc) ?? new Map<string, ValidateFunction | null>();
  validators.set(doc, cache);
  if (!cache.has(where)) {
    let response = operation.responses[String(status)];
    if (!response) throw new Error(`contract: ${where} is not documented (documented: ${Object.keys(operation.responses).join(", ")})`);
    if (response.$ref) response = doc.components.responses[response.$ref.split("/").pop()];
    const schema = response.content?.["application/json"]?.schema;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    // The document's own format: exact decimals, which arrive as JSON numbers.
    ajv.addFormat("decimal", { type: "number", validate: (n: number) => Number.isFinite(n) });
    cache.set(where, schema ? ajv.compile({ ...schema, components: doc.components }) : null);
  }
  const validate = cache.get(where);
  if (!validate || !contentType?.includes("json")) return;
  if (!validate(body)) throw new Error(`contract: ${where} answered a body the document does not allow: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
}

