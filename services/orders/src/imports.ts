import { fromBinary } from "@bufbuild/protobuf";
import { ordersV1 } from "@analytics/contracts";
import { ImportJobs, importRuns } from "@analytics/rpc";
import { writeTransactions } from "./transactions";

/**
 * The orders service's import jobs (docs/imports.md): a transactions line is an item of POST
 * /transactions/batch (an upsert by externalTransactionID), applied by the same
 * writeTransactions, in the chunk's transaction.
 */
export const orderImports = new ImportJobs({
  transactions: {
    async apply(ctx, accountId, items) {
      const { transactions } = fromBinary(ordersV1.WriteTransactionsRequestSchema, items);
      const outcomes = [];
      for (const [from, to] of importRuns(transactions.map((t) => t.externalTransactionId))) {
        const written = await writeTransactions(ctx, accountId, transactions.slice(from, to), ordersV1.WriteMode.UPSERT);
        // As the batch route answers them: the fields at fault, else the result's message.
        outcomes.push(...written.map((o) => ({ ...o, message: o.violations?.map((v) => `${v.path}: ${v.message}`).join("; ") || o.message, referenceField: "externalTransactionID" })));
      }
      return outcomes.map(({ statusCode, reference, referenceField, message }) => ({ statusCode, reference, referenceField, message }));
    },
  },
});
