import { z } from "zod";
import type { Client } from "@connectrpc/connect";
import { fromRestJson, pricingV1, toRestJson } from "@analytics/contracts";
import { generalResponse } from "@analytics/errors";
import { BATCH_MAX } from "../http/batch";
import { repeatable, route, type RouteContext } from "../pipeline/route";
import { generalResponseSchema } from "../http/schemas";
import { decimal, wholeNumber } from "../http/values";
import { answerShape, requestShape, withoutReadOnly } from "../http/proto-schema";
import { dataVersionOf, type CallAs } from "../clients";
import { isoDate } from "./catalogue-schemas";
import { canonicalNames, currency } from "./pricing-schemas";

const { FxRateSchema } = pricingV1;

/** The FxRate message's fields; REST reads currencies as codes and dates its own way, and a rate is above 0. */
const fields = requestShape(FxRateSchema, {
  timestamp: z.unknown(),
  date: isoDate,
  fields: { fromCurrency: currency, toCurrency: currency, rate: decimal().refine((n) => n > 0, "must be greater than 0") },
});
const fxRateInput = z.preprocess(canonicalNames(Object.keys(fields)), z.strictObject(fields));
const fxRateSchema = z.object(answerShape(FxRateSchema)).meta({ id: "FxRate" });

const toProto = (r: Record<string, unknown>) => fromRestJson(FxRateSchema, withoutReadOnly(FxRateSchema, r));
const toRest = (r?: pricingV1.FxRate) => toRestJson(FxRateSchema, r!);

/** What the FX rate routes register with and call. */
interface Deps {
  ctx: RouteContext;
  pricing: Client<typeof pricingV1.PricingService>;
  as: CallAs;
}

const tag = "FX rates";
const badRequest = { description: "invalid input, or a range overlapping another rate (named in the message)", schema: generalResponseSchema };
const notFound = { description: "no such rate", schema: generalResponseSchema };
const idParam = { id: wholeNumber(0, Number.MAX_SAFE_INTEGER).describe("the rate's id") };

/** /v2/api/fxrates -> analytics.pricing.v1.PricingService */
export function fxRateRoutes(ctx: RouteContext, pricing: Client<typeof pricingV1.PricingService>, as: CallAs): void {
  const deps: Deps = { ctx, pricing, as };
  listFxRates(deps);
  createFxRate(deps);
  replaceFxRate(deps);
  deleteFxRate(deps);
}

function listFxRates({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "GET",
    url: "/v2/api/fxrates",
    summary: "FX rates, optionally filtered",
    tag,
    auth: "bearer",
    dataVersion: dataVersionOf(as, { pricing }),
    query: { externalReference: repeatable(), fromCurrency: repeatable(), toCurrency: repeatable() },
    responses: { 200: { description: "rates in creation order", schema: z.array(fxRateSchema) }, 400: badRequest },
    handler: async ({ query, caller }) => {
      const req = { externalReferences: query.externalReference ?? [], fromCurrencies: query.fromCurrency ?? [], toCurrencies: query.toCurrency ?? [] };
      return (await pricing.listFxRates(req, as(caller))).fxRates.map(toRest);
    },
  });
}

function createFxRate({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "POST",
    url: "/v2/api/fxrates",
    summary: "Create FX rates (all or nothing); a rate starting inside an open range closes that range at its fromDate",
    tag,
    auth: "bearer",
    body: z.array(fxRateInput).min(1).max(BATCH_MAX),
    responses: { 201: { description: "the rates created", schema: z.array(fxRateSchema) }, 400: badRequest },
    handler: async ({ body, caller }, _req, reply) => {
      const res = await pricing.createFxRates({ fxRates: body.map(toProto) }, as(caller));
      reply.status(201);
      return res.fxRates.map(toRest);
    },
  });
}

function replaceFxRate({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "PUT",
    url: "/v2/api/fxrates/:id",
    summary: "Replace a rate: it is deleted and recreated, so a new id comes back",
    tag,
    auth: "bearer",
    params: idParam,
    body: fxRateInput,
    responses: { 200: { description: "the new rate", schema: fxRateSchema }, 400: badRequest, 404: notFound },
    handler: async ({ params, body, caller }) => toRest((await pricing.replaceFxRate({ id: BigInt(params.id), fxRate: toProto(body) }, as(caller))).fxRate),
  });
}

function deleteFxRate({ ctx, pricing, as }: Deps): void {
  route(ctx, {
    method: "DELETE",
    url: "/v2/api/fxrates/:id",
    summary: "Delete a rate",
    tag,
    auth: "bearer",
    params: idParam,
    responses: { 200: { description: "deleted", schema: generalResponseSchema }, 404: notFound },
    handler: async ({ params, caller }) => {
      await pricing.deleteFxRate({ id: BigInt(params.id) }, as(caller));
      return generalResponse(200, "deleted");
    },
  });
}
