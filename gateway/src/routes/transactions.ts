import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { TX_CLIENT_FIELDS, TX_ITEM_CLIENT_FIELDS, fromRestJson, ordersV1, transactionToRest } from "@analytics/contracts";
import type { Caller } from "@analytics/auth";
import { BATCH_MAX, convertBody, converting, runBatch, serverFailure, type BatchResponse } from "../http/batch";
import { HttpError } from "../http/errors";
import { pageHeaders, pageQuery, setPageHeaders } from "../http/paging";
import { route, type RouteContext } from "../pipeline/route";
import { documentAs } from "../http/openapi";
import { batchFailureResponses, batchResponseSchema, generalResponseSchema } from "../http/schemas";
import { jsonObject, pathNumber } from "../http/values";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import { dataVersionOf, type CallAs } from "../clients";
import { clientFieldsOut, clientId, nested, orderTimestamp, withClientFields } from "./order-fields";

const { ShipmentSchema, TransactionItemSchema, TransactionSchema, TransactionStatementSchema, WriteMode } = ordersV1;
const REFERENCE = "externalTransactionID";

// Bodies: the Transaction message's fields and rules, with what REST does differently named here.
const orderFields = { timestamp: orderTimestamp };

const itemInput = withClientFields(
  requestShape(TransactionItemSchema, { ...orderFields, fields: { externalItemID: z.string().trim().min(1).max(500) } }),
  TX_ITEM_CLIENT_FIELDS,
  { externalID: "externalItemID" },
);
const shipmentInput = nested(requestShape(ShipmentSchema, orderFields));

const txInput = withClientFields(
  {
    ...requestShape(TransactionSchema, {
      ...orderFields,
      omit: ["seq"],
      fields: {
        id: clientId,
        externalTransactionID: pathNumber("/v2/api/transactions", ["example", "latest"]),
        externalInfo: z
          .union([z.string().max(10_000), jsonObject().transform((o) => JSON.stringify(o))])
          .nullish()
          .describe("text; the published client's JSON object is kept as its JSON text (and answered as that text)"),
        items: z.array(itemInput).max(10_000).nullish(),
        statements: z.array(nested(requestShape(TransactionStatementSchema, orderFields))).max(10_000).nullish(),
      },
    }),
    uuid: z.unknown().optional().describe("read-only: the internal id (PUT may name the transaction by it as `id`)"),
  },
  TX_CLIENT_FIELDS,
);

export const transactionSchema = z
  .object({
    ...answerShape(TransactionSchema, {
      omit: ["seq"],
      fields: {
        id: z.number().int().describe("the integer id (accepted as `id` by PUT)"),
        items: z.array(
          z.object({
            ...answerShape(TransactionItemSchema),
            externalID: z.string().meta({ deprecated: true, description: "externalItemID, under the published client's name" }),
            ...clientFieldsOut(TX_ITEM_CLIENT_FIELDS),
          }),
        ),
      },
    }),
    uuid: z.string().uuid().describe("the internal id (also accepted as `id` by PUT)"),
    ...clientFieldsOut(TX_CLIENT_FIELDS),
  })
  .meta({ id: "Transaction" });

/** The proto of a validated transaction (read-only fields and `uuid` dropped; `id` kept for PUT). */
function toProto(t: z.output<typeof txInput>, keepId: boolean): ordersV1.Transaction {
  const { uuid: _uuid, ...rest } = t;
  return fromRestJson(TransactionSchema, withoutReadOnly(TransactionSchema, rest, keepId ? ["id"] : []));
}
const toRest = (t: ordersV1.Transaction) => transactionToRest(t);
/** An item of POST /transactions/batch (an upsert), validated and converted as the batch does (an import's line too). */
export const transactionUpsert = converting(txInput, (t) => toProto(t, false));
// Transactions are validated one by one (a bad one is its own 400); the document shows their schema.
const body = documentAs(z.array(z.unknown()).min(1).max(BATCH_MAX).describe(`1 to ${BATCH_MAX} transactions`), z.array(txInput).min(1).max(BATCH_MAX).describe(`1 to ${BATCH_MAX} transactions`));

