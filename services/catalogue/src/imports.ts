import { fromBinary } from "@bufbuild/protobuf";
import { catalogueV1 } from "@analytics/contracts";
import { applyInRuns, batchResponse, ImportJobs } from "@analytics/rpc";
import { upsertProducts } from "./products";

/**
 * The catalogue's import jobs (docs/imports.md): a products line is an item of POST
 * /products/batch, applied by the same upsertProducts (a staged write), in the chunk's
 * transaction, answered without the products (an import's results have none).
 */
export const catalogueImports = new ImportJobs({
  products: {
    async apply(ctx, { accountId }, items) {
      const { products, cleared } = fromBinary(catalogueV1.UpsertProductsRequestSchema, items);
      const lines = products.map((product, i) => ({ product, cleared: cleared[i].fields }));
      return applyInRuns(lines, (l) => l.product.key, async (run) =>
        (await upsertProducts(ctx, accountId, run.map((l) => l.product), run.map((l) => l.cleared), false)).map(batchResponse),
      );
    },
  },
});
