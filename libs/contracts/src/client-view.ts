import { toRestJson } from "./rest-json";
import { ProductSchema, type Product } from "./gen/catalogue/v1/catalogue_pb";
import { StockTriggerSchema, type StockTrigger } from "./gen/inventory/v1/inventory_pb";
import { DistributionOrderSchema, PurchaseOrderSchema, TransactionSchema, type DistributionOrder, type PurchaseOrder, type Transaction } from "./gen/orders/v1/orders_pb";

/**
 * What REST answers differ from the proto messages in, so that the published Go client
 * (maddenutils) decodes them into its structs (CONTRACT.md, "Compatibility with the published
 * client"): integer ids, its types where ours would not decode, and the additional fields it
 * sends read back under its own names.
 */

/** The published client's additional Product fields, kept in externalAttributes and answered under their names too. */
export const PRODUCT_CLIENT_FIELDS = [
  "variantExternalID", "productID", "variantID", "info", "costPrice", "costPriceCurrency", "supplierPrice", "supplierPriceCurrency",
  "price", "priceCurrency", "priceIncludingVat", "wholesalePrice", "wholesalePriceCurrency", "vatValue", "leadTime", "customFields",
  "additionalSuppliers", "unitVolume", "packSize", "weight",
] as const;

/** productType text that the client's integer holds: answered as a number. */
export const WHOLE_NUMBER_TEXT = /^(0|[1-9][0-9]{0,8})$/;

/**
 * A product as REST answers it: `id` the integer id and `uuid` the internal one, `brandId` and
 * `categoryId` the brand's and category's integer ids, `year` as text, `productType` as a number
 * when it is a whole number, and the client's additional fields that externalAttributes holds
 * after `updatedAt`. The
 * catalogue's GET /products SQL writes the same (its tests compare the two).
 */
export function productToRest(p: Product): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(toRestJson(ProductSchema, p))) {
    switch (name) {
      case "id":
        out.id = Number(p.seq);
        out.uuid = value;
        break;
      case "brandId":
        out.brandId = p.brandSeq === undefined ? null : Number(p.brandSeq);
        break;
      case "categoryId":
        out.categoryId = p.categorySeq === undefined ? null : Number(p.categorySeq);
        break;
      case "year":
        out.year = p.year === undefined ? null : String(p.year);
        break;
      case "productType":
        out.productType = p.productType !== undefined && WHOLE_NUMBER_TEXT.test(p.productType) ? Number(p.productType) : (p.productType ?? null);
        break;
      case "seq":
      case "brandSeq":
      case "categorySeq":
        break;
      default:
        out[name] = value;
    }
  }
  const attributes = (p.externalAttributes ?? {}) as Record<string, unknown>;
  for (const name of PRODUCT_CLIENT_FIELDS) if (attributes[name] !== undefined) out[name] = attributes[name];
  return out;
}

/** The published client's additional fields on orders, kept in `attributes` and answered under their names too. */
export const PO_CLIENT_FIELDS = ["completedDate", "cancelledDate", "deliveryWindow", "factory", "transportMethod"] as const;
export const PO_ITEM_CLIENT_FIELDS = ["productName", "brandName", "supplier", "revisedDeliveryDate", "departureDate", "revisedDepartureDate"] as const;
export const DO_CLIENT_FIELDS = ["orderType", "deliveryWindow", "label"] as const;
export const TX_CLIENT_FIELDS = ["orderType", "invoicedDate"] as const;
export const TX_ITEM_CLIENT_FIELDS = [
  "variantName", "vendorSKU", "brandName", "supplier", "category", "collection", "season", "year", "size", "color", "ageGroup", "gender",
  "productGroupID", "variantGroupID", "costPrice", "costPriceCurrency", "moneyDiscount", "productType", "fulfillmentType", "deliveryWindow",
  "primaryWarehouseExternalID", "invoicedDate",
] as const;

/**
 * `rest` with `id` the integer id (`seq`), `uuid` the internal one, and the client's fields that
 * `attributes` holds under their names (those it does not hold are left out).
 */
function withClientView(rest: Record<string, unknown>, seq: bigint | undefined, fields: readonly string[], renamed: Record<string, string> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rest)) {
    if (name === "seq") continue;
    if (name === "id" && seq !== undefined) {
      out.id = Number(seq);
      out.uuid = value;
    } else out[name] = value;
    if (renamed[name]) out[renamed[name]] = value;
  }
  const attributes = (rest.attributes ?? {}) as Record<string, unknown>;
  for (const name of fields) if (attributes[name] !== undefined && !(name in out)) out[name] = attributes[name];
  return out;
}

/**
 * `rest` with `skuId` the product's integer id (`skuSeq`; null when it is not known) and `skuUuid`
 * its internal id, as stock triggers and purchase-order lines answer them.
 */
function withSkuIds(rest: Record<string, unknown>, skuSeq: bigint | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rest)) {
    if (name === "skuSeq") continue;
    if (name === "skuId") {
      out.skuId = skuSeq === undefined ? null : Number(skuSeq);
      out.skuUuid = value;
    } else out[name] = value;
  }
  return out;
}

/**
 * A purchase order as REST answers it (`externalPurchaseNo` = `externalPONo`), as GET and the
 * draft_po_change payload give it: each line's `skuId` is its product's integer id.
 */
export function purchaseOrderToRest(po: PurchaseOrder): Record<string, unknown> {
  const out = withClientView(toRestJson(PurchaseOrderSchema, po), po.seq, PO_CLIENT_FIELDS, { externalPONo: "externalPurchaseNo" });
  out.items = (out.items as Record<string, unknown>[]).map((item, i) => withClientView(withSkuIds(item, po.items[i].skuSeq), undefined, PO_ITEM_CLIENT_FIELDS));
  return out;
}

/** A distribution order row as REST answers it (`externalDistributionOrderId` = `externalDOID`). */
export function distributionOrderToRest(d: DistributionOrder): Record<string, unknown> {
  return withClientView(toRestJson(DistributionOrderSchema, d), d.seq, DO_CLIENT_FIELDS, { externalDOID: "externalDistributionOrderId" });
}

/** A transaction as REST answers it (an item's `externalID` = `externalItemID`). */
export function transactionToRest(t: Transaction): Record<string, unknown> {
  const out = withClientView(toRestJson(TransactionSchema, t), t.seq, TX_CLIENT_FIELDS);
  out.items = (out.items as Record<string, unknown>[]).map((item) => withClientView(item, undefined, TX_ITEM_CLIENT_FIELDS, { externalItemID: "externalID" }));
  return out;
}

/**
 * A stock trigger as REST answers it: `skuId` the product's integer id (the published client's
 * `skuID` is an integer; null for a trigger not written since products had one), `skuUuid` its
 * internal id.
 */
export function stockTriggerToRest(t: StockTrigger): Record<string, unknown> {
  return withSkuIds(toRestJson(StockTriggerSchema, t), t.skuSeq);
}
