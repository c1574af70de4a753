import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { PO_CLIENT_FIELDS, PO_ITEM_CLIENT_FIELDS, catalogueV1, fromRestJson, inventoryV1, ordersV1, purchaseOrderToRest } from "@analytics/contracts";
import type { Caller } from "@analytics/auth";
import { converting, PURCHASE_ORDER_BATCH_MAX, serverFailure, runBatch, type BatchResponse } from "../http/batch";
import { describe } from "../http/validation";
import { HttpError } from "../http/errors";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route } from "../pipeline/route";
import { documentAs } from "../http/openapi";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { pathNumber } from "../http/values";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import { dataVersionOf, type CallAs } from "../clients";
import { productSeqs } from "./product-ids";
import { knownWarehouses } from "./warehouse-references";
import { clientFieldsOut, clientId, nested, orderTimestamp, parseTimestamp, withClientFields, type OrderRouteDeps } from "./order-fields";

const { DeliverySchema, PurchaseOrderItemSchema, PurchaseOrderSchema, WriteMode } = ordersV1;
/** The field that names an order in its BatchResponse. */
const REFERENCE = "externalPONo";

// ---------------------------------------------------------------------------------------------
// Values

/** A list filter bound: RFC 3339 with `Z`, colon or colon-less offset; anything else is a 400. */
const filterTimestamp = z
  .string()
  .max(40)
  .transform((v, ctx) => {
    const date = parseTimestamp(v, false);
    if (!date) {
      ctx.addIssue({ code: "custom", message: "must be an RFC 3339 timestamp with Z or an offset (+01:00 or +0100)" });
      return z.NEVER;
    }
    return date;
  })
  .optional();

// ---------------------------------------------------------------------------------------------
// Bodies: the PurchaseOrder message's fields and rules, with the published client's names

/** Purchase orders' dates; anything REST does differently from the message is named here. */
const orderFields = { timestamp: orderTimestamp };

const deliverySchema = nested(requestShape(DeliverySchema, orderFields));

/** An item's product: `skuId` its integer id, `skuUuid` its UUID (CONTRACT.md, "Compatibility"). */
const skuIdAnswer = z.number().int().nullable().describe("the product's integer id (its `id`) that the item's key, sku or ean names");
const skuUuidAnswer = z.string().uuid().describe("the product's internal id");

const itemSchema = withClientFields(
  {
    ...requestShape(PurchaseOrderItemSchema, {
      ...orderFields,
      // skuSeq is the service's (answered as skuId).
      omit: ["skuSeq"],
      fields: { deliveries: z.array(deliverySchema).max(10_000).nullish(), skuId: z.unknown().optional().describe("read-only: the product's integer id") },
    }),
    skuUuid: z.unknown().optional().describe("read-only: the product's internal id"),
  },
  PO_ITEM_CLIENT_FIELDS,
  // skuUuid is no field of the message: a line sent back as GET answered it drops it here.
).transform(({ skuUuid: _skuUuid, ...item }: Record<string, unknown>) => item);

export const purchaseOrderInputSchema = withClientFields(
  {
    ...requestShape(PurchaseOrderSchema, {
      ...orderFields,
      omit: ["seq"],
      fields: { id: clientId, externalPONo: pathNumber("/v2/api/purchaseorders", ["example", "latest"]), items: z.array(itemSchema).max(10_000).nullish() },
    }),
    uuid: z.unknown().optional().describe("read-only: the internal id (PUT may name the order by it as `id`)"),
  },
  PO_CLIENT_FIELDS,
  { externalPurchaseNo: "externalPONo" },
);
type OrderInput = z.output<typeof purchaseOrderInputSchema>;

export const purchaseOrderSchema = z
  .object({
    ...answerShape(PurchaseOrderSchema, {
      omit: ["seq"],
      fields: {
        id: z.number().int().describe("the integer id (accepted as `id` by PUT)"),
        items: z.array(
          z.object({ ...answerShape(PurchaseOrderItemSchema, { omit: ["skuSeq"], fields: { skuId: skuIdAnswer } }), skuUuid: skuUuidAnswer, ...clientFieldsOut(PO_ITEM_CLIENT_FIELDS) }),
        ),
      },
    }),
    uuid: z.string().uuid().describe("the internal id (also accepted as `id` by PUT)"),
    externalPurchaseNo: z.string().meta({ deprecated: true, description: "externalPONo, under the published client's name" }),
    ...clientFieldsOut(PO_CLIENT_FIELDS),
  })
  .meta({ id: "PurchaseOrder" });

