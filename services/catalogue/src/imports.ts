import { fromBinary } from "@bufbuild/protobuf";
import { catalogueV1 } from "@analytics/contracts";
import { batchResponse, ImportJobs, importRuns } from "@analytics/rpc";
import { upsertProducts } from "./products";

/**
 * The catalogue's import jobs (docs/imports.md): a products line is an item of POST
 * /products/batch, applied by the same upsertProducts, in the chunk's transaction.
 */
export const catalogueImports = new ImportJobs({
  products: {
    async apply(ctx, accountId, items) {
      const { products, cleared } = fromBinary(catalogueV1.UpsertProductsRequestSchema, items);
      const outcomes = [];
      for (const [from, to] of importRuns(products.map((p) => p.key))) {
        const written = await upsertProducts(ctx, accountId, products.slice(from, to), cleared.slice(from, to).map((c) => c.fields));
        outcomes.push(...written.map(batchResponse));
      }
      return outcomes;
    },
  },
});