export const transactionExample = {
  externalTransactionID: "T-2026-0001",
  channel: 1,
  type: 1,
  market: "SE",
  currencyCode: "SEK",
  externalStoreID: "STORE-STHLM",
  createdDate: "2026-03-01T12:00:00.000Z",
  items: [{ externalItemID: "1", key: "SKU-1001-BLK-M", quantity: 2, vatValue: 25, moneyItemTotalNet: 798, moneyItemTotalVat: 199.5, moneyDiscountIncVat: 0, type: 1 }],
  statements: [{ name: "shipping", type: 3, priceNet: 39.2, priceVat: 9.8 }],
};

/** What the transaction routes register with and call. */
interface Deps {
  ctx: RouteContext;
  orders: Client<typeof ordersV1.OrdersService>;
  as: CallAs;
}

const tag = "Transactions";

/** Validates and writes: one BatchResponse per item, and the transactions written. */
async function write({ orders, as }: Deps, raw: unknown[], caller: Caller, mode: ordersV1.WriteMode) {
  const written: ordersV1.Transaction[] = [];
  const results = await runBatch(raw, converting(txInput, (t) => toProto(t, mode === WriteMode.REPLACE)), REFERENCE, async (txs) => {
    const res = await orders.writeTransactions({ transactions: txs, mode }, as(caller));
    return res.results.map((r): BatchResponse => {
      if (r.transaction) written.push(r.transaction);
      const details = r.violations.map((v) => `${v.path}: ${v.message}`).join("; ");
      return { message: details || r.result?.message || "", reference: r.result?.reference ?? "", referenceField: REFERENCE, statusCode: r.result?.statusCode ?? 500 };
    });
  });
  return { results, written };
}

/** POST and PUT answer the transactions, or the first failing one's status naming it. */
function allOrFailure(results: BatchResponse[], written: ordersV1.Transaction[]) {
  const at = results.findIndex((r) => r.statusCode >= 300);
  if (at >= 0) throw new HttpError(results[at].statusCode, `transaction [${at}] ${results[at].reference}: ${results[at].message}`.slice(0, 500));
  return written.map(toRest);
}

/** /v2/api/transactions -> analytics.orders.v1.OrdersService */
export function transactionRoutes(ctx: RouteContext, orders: Client<typeof ordersV1.OrdersService>, as: CallAs): void {
  const deps: Deps = { ctx, orders, as };
  listTransactions(deps);
  createTransactions(deps);
  replaceTransactions(deps);
  upsertTransactions(deps);
  exampleTransaction(deps);
  latestTransaction(deps);
  getTransaction(deps);
  addShipments(deps);
}

function listTransactions({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/transactions",
    summary: "List transactions in creation order",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { orders }),
    query: pageQuery(),
    responses: { 200: { description: "transactions", schema: z.array(transactionSchema), headers: pageHeaders } },
    handler: async ({ query, caller }, request, reply) => {
      const res = await orders.listTransactions({ page: { page: query.page, pageSize: query.pageSize } }, as(caller));
      setPageHeaders(request, reply, query, res.totalCount);
      return res.transactions.map(toRest);
    },
  });
}

function createTransactions(d: Deps): void {
  route(d.ctx, {
    method: "POST",
    url: "/v2/api/transactions",
    summary: "Create transactions (an existing externalTransactionID is a 409)",
    tag,
    auth: "bearer",
    body,
    responses: {
      201: { description: "the transactions as stored", schema: z.array(transactionSchema) },
      400: { description: "an invalid transaction", schema: generalResponseSchema },
      409: { description: "already exists", schema: generalResponseSchema },
    },
    handler: async ({ body: raw, caller }, _req, reply) => {
      const { results, written } = await write(d, raw, caller, WriteMode.CREATE);
      const out = allOrFailure(results, written);
      reply.status(201);
      return out;
    },
  });
}