/** The proto of a validated order (read-only fields and `uuid` dropped; `id` kept for PUT). */
function toProto(o: OrderInput): ordersV1.PurchaseOrder {
  const { uuid: _uuid, ...order } = o;
  return fromRestJson(PurchaseOrderSchema, withoutReadOnly(PurchaseOrderSchema, order, ["id"]));
}

/**
 * Orders as REST answers them: every line's `skuId` the product's integer id. Lines stored before
 * orders kept it have none; the catalogue gives theirs (one call for all the orders answered).
 */
async function toRest({ catalogue, as }: Deps, caller: Caller, orders: ordersV1.PurchaseOrder[]) {
  const unknown = orders.flatMap((po) => po.items.filter((i) => i.skuSeq === undefined && i.skuId));
  const seqs = await productSeqs(catalogue, as(caller), unknown.map((i) => i.skuId));
  for (const item of unknown) item.skuSeq = seqs.get(item.skuId);
  return orders.map(purchaseOrderToRest);
}

const globalQuery = z.enum(["true", "false", "1", "0", ""]).optional().describe("orders of all API keys (default false)");
const isGlobal = (v: string | undefined) => v === "true" || v === "1";
// Orders are validated one by one (a bad order is its own 400); the document shows their schema.
const ordersBody = documentAs(
  z.array(z.unknown()).min(1).max(PURCHASE_ORDER_BATCH_MAX).describe(`1 to ${PURCHASE_ORDER_BATCH_MAX} purchase orders`),
  z.array(purchaseOrderInputSchema).min(1).max(PURCHASE_ORDER_BATCH_MAX).describe(`1 to ${PURCHASE_ORDER_BATCH_MAX} purchase orders`),
);

export const purchaseOrderExample = {
  externalPONo: "PO-2026-0001",
  orderDate: "2026-03-01T00:00:00.000Z",
  deliveryDate: "2026-04-15T00:00:00.000Z",
  deliveryStatus: 0,
  externalComment: "spring replenishment",
  externalWarehouseID: "WH-STOCKHOLM",
  supplier: "Acme Knitwear",
  label: "SS26",
  orderType: "replenishment",
  items: [
    {
      externalRowID: "1",
      key: "SKU-1001-BLK-M",
      quantity: 120,
      deliveryDate: null,
      externalWarehouseID: null,
      totalPriceNet: 2400.5,
      totalPriceVat: 600.13,
      totalPriceCurrency: "EUR",
      deliveries: [{ deliveryID: "D-1", quantity: 40, deliveryDate: "2026-04-10T00:00:00.000Z" }],
    },
  ],
};

// ---------------------------------------------------------------------------------------------
// SKU references

/**
 * Resolves every item's key (else sku, else ean) to a catalogue SKU in one call for the whole
 * request. Returns, per order, the problem of its first item that names no SKU (or names none).
 */
async function resolveItems(
  catalogue: Client<typeof catalogueV1.CatalogueService>,
  options: ReturnType<CallAs>,
  orders: ordersV1.PurchaseOrder[],
): Promise<({ status: number; path: string; message: string } | undefined)[]> {
  const refs = orders.flatMap((o) => o.items.map((i) => ({ key: i.key || undefined, sku: i.key ? undefined : i.sku || undefined, ean: i.key || i.sku ? undefined : i.ean || undefined })));
  // Each distinct reference once: 500 orders x 10 items name far fewer SKUs than 5000.
  const distinct = new Map(refs.map((r) => [JSON.stringify([r.key, r.sku, r.ean]), r]));
  const answers = distinct.size ? (await catalogue.resolveSkus({ references: [...distinct.values()] }, options)).skus : [];
  const byRef = new Map([...distinct.keys()].map((k, n) => [k, answers[n]]));
  const resolved = refs.map((r) => byRef.get(JSON.stringify([r.key, r.sku, r.ean])));
  let n = 0;
  return orders.map((o) => {
    let problem: { status: number; path: string; message: string } | undefined;
    o.items.forEach((item, i) => {
      const ref = refs[n];
      const match = resolved[n++];
      if (problem) return;
      const row = item.externalRowId ? ` (externalRowID ${item.externalRowId})` : "";
      if (!ref.key && !ref.sku && !ref.ean) problem = { status: 400, path: `items[${i}].key`, message: `items[${i}]${row}: key, sku or ean is required` };
      else if (!match?.found) {
        const named = ref.key ? `key ${ref.key}` : ref.sku ? `sku ${ref.sku}` : `ean ${ref.ean}`;
        problem = { status: 404, path: `items[${i}]`, message: `items[${i}]${row}: no SKU with ${named}` };
      } else {
        item.skuId = match.id;
        item.skuSeq = match.seq;
      }
    });
    return problem;
  });
}

