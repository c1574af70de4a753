import { ERROR_CODES, ERROR_CODE_NAMES, type ErrorCode } from "@analytics/errors";
import { servedDocument } from "./document";

const methods = ["get", "put", "post", "patch", "delete"];

describe("the OpenAPI document generates good clients", () => {
  let doc: Record<string, any>;
  beforeAll(async () => {
    doc = await servedDocument();
  });
  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([m]) => methods.includes(m))
        .map(([method, op]) => ({ path, method, op })),
    );
  const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema);

  it("publishes every request body's schema, batch items included (item 1)", () => {
    for (const { op, path, method } of operations()) {
      const schema = op.requestBody?.content["application/json"]?.schema;
      if (!schema) continue;
      expect([`${method} ${path}`, JSON.stringify(schema)]).not.toEqual([`${method} ${path}`, expect.stringContaining('"items":{}')]);
    }
    const items = (path: string, method: string) => resolve(doc.paths[path][method].requestBody.content["application/json"].schema.items);
    expect(items("/v2/api/products", "put").properties).toHaveProperty("productName");
    expect(items("/v2/api/products/batch", "post").required).toContain("key");
    expect(doc.paths["/v2/api/products/keyswitch"].post.requestBody.content["application/json"].schema.items).toEqual({ $ref: "#/components/schemas/KeySwitchRequestInput" });
    expect(doc.components.schemas.KeySwitchRequestInput.required).toEqual(expect.arrayContaining(["oldKey", "key", "sku"]));
    expect(items("/v2/api/products/imageupload/batch", "post").properties).toHaveProperty("imageData");
  });

  it("documents the importable resources and the file types an import takes", () => {
    const create = doc.paths["/v2/api/imports"].post;
    const resource = create.parameters.find((p: any) => p.name === "resource");
    expect([...resource.schema.enum].sort()).toEqual(["distributionorders", "prices", "products", "purchaseorders", "stock", "stocktriggers", "transactions"]);
    expect(Object.keys(create.requestBody.content).sort()).toEqual(["application/x-ndjson", "text/csv"]);
    expect(create.requestBody.content["text/csv"].schema.description).toMatch(/\(products, prices, stock\)/);
  });

  it("documents conditional requests: If-None-Match, the weak ETag and 304 on planning answers, the strong one on single resources", () => {
    const volumes = doc.paths["/v2/api/planning/planned-volumes"].get;
    expect(volumes.parameters).toContainEqual({ $ref: "#/components/parameters/IfNoneMatch" });
    expect(volumes.responses["200"].headers.ETag).toEqual({ $ref: "#/components/headers/WeakETag" });
    expect(volumes.responses["304"].headers.ETag).toEqual({ $ref: "#/components/headers/WeakETag" });
    // A deprecated route sends its Deprecation, Sunset and successor Link on a 304 too.
    for (const header of ["Deprecation", "Sunset", "Link"]) expect(volumes.responses["304"].headers[header]).toEqual(volumes.responses["200"].headers[header]);
    expect(volumes.responses["304"].headers.Deprecation).toBeDefined();
    expect(doc.paths["/v2/api/warehouses/{externalWarehouseID}"].get.responses["200"].headers.ETag).toEqual({ $ref: "#/components/headers/ETag" });
    expect(doc.paths["/v2/api/planning/sales-plans/batch"].post.responses["304"]).toBeUndefined();
  });

  it("documents the weak ETag, If-None-Match and 304 on every list of an account", () => {
    // Webhook endpoints and their deliveries have no account version (deliveries change with every
    // attempt and lease): their weak tag is the answer's hash.
    // Imports likewise (a job's state moves with its worker); their results stream as NDJSON, untagged.
    const weakOf = (path: string) => ({ $ref: `#/components/headers/${path.startsWith("/v2/api/webhooks") || path.startsWith("/v2/api/imports") || path.endsWith("/example") ? "AnswerWeakETag" : "WeakETag"}` });
    const lists = operations().filter(({ path, method, op }) => method === "get" && op.security?.[0]?.bearer && !/\{[^}]+\}$/.test(path) && op.responses["200"].content?.["application/json"]);
    expect(lists.map(({ path }) => path)).toEqual(expect.arrayContaining(["/v2/api/products", "/v2/api/prices", "/v2/api/warehouses/stock", "/v2/api/purchaseorders", "/v2/api/events", "/v2/api/webhooks", "/v2/api/webhooks/{id}/deliveries"]));
    const untagged = lists.filter(
      ({ path, op }) =>
        !op.parameters.some((p: { $ref?: string }) => p.$ref === "#/components/parameters/IfNoneMatch") || op.responses["200"].headers.ETag?.$ref !== weakOf(path).$ref || op.responses["304"]?.headers.ETag?.$ref !== weakOf(path).$ref,
    );
    expect(untagged.map(({ path }) => path)).toEqual([]);
  });

  it("takes at most 1000 items in every batch body (500 purchase orders), as CONTRACT's limits say", () => {
    for (const { op, path, method } of operations()) {
      const schema = resolve(op.requestBody?.content["application/json"]?.schema);
      const arrays = [schema, ...Object.values(schema?.properties ?? {}).map(resolve)].filter((s) => s?.type === "array");
      const limit = path.includes("purchaseorders") ? 500 : 1000;
      for (const a of arrays) expect([`${method} ${path}`, a.maxItems <= limit]).toEqual([`${method} ${path}`, true]);
    }
  });

  it("marks no request field with a default as required: a client may leave it out", () => {
    const requiredWithDefault: string[] = [];
    const visit = (schema: any, where: string, seen: Set<any>) => {
      schema = resolve(schema);
      if (!schema || typeof schema !== "object" || seen.has(schema)) return;
      seen.add(schema);
      for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
        if (resolve(property)?.default !== undefined && schema.required?.includes(name)) requiredWithDefault.push(`${where}.${name}`);
        visit(property, `${where}.${name}`, seen);
      }
      for (const key of ["items", "anyOf", "oneOf", "allOf"]) for (const s of [schema[key]].flat()) visit(s, where, seen);
    };
    for (const { op, path, method } of operations()) visit(op.requestBody?.content["application/json"]?.schema, `${method} ${path}`, new Set());
    expect(requiredWithDefault).toEqual([]);
  });

  it("says what every documented error answer is: a GeneralResponse whose code is the enum of ERROR_CODES, with a code for each status (issue 49 item 5)", () => {
    const general = { $ref: "#/components/schemas/GeneralResponse" };
    expect(doc.components.schemas.GeneralResponse.properties.code).toMatchObject({ type: "string", enum: ERROR_CODE_NAMES });
    const codesOf = (status: number) => ERROR_CODE_NAMES.filter((c) => ERROR_CODES[c].status === status);
    const walked: string[] = [];
    const problems: string[] = [];
    for (const { op, path, method } of operations()) {
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const where = `${method} ${path} ${status}`;
        walked.push(where);
        const response = answer.$ref ? doc.components.responses[answer.$ref.split("/").pop()] : answer;
        const schema = response.content?.["application/json"]?.schema;
        // A GeneralResponse, or (a batch) BatchResponses per item or a GeneralResponse when the gateway answered.
        const alternatives: any[] = schema?.anyOf ?? [schema];
        const itemAnswers = JSON.stringify(schema) === JSON.stringify({ type: "array", items: { $ref: "#/components/schemas/BatchResponse" } });
        if (!itemAnswers && !alternatives.some((s) => JSON.stringify(s) === JSON.stringify(general))) problems.push(`${where}: not a GeneralResponse`);
        if (!codesOf(Number(status)).length) problems.push(`${where}: no code of that status`);
        // A code a description names is one of that status.
        for (const [, named] of `${response.description}`.matchAll(/`code: ([a-z_]+)`/g)) {
          if (ERROR_CODES[named as ErrorCode]?.status !== Number(status)) problems.push(`${where}: names code ${named}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(walked.length).toBeGreaterThan(500);
  });

  it("documents every status with the GeneralResponse, as shared responses (item 2)", () => {
    for (const name of ["Unauthorized", "PayloadTooLarge", "UnsupportedMediaType", "TooManyRequests", "InternalError", "Unavailable"]) {
      expect(doc.components.responses[name].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/GeneralResponse" });
    }
    for (const { op, path, method } of operations()) {
      const statuses = Object.keys(op.responses);
      const where = `${method} ${path}`;
      expect([where, statuses]).toEqual([where, expect.arrayContaining(["500", "503"])]);
      if (op.security.length) expect([where, statuses]).toEqual([where, expect.arrayContaining(["401"])]);
      if (op.requestBody) expect([where, statuses]).toEqual([where, expect.arrayContaining(["413", "415"])]);
    }
    expect(doc.paths["/v2/api/auth"].post.responses).toHaveProperty("429");
    expect(doc.paths["/admin/v1/accounts"].post.responses["429"]).toEqual({ $ref: "#/components/responses/TooManyFailedAttempts" });
    expect(doc.paths["/v2/api/warehouses"].post.responses["429"]).toEqual({ $ref: "#/components/responses/TooManyRequests" });
  });

  it("declares the headers each answer carries: RateLimit on every answer of an account but its 401 and 408, none elsewhere; X-Request-Id on all", () => {
    const headersOf = (response: any): Record<string, unknown> => (response.$ref ? doc.components.responses[response.$ref.split("/").pop()] : response).headers ?? {};
    const wrong: string[] = [];
    for (const { op, path, method } of operations()) {
      const account = Boolean(op.security?.[0]?.bearer);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const names = Object.keys(headersOf(response));
        // A 408 is written on the connection, whatever the request was: its request id only (http/request-deadline.ts).
        const limited = account && status !== "401" && status !== "408";
        if (names.includes("RateLimit") !== limited || names.includes("RateLimit-Policy") !== limited) wrong.push(`${method} ${path} ${status}: RateLimit ${limited ? "missing" : "promised"}`);
        if (!names.includes("X-Request-Id")) wrong.push(`${method} ${path} ${status}: X-Request-Id missing`);
      }
    }
    expect(wrong).toEqual([]);
    const put = doc.paths["/v2/api/warehouses/{externalWarehouseID}"].put.responses;
    // A stale If-Match: the current tag when the gateway compared it; kept answers, 4xx too, replay with Idempotent-Replayed.
    expect(Object.keys(headersOf(put["412"]))).toEqual(expect.arrayContaining(["ETag", "Idempotent-Replayed", "RateLimit"]));
    expect(Object.keys(headersOf(put["400"]))).toContain("Idempotent-Replayed");
    expect(Object.keys(headersOf(doc.paths["/v2/api/warehouses"].get.responses["400"]))).not.toContain("Idempotent-Replayed");
    for (const status of ["401", "413", "415", "429", "500", "503"]) expect([status, Object.keys(headersOf(put[status]))]).not.toEqual([status, expect.arrayContaining(["Idempotent-Replayed"])]);
  });

  it("keeps response schemas open to additive fields and request schemas strict (item 3)", () => {
    for (const { op, path, method } of operations()) {
      for (const r of Object.values(op.responses as Record<string, any>)) {
        expect([`${method} ${path}`, JSON.stringify(r.content ?? {})]).not.toEqual([`${method} ${path}`, expect.stringContaining('"additionalProperties":false')]);
      }
    }
    for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, any>)) {
      if (!name.endsWith("Input")) expect([name, JSON.stringify(schema)]).not.toEqual([name, expect.stringContaining('"additionalProperties":false')]);
    }
    expect(doc.components.schemas.Product.additionalProperties).toBeUndefined();
    expect(doc.components.schemas.KeySwitchRequestInput.additionalProperties).toBe(false);
  });

  it("answers every delete of a single resource 200 with the GeneralResponse (CONTRACT), mapping tables alone 204", () => {
    // Batch deletes answer a BatchResponse item per item.
    const deletes = operations().filter(({ method, path }) => method === "delete" && /\}$/.test(path));
    expect(deletes.map(({ path }) => path)).toContain("/v2/api/webhooks/{id}");
    for (const { path, op } of deletes) {
      const success = Object.keys(op.responses).filter((s) => s.startsWith("2"));
      if (path.startsWith("/v2/api/mappingtables")) expect([path, success]).toEqual([path, ["204"]]);
      else expect([path, success, op.responses["200"]?.content?.["application/json"].schema]).toEqual([path, ["200"], { $ref: "#/components/schemas/GeneralResponse" }]);
    }
  });

  it("documents the push as an OpenAPI 3.1 webhook: the body GET /events' entry in {id, type, timestamp, data}, the signature headers, what each answer means", () => {
    const push = doc.webhooks.queueEntry.post;
    expect(push.operationId).toBe("receiveQueueEntry");
    expect(push.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/WebhookQueueEntry" });
    const entry = doc.components.schemas.WebhookQueueEntry;
    expect(entry.required).toEqual(["id", "type", "timestamp", "data"]);
    // data is the very schema of an entry of GET /events.
    expect(entry.properties.data).toEqual(doc.paths["/v2/api/events"].get.responses["200"].content["application/json"].schema.items);
    expect(entry.properties.data).toEqual({ $ref: "#/components/schemas/Event" });
    expect(push.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required])).toEqual([
      ["webhook-id", "header", true],
      ["webhook-timestamp", "header", true],
      ["webhook-signature", "header", true],
    ]);
    expect(push.parameters[2].description).toMatch(/v1,<base64 HMAC-SHA256 of webhook-id\.webhook-timestamp\.body>/);
    expect(Object.keys(push.responses).sort()).toEqual(["2XX", "410", "default"]);
    expect(push.responses["2XX"].description).toMatch(/within 15 s/);
    expect(push.responses["410"].description).toMatch(/disabled at once/);
    expect(push.responses.default.description).toMatch(/5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h/);
    expect(push.description).toMatch(/in queue order/);
    expect(push.description).toMatch(/entries queued while it is disabled are never pushed later/);
  });

  it("documents the push of import.finished as an OpenAPI 3.1 webhook: {id, type, timestamp, data}, data the very Import schema of GET /imports/{id}", () => {
    const push = doc.webhooks.importFinished.post;
    expect(push.operationId).toBe("receiveImportFinished");
    expect(push.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/WebhookImportFinished" });
    const event = doc.components.schemas.WebhookImportFinished;
    expect(event.required).toEqual(["id", "type", "timestamp", "data"]);
    expect(event.properties.type).toMatchObject({ const: "import.finished" });
    expect(event.properties.data).toEqual(doc.paths["/v2/api/imports/{id}"].get.responses["200"].content["application/json"].schema);
    expect(event.properties.data).toEqual({ $ref: "#/components/schemas/Import" });
    expect(push.parameters.map((p: { name: string }) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(Object.keys(push.responses).sort()).toEqual(["2XX", "410", "default"]);
    expect(push.description).toMatch(/no entry on the event queue/);
  });

  it("lists the event types from the proto enum EventType wherever they appear: an endpoint's eventTypes (body and answer), a delivery's, and the queue's own (an entry's eventType) without the webhook-only import.finished", () => {
    const types = ["update_sku", "draft_po_change", "sku_warehouse_settings_change"];
    const all = [...types, "import.finished"];
    const body = resolve(doc.paths["/v2/api/webhooks"].post.requestBody.content["application/json"].schema);
    expect(body.properties.eventTypes.anyOf[0].items.enum).toEqual(all);
    expect(doc.components.schemas.WebhookEndpoint.properties.eventTypes.items.enum).toEqual(all);
    expect(doc.components.schemas.WebhookQueueEntry.properties.type.enum).toEqual(types);
    expect(doc.components.schemas.Event.properties.eventType.enum).toEqual(types);
    expect(doc.components.schemas.WebhookDelivery.properties.eventType.enum).toEqual(all);
    expect(doc.components.schemas.WebhookDelivery.properties.status.enum).toEqual(["pending", "delivered", "failed"]);
  });

  it("names operations for SDKs, describes tags, operations and the bearer scheme, and lets query parameters repeat (item 4)", () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(ids).toEqual(expect.arrayContaining(["listProducts", "upsertProductsBatch", "updateEventStatus", "switchProductKeys"]));
    for (const { op } of operations()) {
      expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.description?.length).toBeGreaterThan(0);
    }
    const tags = new Map((doc.tags as { name: string; description: string }[]).map((t) => [t.name, t.description]));
    for (const { op } of operations()) expect(tags.get(op.tags[0])).toBeTruthy();
    expect(doc.components.securitySchemes.bearer.description).toMatch(/POST \/v2\/api\/auth.*apiKey/);
    const skus = doc.paths["/v2/api/products"].get.parameters.find((p: { name: string }) => p.name === "skus");
    expect(skus).toMatchObject({ in: "query", style: "form", explode: true, schema: { type: "array", items: { type: "string" } } });
    // Nothing in the document points at files a user does not have.
    expect(JSON.stringify(doc)).not.toMatch(/\b[\w-]+\.(md|ts|proto)\b/);
    expect(doc.paths["/v2/api/products/batch"].post.requestBody.content["application/json"].example[0]).toMatchObject({ key: expect.any(String) });
  });
});