function replaceTransactions(d: Deps): void {
  route(d.ctx, {
    method: "PUT",
    url: "/v2/api/transactions/",
    summary: "Replace transactions by id (id required); shipments of items that stay are kept",
    tag,
    auth: "bearer",
    body,
    responses: {
      200: { description: "the transactions as stored", schema: z.array(transactionSchema) },
      400: { description: "invalid, or without id", schema: generalResponseSchema },
      404: { description: "no transaction of that id", schema: generalResponseSchema },
    },
    handler: async ({ body: raw, caller }) => {
      const { results, written } = await write(d, raw, caller, WriteMode.REPLACE);
      return allOrFailure(results, written);
    },
  });
}

function upsertTransactions(d: Deps): void {
  route(d.ctx, {
    method: "POST",
    url: "/v2/api/transactions/batch",
    summary: "Create or replace transactions by externalTransactionID; one BatchResponse per item",
    tag,
    auth: "bearer",
    body,
    responses: { ...batchFailureResponses, 200: { description: "one BatchResponse per transaction", schema: z.array(batchResponseSchema) } },
    handler: async ({ body: raw, caller }, _req, reply) => {
      const { results } = await write(d, raw, caller, WriteMode.UPSERT);
      return reply.status(serverFailure(results) ?? 200).send(results);
    },
  });
}

function exampleTransaction({ ctx }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/transactions/example",
    summary: "An example Transaction body",
    tag,
    auth: "bearer",
    responses: { 200: { description: "example", schema: z.record(z.string(), z.unknown()) } },
    handler: async () => transactionExample,
  });
}

function latestTransaction({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/transactions/latest",
    summary: "The latest created transaction",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { orders }),
    responses: { 200: { description: "the transaction", schema: transactionSchema }, 404: { description: "none yet", schema: generalResponseSchema } },
    handler: async ({ caller }) => toRest((await orders.getTransaction({}, as(caller))).transaction!),
  });
}

function getTransaction({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/transactions/:externalTransactionID",
    summary: "One transaction by externalTransactionID",
    tag,
    auth: "bearer",
    params: { externalTransactionID: z.string().trim().min(1).max(500).describe("trimmed, as it is when written") },
    responses: { 200: { description: "the transaction", schema: transactionSchema }, 404: { description: "unknown", schema: generalResponseSchema } },
    handler: async ({ params, caller }) => toRest((await orders.getTransaction({ externalTransactionId: params.externalTransactionID }, as(caller))).transaction!),
  });
}

function addShipments({ ctx, orders, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/transactions/:externalTransactionID/items/:externalItemID/shipments",
    summary: "Add shipments to one item; its shipped total never exceeds its quantity (400)",
    tag,
    auth: "bearer",
    params: { externalTransactionID: z.string().trim().min(1).max(500), externalItemID: z.string().trim().min(1).max(500) },
    // One shipment is read as an array of one, so that a bad field is named (`[0].quantity`)
    // rather than the whole body failing both forms of a union.
    body: documentAs(
      z.preprocess((v) => (Array.isArray(v) ? v : [v]), z.array(shipmentInput).min(1).max(BATCH_MAX)),
      z.union([z.array(shipmentInput).min(1).max(BATCH_MAX), shipmentInput]).describe("a Shipment or an array of them"),
    ),
    responses: {
      201: { description: "the transaction with its shipments", schema: transactionSchema },
      200: { description: "every shipment was already there (its shipmentID with the same values): nothing added", schema: transactionSchema },
      400: { description: "invalid, or the shipped total would exceed the item's quantity", schema: generalResponseSchema },
      404: { description: "unknown transaction or item", schema: generalResponseSchema },
      409: { description: "a shipmentID the item already has, with other values", schema: generalResponseSchema },
    },
    handler: async ({ params, body: sent, caller }, _req, reply) => {
      const shipments = convertBody(() => sent.map((s) => fromRestJson(ShipmentSchema, s)));
      const res = await orders.addShipments({ externalTransactionId: params.externalTransactionID, externalItemId: params.externalItemID, shipments }, as(caller));
      reply.status(res.added ? 201 : 200);
      return toRest(res.transaction!);
    },
  });
}