/** Per order, the 404 of the first warehouse it names (on the order, then on its items) that does not exist. */
async function warehouseProblems(inventory: Client<typeof inventoryV1.InventoryService>, options: ReturnType<CallAs>, orders: ordersV1.PurchaseOrder[]) {
  const known = await knownWarehouses(inventory, options, orders.flatMap((o) => [o.externalWarehouseId, ...o.items.map((i) => i.externalWarehouseId)]));
  const unknown = (id: string | undefined) => Boolean(id) && !known.has(id!);
  return orders.map((o) => {
    if (unknown(o.externalWarehouseId)) return { status: 404, path: "externalWarehouseID", message: `externalWarehouseID: no warehouse ${o.externalWarehouseId}` };
    const i = o.items.findIndex((item) => unknown(item.externalWarehouseId));
    if (i < 0) return undefined;
    const row = o.items[i].externalRowId ? ` (externalRowID ${o.items[i].externalRowId})` : "";
    return { status: 404, path: `items[${i}].externalWarehouseID`, message: `items[${i}]${row}: no warehouse ${o.items[i].externalWarehouseId}` };
  });
}

/**
 * Per valid order, what the gateway answers itself before orders writes anything: an item naming
 * no SKU (400) or an unknown one, or an unknown warehouse (404). Sets the found items' SKUs. The
 * batch's and an import's (its lines as POST /purchaseorders/batch items).
 */
export async function unresolvedOrders({ catalogue, inventory }: Pick<Deps, "catalogue" | "inventory">, options: ReturnType<CallAs>, orders: ordersV1.PurchaseOrder[]) {
  const [skus, warehouses] = await Promise.all([resolveItems(catalogue, options, orders), warehouseProblems(inventory, options, orders)]);
  return skus.map((p, n) => p ?? warehouses[n]);
}

/** A valid order's BatchResponse of the batch, before (statusCode 0) or without writing it. */
export const orderAnswer = (po: ordersV1.PurchaseOrder, p?: { status: number; message: string }): BatchResponse => ({ reference: po.externalPoNo, referenceField: REFERENCE, statusCode: p?.status ?? 0, message: p?.message ?? "" });

/** A line of POST /purchaseorders/batch: the order validated and converted. */
export const purchaseOrderLine = converting(purchaseOrderInputSchema, toProto);

// ---------------------------------------------------------------------------------------------
// Routes

const tag = "Purchase orders";

type Deps = OrderRouteDeps;

/** Validates, resolves SKUs and writes: one BatchResponse (and order, when written) per item. */
async function write({ orders, catalogue, inventory, as }: Deps, raw: unknown[], caller: Caller, mode: ordersV1.WriteMode, global: boolean, atomic: boolean) {
  const resultsOnly = !atomic;
  const written = new Map<number, ordersV1.PurchaseOrder>();
  const violations = new Map<number, { path: string; message: string }[]>();
  const results = await runBatch(raw, purchaseOrderLine, REFERENCE, async (valid) => {
    const notWritten = valid.map((po) => orderAnswer(po, { status: 0, message: "not written" }));
    if (atomic && valid.length < raw.length) return notWritten;
    const problems = await unresolvedOrders({ catalogue, inventory }, as(caller), valid);
    const toWrite = valid.flatMap((po, n) => (problems[n] ? [] : [{ n, po }]));
    const answers: BatchResponse[] = valid.map((po, n) => {
      const p = problems[n];
      if (p) violations.set(n, [{ path: p.path, message: p.message }]);
      return orderAnswer(po, p);
    });
    if (atomic && problems.some((p) => p)) return answers;
    if (!toWrite.length) return answers;
    const res = await orders.writePurchaseOrders({ purchaseOrders: toWrite.map((w) => w.po), mode, global, atomic, resultsOnly }, as(caller));
    res.results.forEach((r, k) => {
      const n = toWrite[k].n;
      answers[n] = { message: r.result?.message ?? "", reference: r.result?.reference ?? "", referenceField: REFERENCE, statusCode: r.result?.statusCode ?? 500 };
      if (r.purchaseOrder) written.set(n, r.purchaseOrder);
      if (r.violations.length) violations.set(n, r.violations.map((v) => ({ path: v.path, message: v.message })));
    });
    return answers;
  });
  return { results, written, violations };
}

