import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { DO_CLIENT_FIELDS, catalogueV1, distributionOrderToRest, fromRestJson, inventoryV1, ordersV1 } from "@analytics/contracts";
import type { Caller } from "@analytics/auth";
import { BATCH_MAX, batchStatus, converting, runBatch, type BatchResponse } from "../http/batch";
import { HttpError } from "../http/errors";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route } from "../pipeline/route";
import { documentAs } from "../http/openapi";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { describe } from "../http/validation";
import { pathNumber } from "../http/values";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import { dataVersionOf, type CallAs } from "../clients";
import { clientFieldsOut, clientId, orderTimestamp, withClientFields, type OrderRouteDeps } from "./order-fields";
import { knownWarehouses } from "./warehouse-references";

const { DistributionOrderSchema, WriteMode } = ordersV1;
const REFERENCE = "externalDOID";
const STATUSES = ["PROCESSING", "ALLOCATED", "IN TRANSIT", "COMPLETED", "CANCELLED"] as const;

/** A status filter: the contract's spelling, in any case, `IN_TRANSIT` for `IN TRANSIT`. */
const statusQuery = z
  .string()
  .max(40)
  .transform((v) => v.trim().toUpperCase().replace(/_/g, " "))
  .pipe(z.enum(STATUSES))
  .optional()
  .describe(`one of ${STATUSES.join(", ")}`);

/** A row's fields: the DistributionOrder message's, with what REST does differently named here. */
const rowShape = {
  ...requestShape(DistributionOrderSchema, {
    timestamp: orderTimestamp,
    omit: ["seq"],
    fields: { id: clientId, externalDOID: pathNumber("/v2/api/distributionorders", ["example", "processing"]), externalRowID: z.string().trim().min(1).max(500) },
  }),
  uuid: z.unknown().optional().describe("read-only: the internal id (PUT may name the row by it as `id`)"),
};
const rowInput = withClientFields(rowShape, DO_CLIENT_FIELDS, { externalDistributionOrderId: "externalDOID" });

export const distributionOrderSchema = z
  .object({
    ...answerShape(DistributionOrderSchema, {
      omit: ["seq"],
      fields: { id: z.number().int().describe("the integer id (accepted as `id` by PUT)"), status: z.enum(STATUSES) },
    }),
    uuid: z.string().uuid().describe("the internal id (also accepted as `id` by PUT)"),
    externalDistributionOrderId: z.string().meta({ deprecated: true, description: "externalDOID, under the published client's name" }),
    ...clientFieldsOut(DO_CLIENT_FIELDS),
  })
  .meta({ id: "DistributionOrder" });

/** The proto of a validated row (read-only fields and `uuid` dropped; `id` kept for PUT). */
function toProto(row: z.output<typeof rowInput>, keepId: boolean): ordersV1.DistributionOrder {
  const { uuid: _uuid, ...rest } = row;
  return fromRestJson(DistributionOrderSchema, withoutReadOnly(DistributionOrderSchema, rest, keepId ? ["id"] : []));
}

const toRest = (d: ordersV1.DistributionOrder) => distributionOrderToRest(d);
// Rows are validated one by one (a bad row is its own 400); the document shows their schema.
const rowsBody = documentAs(z.array(z.unknown()).min(1).max(BATCH_MAX).describe(`1 to ${BATCH_MAX} rows`), z.array(rowInput).min(1).max(BATCH_MAX).describe(`1 to ${BATCH_MAX} rows`));

/**
 * Each row's SKU (`key`, else `sku`) resolved by the catalogue in one call for the request: the
 * problem of a row that names none (400) or an unknown one (404), else undefined.
 */
async function skuProblems(catalogue: Client<typeof catalogueV1.CatalogueService>, options: ReturnType<CallAs>, rows: ordersV1.DistributionOrder[]) {
  const refs = rows.map((r) => (r.key ? { key: r.key } : r.sku ? { sku: r.sku } : undefined));
  const named = refs.filter((r) => r !== undefined);
  const found = named.length ? (await catalogue.resolveSkus({ references: named }, options)).skus : [];
  let n = 0;
  return refs.map((ref) => {
    if (!ref) return { statusCode: 400, message: "key or sku is required" };
    return found[n++]?.found ? undefined : { statusCode: 404, message: `no SKU with ${ref.key !== undefined ? `key ${ref.key}` : `sku ${ref.sku}`}` };
  });
}

/** Per row, the 404 of a source or destination warehouse that does not exist (one call for the request). */
async function warehouseProblems(inventory: Client<typeof inventoryV1.InventoryService>, options: ReturnType<CallAs>, rows: ordersV1.DistributionOrder[]) {
  const known = await knownWarehouses(inventory, options, rows.flatMap((r) => [r.fromWarehouseExternalId, r.toWarehouseExternalId]));
  return rows.map((r) => {
    const field = r.fromWarehouseExternalId && !known.has(r.fromWarehouseExternalId) ? "fromWarehouseExternalId" : r.toWarehouseExternalId && !known.has(r.toWarehouseExternalId) ? "toWarehouseExternalId" : undefined;
    return field && { statusCode: 404, message: `${field}: no warehouse ${r[field]}` };
  });
}

