import { fromBinary } from "@bufbuild/protobuf";
import { ordersV1 } from "@analytics/contracts";
import { ImportJobs, importRuns } from "@analytics/rpc";
import { upsertTransactionsStaged } from "./transaction-staging";

/**
 * The orders service's import jobs (docs/imports.md): a transactions line is an item of POST
 * /transactions/batch (an upsert by externalTransactionID), applied in the chunk's transaction by
 * the staged write (transaction-staging.ts), which answers and announces it as the batch's
 * writeTransactions does. A transaction is no larger encoded than the chunk it came in.
 */
export const orderImports = new ImportJobs({
  transactions: {
    async apply(ctx, accountId, items) {
      // Without unknown fields (a newer gateway's): the batch's stored body and messages have none.
      const { transactions } = fromBinary(ordersV1.WriteTransactionsRequestSchema, items, { readUnknownFields: false });
      const outcomes = [];
      for (const [from, to] of importRuns(transactions.map((t) => t.externalTransactionId))) {
        const written = await upsertTransactionsStaged(ctx, accountId, transactions.slice(from, to), items.length);
        // As the batch route answers them: the fields at fault, else the result's message.
        outcomes.push(...written.map((o) => ({ ...o, message: o.violations?.map((v) => `${v.path}: ${v.message}`).join("; ") || o.message, referenceField: "externalTransactionID" })));
      }
      return outcomes.map(({ statusCode, reference, referenceField, message }) => ({ statusCode, reference, referenceField, message }));
    },
  },
});