/** POST and PUT answer one status: the first failing order's, naming it; else every order. */
async function writeAll(d: Deps, raw: unknown[], caller: Caller, mode: ordersV1.WriteMode) {
  if (!raw.length) return [];
  const { results, written, violations } = await write(d, raw, caller, mode, false, true);
  const failed = results.findIndex((r) => r.statusCode >= 300 || r.statusCode === 0);
  const firstFailure = results.findIndex((r) => r.statusCode >= 300);
  if (failed >= 0) {
    const at = firstFailure >= 0 ? firstFailure : failed;
    const r = results[at];
    const details = (violations.get(at) ?? []).map((v) => ({ path: `[${at}].${v.path}`, message: v.message }));
    throw new HttpError(r.statusCode || 400, `purchase order [${at}] ${r.reference}: ${details.length ? describe(details) : r.message}`.slice(0, 500), details);
  }
  return toRest(d, caller, [...written.entries()].sort(([a], [b]) => a - b).map(([, po]) => po));
}

/** /v2/api/purchaseorders -> analytics.orders.v1.OrdersService (SKU references via the catalogue, warehouses via inventory). */
export function purchaseOrderRoutes(deps: OrderRouteDeps): void {
  listPurchaseOrders(deps);
  createPurchaseOrders(deps);
  replacePurchaseOrders(deps);
  upsertPurchaseOrders(deps);
  examplePurchaseOrder(deps);
  latestPurchaseOrder(deps);
  getPurchaseOrder(deps);
}

function listPurchaseOrders(d: Deps): void {
  const { ctx, orders, as } = d;
  route(ctx, {
    method: "GET",
    url: "/v2/api/purchaseorders",
    summary: "List purchase orders in creation order (by default only those the calling API key created)",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { orders }),
    query: {
      ...pageQuery(),
      global: globalQuery,
      status: z.enum(["all", "processing"]).default("all").describe("processing: deliveryStatus 0, 1 or 5"),
      from: filterTimestamp.describe("orderDate >= from (RFC 3339: Z, +01:00 or +0100)"),
      to: filterTimestamp.describe("orderDate < to"),
      createdFrom: filterTimestamp.describe("createdAt >= createdFrom"),
      createdTo: filterTimestamp.describe("createdAt < createdTo"),
      updatedFrom: filterTimestamp.describe("updatedAt >= updatedFrom"),
      updatedTo: filterTimestamp.describe("updatedAt < updatedTo"),
    },
    responses: {
      200: { description: "purchase orders", schema: z.array(purchaseOrderSchema), headers: pageHeaders },
      400: { description: "bad query", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }, request, reply) => {
      const ts = (d: Date | undefined) => (d ? { seconds: BigInt(Math.floor(d.getTime() / 1000)), nanos: (d.getTime() % 1000) * 1e6 } : undefined);
      const res = await orders.listPurchaseOrders(
        {
          page: { page: query.page, pageSize: query.pageSize },
          global: isGlobal(query.global),
          processing: query.status === "processing",
          orderDateFrom: ts(query.from),
          orderDateTo: ts(query.to),
          createdFrom: ts(query.createdFrom),
          createdTo: ts(query.createdTo),
          updatedFrom: ts(query.updatedFrom),
          updatedTo: ts(query.updatedTo),
        },
        as(caller),
      );
      setPageHeaders(request, reply, query, res.totalCount);
      return toRest(d, caller, res.purchaseOrders);
    },
  });
}

