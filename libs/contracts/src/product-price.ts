import { create } from "@bufbuild/protobuf";
import { toRestJson } from "./rest-json";
import { ProductPriceSchema } from "./gen/catalogue/v1/catalogue_pb";
import type { Price } from "./gen/pricing/v1/pricing_pb";

/**
 * One entry of a product's `prices` (GET /products) as REST shows it: toRestJson of the
 * ProductPrice message, the entry's one declaration. Pricing's ProductPricesJson builds the same
 * text in SQL (its tests compare the two); the events service writes this.
 */
export function productPriceToRest(p: Price): Record<string, unknown> {
  const entry = create(ProductPriceSchema, { listExternalId: p.listExternalId, price: p.price, currency: p.currency, vat: p.vat, customPrices: p.customPrices });
  return toRestJson(ProductPriceSchema, entry);
}
