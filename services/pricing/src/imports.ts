import { fromBinary } from "@bufbuild/protobuf";
import { pricingV1 } from "@analytics/contracts";
import { applyInRuns, batchResponse, ImportJobs } from "@analytics/rpc";
import { upsertPrices } from "./prices";

/**
 * Pricing's import jobs (docs/imports.md): a prices line is an item of POST /prices/batch (its
 * SKU resolved by the gateway as the batch's are), applied by the same upsertPrices, in the
 * chunk's transaction. A line naming a price (list, SKU, season) an earlier line of its chunk
 * named is applied in a later call, after it: it updates what that line wrote, as a later batch would.
 */
export const pricingImports = new ImportJobs({
  prices: {
    async apply(ctx, { accountId }, items) {
      const { prices } = fromBinary(pricingV1.UpsertPricesRequestSchema, items);
      return applyInRuns(prices, (p) => JSON.stringify([p.listExternalId, p.productId || p.key, p.season ?? ""]), async (run) => (await upsertPrices(ctx, accountId, run)).map(batchResponse));
    },
  },
});
