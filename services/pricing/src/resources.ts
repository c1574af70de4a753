import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DecimalSchema, pricingV1 } from "@analytics/contracts";
import type { PriceListRow, PriceRow } from "./repository";

/** Rows to proto resources. */

export const decimal = (value: string) => create(DecimalSchema, { value });

export function priceListFromRow(row: PriceListRow): pricingV1.PriceList {
  return create(pricingV1.PriceListSchema, {
    externalPriceListId: row.external_id,
    name: row.name,
    currency: row.currency,
    defaultPriceList: row.default_price_list,
    defaultVat: decimal(row.default_vat),
    createdAt: timestampFromDate(new Date(row.created_at)),
    updatedAt: timestampFromDate(new Date(row.updated_at)),
  });
}

export function priceFromRow(row: PriceRow): pricingV1.Price {
  return create(pricingV1.PriceSchema, {
    listExternalId: row.list_external_id,
    key: row.key,
    sku: row.sku ?? undefined,
    price: decimal(row.price),
    currency: row.currency,
    vat: decimal(row.vat),
    season: row.season === "" ? undefined : row.season,
    customPrices: Object.fromEntries(Object.entries(row.custom_prices ?? {}).map(([k, v]) => [k, decimal(String(v))])),
    updatedAt: timestampFromDate(new Date(row.updated_at)),
    productId: row.product_id,
  });
}
