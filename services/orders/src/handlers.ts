import type { ConnectRouter } from "@connectrpc/connect";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ordersV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import { invalid } from "@analytics/errors";
import { accountVersionHandler, batchResult, pageOf, type ServiceContext } from "@analytics/rpc";
import * as distributionOrders from "./distribution-orders";
import * as purchaseOrders from "./purchase-orders";
import * as transactions from "./transactions";
import * as repo from "./repository";

const { OrdersService } = ordersV1;
/** The specification's batch limit of purchase orders. */
export const MAX_PURCHASE_ORDERS = 500;
/** Every other batch (CONTRACT.md, Limits). */
const MAX_ROWS = 1000;

const date = (t: Timestamp | undefined) => (t ? timestampDate(t) : undefined);

/** Thin Connect handlers: proto in, plain function, proto out. */
export function ordersRoutes(ctx: ServiceContext) {
  const { db } = ctx;
  return (router: ConnectRouter) =>
    router.service(OrdersService, {
      getAccountVersion: accountVersionHandler(db),
      async listPurchaseOrders(req, c) {
        const { orders, total } = await purchaseOrders.listPurchaseOrders(
          db,
          callerOf(c),
          {
            global: req.global,
            processing: req.processing,
            orderDateFrom: date(req.orderDateFrom),
            orderDateTo: date(req.orderDateTo),
            createdFrom: date(req.createdFrom),
            createdTo: date(req.createdTo),
            updatedFrom: date(req.updatedFrom),
            updatedTo: date(req.updatedTo),
          },
          pageOf(req.page),
        );
        return { purchaseOrders: orders, totalCount: total };
      },
      async getPurchaseOrder(req, c) {
        return { purchaseOrder: await purchaseOrders.getPurchaseOrder(db, callerOf(c), req.externalPoNo, req.global) };
      },
      async writePurchaseOrders(req, c) {
        const mode = req.mode || ordersV1.WriteMode.UPSERT;
        await prepareBatch(db, callerOf(c).accountId, "purchase_orders", req.purchaseOrders, mode, MAX_PURCHASE_ORDERS, "purchase orders");
        const outcomes = await purchaseOrders.writePurchaseOrders(ctx, callerOf(c), req.purchaseOrders, mode, req.global, req.atomic, req.resultsOnly);
        return { results: outcomes.map((o) => batchResult(o, "purchaseOrder")) };
      },
      async listDistributionOrders(req, c) {
        const { rows, total } = await distributionOrders.listDistributionOrders(db, callerOf(c).accountId, req.status, pageOf(req.page));
        return { distributionOrders: rows, totalCount: total };
      },
      async writeDistributionOrders(req, c) {
        await prepareBatch(db, callerOf(c).accountId, "distribution_orders", req.distributionOrders, req.mode, MAX_ROWS, "rows");
        const outcomes = await distributionOrders.writeDistributionOrders(ctx, callerOf(c).accountId, req.distributionOrders, req.mode || ordersV1.WriteMode.UPSERT);
        return { results: outcomes.map((o) => batchResult(o, "distributionOrder")) };
      },
      async listProcessingDistributionOrders(req, c) {
        const { ids, total } = await distributionOrders.listProcessing(db, callerOf(c).accountId, pageOf(req.page));
        return { externalDoids: ids, totalCount: total };
      },
      async getDistributionOrder(req, c) {
        return { distributionOrders: await distributionOrders.getDistributionOrder(db, callerOf(c).accountId, req.externalDoid) };
      },
      async listTransactions(req, c) {
        const { transactions: rows, total } = await transactions.listTransactions(db, callerOf(c).accountId, pageOf(req.page));
        return { transactions: rows, totalCount: total };
      },
      async getTransaction(req, c) {
        return { transaction: await transactions.getTransaction(db, callerOf(c).accountId, req.externalTransactionId) };
      },
      async writeTransactions(req, c) {
        await prepareBatch(db, callerOf(c).accountId, "transactions", req.transactions, req.mode, MAX_ROWS, "transactions");
        const outcomes = await transactions.writeTransactions(ctx, callerOf(c).accountId, req.transactions, req.mode || ordersV1.WriteMode.UPSERT);
        return { results: outcomes.map((o) => batchResult(o, "transaction")) };
      },
      async addShipments(req, c) {
        return transactions.addShipments(ctx, callerOf(c).accountId, req.externalTransactionId, req.externalItemId, req.shipments);
      },
    });
}

/** A batch within its limit (else invalid, never cut short); a replace's rows named by UUID (withUuids). */
async function prepareBatch(
  db: Parameters<typeof withUuids>[0],
  accountId: string,
  table: Parameters<typeof withUuids>[1],
  items: { id: string }[],
  mode: ordersV1.WriteMode,
  limit: number,
  what: string,
) {
  if (items.length > limit) throw invalid(`at most ${limit} ${what} per request`, [{ path: "", message: `at most ${limit} items` }]);
  if (mode === ordersV1.WriteMode.REPLACE) await withUuids(db, table, accountId, items);
}

/**
 * A replace names its rows by `id`: the UUID, or the integer id REST answers as `id` (the
 * published client's). Integer ids become the rows' UUIDs here; one that names no row stays as
 * sent and is that item's 404.
 */
async function withUuids(db: Parameters<typeof repo.uuidsOfIntegerIds>[0], table: Parameters<typeof repo.uuidsOfIntegerIds>[1], accountId: string, items: { id: string }[]) {
  const uuids = await repo.uuidsOfIntegerIds(db, table, accountId, items.map((i) => i.id));
  for (const item of items) item.id = uuids.get(item.id) ?? item.id;
}