type Deps = OrderRouteDeps;

/** A valid row's BatchResponse of the batch: its SKU's or warehouse's problem, else none yet (statusCode 0). */
const rowAnswer = (r: ordersV1.DistributionOrder, problem?: { statusCode: number; message: string }): BatchResponse => ({ reference: `${r.externalDoid}/${r.externalRowId}`, referenceField: REFERENCE, statusCode: 0, message: "", ...problem });

/**
 * Per valid row, what the gateway answers itself before orders writes anything (a row naming no
 * SKU, an unknown SKU or warehouse), else undefined. The batch's and an import's.
 */
export async function unresolvedRows({ catalogue, inventory }: Pick<Deps, "catalogue" | "inventory">, options: ReturnType<CallAs>, rows: ordersV1.DistributionOrder[]): Promise<(BatchResponse | undefined)[]> {
  const [skus, warehouses] = await Promise.all([skuProblems(catalogue, options, rows), warehouseProblems(inventory, options, rows)]);
  return rows.map((r, n) => {
    const problem = skus[n] ?? warehouses[n];
    return problem ? rowAnswer(r, problem) : undefined;
  });
}

/** A line of POST /distributionorders/batch: the row validated and converted (upserted by its external ids). */
export const distributionOrderLine = converting(rowInput, (r) => toProto(r, false));

const tag = "Distribution orders";

/** Validates, resolves SKUs and warehouses, and writes: one BatchResponse per row, and the rows written. */
async function write({ orders, catalogue, inventory, as }: Deps, raw: unknown[], caller: Caller, mode: ordersV1.WriteMode) {
  const written = new Map<number, ordersV1.DistributionOrder>();
  const results = await runBatch(raw, converting(rowInput, (r) => toProto(r, mode === WriteMode.REPLACE)), REFERENCE, async (rows) => {
    const problems = await unresolvedRows({ catalogue, inventory }, as(caller), rows);
    const answers: BatchResponse[] = rows.map((r, n) => problems[n] ?? rowAnswer(r));
    const toWrite = rows.flatMap((r, n) => (problems[n] ? [] : [{ n, r }]));
    if (!toWrite.length) return answers;
    const res = await orders.writeDistributionOrders({ distributionOrders: toWrite.map((w) => w.r), mode }, as(caller));
    res.results.forEach((r, k) => {
      const n = toWrite[k].n;
      if (r.distributionOrder) written.set(n, r.distributionOrder);
      answers[n] = { message: r.result?.message ?? "", reference: r.result?.reference ?? "", referenceField: r.result?.referenceField ?? REFERENCE, statusCode: r.result?.statusCode ?? 500 };
    });
    return answers;
  });
  return { results, written: [...written.values()] };
}

/** POST and PUT answer the rows, or the first failing row's status naming it. */
function rowsOrFailure(results: BatchResponse[], written: ordersV1.DistributionOrder[]) {
  const at = results.findIndex((r) => r.statusCode >= 300);
  if (at >= 0) throw new HttpError(results[at].statusCode, `row [${at}] ${results[at].reference}: ${results[at].message}`.slice(0, 500));
  return written.map(toRest);
}

/** /v2/api/distributionorders -> analytics.orders.v1.OrdersService (SKU references via the catalogue, warehouses via inventory). */
export function distributionOrderRoutes(deps: OrderRouteDeps): void {
  listDistributionOrders(deps);
  createDistributionOrders(deps);
  replaceDistributionOrders(deps);
  upsertDistributionOrders(deps);
  processingDistributionOrders(deps);
  exampleDistributionOrder(deps);
  getDistributionOrder(deps);
}

function listDistributionOrders({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/distributionorders",
    summary: "List distribution order rows in creation order",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { orders }),
    query: { ...pageQuery(1000), status: statusQuery },
    responses: {
      200: { description: "rows", schema: z.array(distributionOrderSchema), headers: pageHeaders },
      400: { description: "bad query (an unknown status)", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const res = await orders.listDistributionOrders({ page: { page: query.page, pageSize: query.pageSize }, status: query.status ?? "" }, as(caller));
      setPageHeaders(request, reply, query, res.totalCount);
      return res.distributionOrders.map(toRest);
    },
  });
}