function createPurchaseOrders(d: Deps): void {
  route(d.ctx, {
    method: "POST",
    url: "/v2/api/purchaseorders",
    summary: `Create up to ${PURCHASE_ORDER_BATCH_MAX} purchase orders (all or nothing)`,
    tag,
    auth: "bearer",
    body: ordersBody,
    responses: {
      201: { description: "the orders as stored", schema: z.array(purchaseOrderSchema) },
      400: { description: "an invalid order (nothing was written)", schema: generalResponseSchema },
      404: { description: "an item names no SKU, or the order or an item a warehouse that does not exist (nothing was written)", schema: generalResponseSchema },
      409: { description: "an order of that externalPONo exists (nothing was written)", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }, _req, reply) => {
      const created = await writeAll(d, body, caller, WriteMode.CREATE);
      reply.status(201);
      return created;
    },
  });
}

function replacePurchaseOrders(d: Deps): void {
  route(d.ctx, {
    method: "PUT",
    url: "/v2/api/purchaseorders/",
    summary: `Replace up to ${PURCHASE_ORDER_BATCH_MAX} purchase orders and their items by id (all or nothing)`,
    tag,
    auth: "bearer",
    body: ordersBody,
    responses: {
      200: { description: "the orders as stored", schema: z.array(purchaseOrderSchema) },
      400: { description: "an invalid order or one without id (nothing was written)", schema: generalResponseSchema },
      404: { description: "no order of that id for this API key, or an item names no SKU, or a warehouse does not exist", schema: generalResponseSchema },
    },
    handler: async ({ body, caller }) => writeAll(d, body, caller, WriteMode.REPLACE),
  });
}

function upsertPurchaseOrders(d: Deps): void {
  route(d.ctx, {
    method: "POST",
    url: "/v2/api/purchaseorders/batch",
    summary: `Create or replace up to ${PURCHASE_ORDER_BATCH_MAX} purchase orders by externalPONo; an unchanged order is left alone`,
    tag,
    auth: "bearer",
    query: { global: globalQuery.describe("allow replacing orders other API keys created (default false)") },
    body: ordersBody,
    responses: {
      ...batchFailureResponses,
      200: { description: "one BatchResponse per order (201 created, 200 updated or unchanged, 400, 404 unknown SKU or warehouse, 409 another key's order)", schema: z.array(batchResponseSchema) },
      400: { description: `more than ${PURCHASE_ORDER_BATCH_MAX} orders`, schema: generalResponseSchema },
    },
    handler: async ({ body, query, caller }, _req, reply) => {
      if (!body.length) return [];
      const { results } = await write(d, body, caller, WriteMode.UPSERT, isGlobal(query.global), false);
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}

function examplePurchaseOrder({ ctx }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/purchaseorders/example",
    summary: "An example PurchaseOrder body",
    tag,
    auth: "bearer",
    responses: { 200: { description: "example", schema: z.record(z.string(), z.unknown()) } },
    handler: async () => purchaseOrderExample,
  });
}

function latestPurchaseOrder(d: Deps): void {
  route(d.ctx, {
    method: "GET",
    url: "/v2/api/purchaseorders/latest",
    summary: "The latest created purchase order (of this API key unless global)",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(d.as, { orders: d.orders }),
    query: { global: globalQuery },
    responses: {
      200: { description: "the order", schema: purchaseOrderSchema },
      404: { description: "no order yet", schema: generalResponseSchema },
    },
    handler: async ({ query, caller }) => (await toRest(d, caller, [(await d.orders.getPurchaseOrder({ global: isGlobal(query.global) }, d.as(caller))).purchaseOrder!]))[0],
  });
}

function getPurchaseOrder(d: Deps): void {
  const { ctx, orders, as } = d;
  route(ctx, {
    method: "GET",
    url: "/v2/api/purchaseorders/:externalPurchaseNo",
    summary: "One purchase order by externalPONo (of this API key unless global)",
    tag,
    auth: "bearer",
    params: { externalPurchaseNo: z.string().trim().min(1).max(500).describe("trimmed, as externalPONo is when written") },
    query: { global: globalQuery },
    responses: {
      200: { description: "the order", schema: purchaseOrderSchema },
      404: { description: "no such order", schema: generalResponseSchema },
    },
    handler: async ({ params, query, caller }) => {
      const res = await orders.getPurchaseOrder({ externalPoNo: params.externalPurchaseNo, global: isGlobal(query.global) }, as(caller));
      return (await toRest(d, caller, [res.purchaseOrder!]))[0];
    },
  });
}
