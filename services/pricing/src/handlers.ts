import type { ConnectRouter } from "@connectrpc/connect";
import { pricingV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import { isUuid } from "@analytics/db";
import { accountVersionHandler, answerDataVersion, batchResponse, batchResult, pageOf, type ServiceContext } from "@analytics/rpc";
import * as fx from "./fx-rates";
import * as priceLists from "./price-lists";
import * as pricats from "./pricats";
import * as prices from "./prices";
import * as repo from "./repository";
import { priceFromRow, priceListFromRow } from "./resources";

const { PricingService } = pricingV1;
/** Thin Connect handlers: proto in, plain function, proto out. */
export function pricingRoutes(ctx: ServiceContext) {
  const { db } = ctx;
  return (router: ConnectRouter) =>
    router.service(PricingService, {
      getAccountVersion: accountVersionHandler(db),
      async listPriceLists(_req, c) {
        return { priceLists: (await repo.listPriceLists(db, callerOf(c).accountId)).map(priceListFromRow) };
      },
      async getPriceList(req, c) {
        const row = await priceLists.getPriceList(db, callerOf(c).accountId, req.externalPriceListId);
        return { priceList: priceListFromRow(row), revision: row.revision };
      },
      async createPriceList(req, c) {
        const row = await priceLists.createPriceList(ctx, callerOf(c).accountId, req.priceList);
        return { priceList: priceListFromRow(row), created: Boolean(row.created) };
      },
      async updatePriceList(req, c) {
        return { priceList: priceListFromRow(await priceLists.updatePriceList(ctx, callerOf(c).accountId, req.externalPriceListId, req.priceList, req.ifRevision)) };
      },
      async listPrices(req, c) {
        const accountId = callerOf(c).accountId;
        const [{ rows, total }, customPriceFields] = await Promise.all([prices.listPrices(db, accountId, pageOf(req.page), req.listExternalId), repo.customPriceFields(db, accountId)]);
        return { prices: rows.map(priceFromRow), totalCount: BigInt(total), customPriceFields };
      },
      async *streamPrices(req, c) {
        const accountId = callerOf(c).accountId;
        const customPriceFields = await repo.customPriceFields(db, accountId);
        for await (const rows of prices.streamPrices(db, accountId, req.listExternalId)) yield { prices: rows.map(priceFromRow), customPriceFields };
      },
      async upsertPrices(req, c) {
        const outcomes = await prices.upsertPrices(ctx, callerOf(c).accountId, req.prices);
        return { results: outcomes.map((o) => batchResult(o)) };
      },
      async deletePrices(req, c) {
        return { results: (await prices.deletePrices(ctx, callerOf(c).accountId, req)).map(batchResponse) };
      },
      async pricesOfProducts(req, c) {
        return { prices: (await repo.pricesOfProducts(db, callerOf(c).accountId, req.productIds.filter(isUuid))).map(priceFromRow) };
      },
      async productPricesJson(req, c) {
        const { rows, version } = await repo.productPricesJson(db, callerOf(c).accountId, req.productIds.filter(isUuid));
        answerDataVersion(c, version);
        return { products: rows.map((r) => ({ productId: r.product_id, pricesJson: r.prices })) };
      },
      async listFxRates(req, c) {
        return { fxRates: (await fx.listFxRates(db, callerOf(c).accountId, req)).map(fx.fxRateFromRow) };
      },
      async createFxRates(req, c) {
        return { fxRates: (await fx.createFxRates(ctx, callerOf(c).accountId, req.fxRates)).map(fx.fxRateFromRow) };
      },
      async replaceFxRate(req, c) {
        return { fxRate: fx.fxRateFromRow(await fx.replaceFxRate(ctx, callerOf(c).accountId, req.id, req.fxRate)) };
      },
      async listPricats(req, c) {
        const { pricats: rows, total } = await pricats.listPricats(db, callerOf(c).accountId, req, pageOf(req.page));
        return { pricats: rows, totalCount: BigInt(total) };
      },
      async listPricatSkus(req, c) {
        const { skus, total } = await pricats.listPricatSkus(db, callerOf(c).accountId, req, pageOf(req.page));
        return { skus, totalCount: BigInt(total) };
      },
      async upsertPricatSkus(req, c) {
        const outcomes = await pricats.upsertPricatSkus(ctx, callerOf(c).accountId, req);
        return { results: outcomes.map((o) => batchResult(o)) };
      },
      async deleteFxRate(req, c) {
        await fx.deleteFxRate(ctx, callerOf(c).accountId, req.id);
        return {};
      },
    });
}