function createDistributionOrders(d: Deps): void {
  route(d.ctx, {
    method: "POST",
    url: "/v2/api/distributionorders",
    summary: "Create (or update, by externalDOID and externalRowID) distribution order rows",
    tag,
    auth: "bearer",
    body: rowsBody,
    responses: {
      201: { description: "the rows as stored", schema: z.array(distributionOrderSchema) },
      400: { description: "an invalid row, or one naming no SKU (key or sku)", schema: generalResponseSchema },
      404: { description: "a row names an unknown SKU or warehouse", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const parsed = body.map((b) => rowInput.safeParse(b));
      const bad = parsed.findIndex((p) => !p.success);
      if (bad >= 0) throw new HttpError(400, `row [${bad}]: ${describe(parsed[bad].error!.issues.map((i) => ({ path: i.path.join("."), message: i.message })))}`);
      const { results, written } = await write(d, body, caller, WriteMode.CREATE);
      const rows = rowsOrFailure(results, written);
      reply.status(201);
      return rows;
    },
  });
}

function replaceDistributionOrders(d: Deps): void {
  route(d.ctx, {
    method: "PUT",
    url: "/v2/api/distributionorders",
    summary: "Replace distribution order rows by id (id required)",
    tag,
    auth: "bearer",
    body: rowsBody,
    responses: {
      200: { description: "the rows as stored", schema: z.array(distributionOrderSchema) },
      400: { description: "an invalid row, one without id, or one naming no SKU (key or sku)", schema: generalResponseSchema },
      404: { description: "no row of that id, or a row names an unknown SKU or warehouse", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }) => {
      const missing = body.findIndex((b) => !b || typeof b !== "object" || !["string", "number"].includes(typeof (b as Record<string, unknown>).id));
      if (missing >= 0) throw new HttpError(400, `row [${missing}]: id is required`, [{ path: `[${missing}].id`, message: "is required" }]);
      const { results, written } = await write(d, body, caller, WriteMode.REPLACE);
      return rowsOrFailure(results, written);
    },
  });
}

function upsertDistributionOrders(d: Deps): void {
  route(d.ctx, {
    method: "POST",
    url: "/v2/api/distributionorders/batch",
    summary: "Create or update rows by (externalDOID, externalRowID); 400 when any row fails (the valid rows are still applied)",
    tag,
    auth: "bearer",
    body: rowsBody,
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per row", schema: z.array(batchResponseSchema) },
      400: { description: "at least one row failed (400 invalid or naming no SKU, 404 an unknown SKU or warehouse); the others were applied", schema: z.array(batchResponseSchema) },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const { results } = await write(d, body, caller, WriteMode.UPSERT);
      return reply.status(batchStatus(results, 200)).send(results);
    },
  });
}

function processingDistributionOrders({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/distributionorders/processing",
    summary: "External ids of distribution orders with at least one row neither COMPLETED nor CANCELLED",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { orders }),
    query: pageQuery(1000),
    responses: { 200: { description: "externalDOIDs", schema: z.array(z.string()), headers: pageHeaders } },
    handler: async ({ query, caller }, request, reply) => {
      const res = await orders.listProcessingDistributionOrders({ page: { page: query.page, pageSize: query.pageSize } }, as(caller));
      setPageHeaders(request, reply, query, res.totalCount);
      return res.externalDoids;
    },
  });
}

function exampleDistributionOrder({ ctx }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/distributionorders/example",
    summary: "An example DistributionOrder row (in the status asked for)",
    tag,
    auth: "bearer",
    query: { status: statusQuery },
    responses: { 200: { description: "example", schema: z.record(z.string(), z.unknown()) }, 400: { description: "unknown status", schema: generalResponseSchema } },
    handler: async ({ query }) => {
      const status = query.status ?? "PROCESSING";
      const base = { externalDOID: "DO-1001", externalRowID: "1", key: "SKU-1001-BLK-M", quantity: 10, fromWarehouseExternalId: "WH-CENTRAL", toWarehouseExternalId: "STORE-STHLM", orderDate: "2026-03-01T00:00:00.000Z" };
      const by: Record<string, object> = {
        PROCESSING: { allocatedQuantity: 0, deliveredQuantity: 0 },
        ALLOCATED: { allocatedQuantity: 10, deliveredQuantity: 0 },
        "IN TRANSIT": { allocatedQuantity: 10, shippedAt: "2026-03-02T00:00:00.000Z", deliveredQuantity: 0 },
        COMPLETED: { allocatedQuantity: 10, shippedAt: "2026-03-02T00:00:00.000Z", deliveredQuantity: 10, completedDate: "2026-03-04T00:00:00.000Z" },
        CANCELLED: { cancelledDate: "2026-03-02T00:00:00.000Z" },
      };
      return { ...base, ...by[status], status };
    },
  });
}

function getDistributionOrder({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/distributionorders/:id",
    summary: "Every row of one distribution order (by externalDOID)",
    tag,
    auth: "bearer",
    params: { id: z.string().trim().min(1).max(500).describe("the externalDOID, trimmed as it is when written") },
    responses: { 200: { description: "its rows", schema: z.array(distributionOrderSchema) }, 404: { description: "unknown", schema: generalResponseSchema } },
    handler: async ({ params, caller }) => (await orders.getDistributionOrder({ externalDoid: params.id }, as(caller))).distributionOrders.map(toRest),
  });
}
