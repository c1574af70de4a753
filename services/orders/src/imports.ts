import { fromBinary } from "@bufbuild/protobuf";
import { ordersV1 } from "@analytics/contracts";
import { applyInRuns, batchResponse, ImportJobs } from "@analytics/rpc";
import { writeDistributionOrders } from "./distribution-orders";
import { writePurchaseOrders } from "./purchase-orders";
import { transactionBytes } from "./transaction-changed";
import { upsertTransactionsStaged } from "./transaction-staging";

/**
 * The orders service's import jobs (docs/imports.md): a line is an item of the resource's batch
 * (POST /transactions/batch, /purchaseorders/batch, /distributionorders/batch: upserts by their
 * external ids), applied in the chunk's transaction by the batch's own function, or for
 * transactions by the staged write (transaction-staging.ts), which answers and announces a line as
 * the batch's writeTransactions does. A transaction is no larger encoded than the chunk it came in.
 */
export const orderImports = new ImportJobs({
  transactions: {
    async apply(ctx, { accountId }, items) {
      // Without unknown fields (a newer gateway's): the batch's stored body and messages have none.
      const { transactions } = fromBinary(ordersV1.WriteTransactionsRequestSchema, items, { readUnknownFields: false });
      // The bytes each arrived in, which its message is spliced from.
      const sent = transactionBytes(items);
      const lines = transactions.map((t, i) => ({ t, sent: sent[i] }));
      return applyInRuns(lines, ({ t }) => t.externalTransactionId, async (run) => {
        const written = await upsertTransactionsStaged(ctx, accountId, run.map((l) => l.t), run.map((l) => l.sent), items.length);
        // As the batch route answers them: the fields at fault, else the result's message.
        return written.map((o) => ({ ...batchResponse(o), message: o.violations?.map((v) => `${v.path}: ${v.message}`).join("; ") || o.message, referenceField: "externalTransactionID" }));
      });
    },
  },
  purchaseorders: {
    async apply(ctx, caller, items) {
      const { purchaseOrders } = fromBinary(ordersV1.WritePurchaseOrdersRequestSchema, items);
      return applyInRuns(purchaseOrders, (po) => po.externalPoNo, async (run) => {
        const written = await writePurchaseOrders(ctx, caller, run, ordersV1.WriteMode.UPSERT, false, false, true);
        return written.map((o) => ({ ...batchResponse(o), referenceField: "externalPONo" }));
      });
    },
  },
  distributionorders: {
    async apply(ctx, { accountId }, items) {
      const { distributionOrders } = fromBinary(ordersV1.WriteDistributionOrdersRequestSchema, items);
      return applyInRuns(distributionOrders, (d) => JSON.stringify([d.externalDoid, d.externalRowId]), async (run) => (await writeDistributionOrders(ctx, accountId, run, ordersV1.WriteMode.UPSERT)).map(batchResponse));
    },
  },
});
