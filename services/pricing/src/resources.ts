import { create } from "@bufbuild/protobuf";
import { DecimalSchema, pricingV1 } from "@analytics/contracts";
import { tableSpec, type Row } from "@analytics/db";

const { FxRateSchema, PriceListSchema, PriceSchema, PricatSchema } = pricingV1;

/**
 * Pricing's tables as the columns of its REST-shaped messages (their rules in
 * proto/pricing/v1/pricing.proto say which fields are stored and how), and rows to messages.
 */

export const decimal = (value: string) => create(DecimalSchema, { value });

/** price_lists: the PriceList's columns; its external id is the external_id column. */
export const priceListsTable = tableSpec(PriceListSchema, "price_lists", {
  assigned: ["created_at", "updated_at"],
  columnNames: { external_price_list_id: "external_id" },
});

/**
 * prices: the Price's columns with the list's id; its list's external id and currency are the
 * list's (read through the join), its vat the list's default where the price has none.
 */
export const pricesTable = tableSpec(PriceSchema, "prices", { extra: { price_list_id: "uuid" }, assigned: ["updated_at"] });

/** What the price columns of a join with price_lists (alias l) read: the list's fields and the vat in force. */
export const priceSelect = (alias: string) =>
  `${pricesTable.select(alias, { vat: `COALESCE(${alias}.vat, l.default_vat)` })}, l.external_id AS list_external_id, l.currency`;

/** fx_rates: the FxRate's columns (dates as YYYY-MM-DD). */
export const fxRatesTable = tableSpec(FxRateSchema, "fx_rates", { assigned: ["id"] });

/** pricats: the Pricat's columns. */
export const pricatsTable = tableSpec(PricatSchema, "pricats", { assigned: ["created_at", "updated_at"] });

export function priceListFromRow(row: Row): pricingV1.PriceList {
  return priceListsTable.messageOf(row);
}

/** A price of a row read with `priceSelect` (season '' is "no season"). */
export function priceFromRow(row: Row & { list_external_id: string; currency: string; season: string }): pricingV1.Price {
  const price = pricesTable.messageOf(row);
  if (price.season === "") price.season = undefined;
  price.listExternalId = row.list_external_id;
  price.currency = row.currency;
  return price;
}
