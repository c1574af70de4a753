import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { FieldViolation } from "@analytics/errors";
import type { ordersV1 } from "@analytics/contracts";

/**
 * The service defends itself although the gateway validates: whatever reaches SQL must be
 * something Postgres accepts, so bad input is a 400 of its order and never a raw SQL error.
 */

export const MAX_KEY_LENGTH = 500;
const MAX_TEXT_LENGTH = 10_000;
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The specification's date range of purchase orders: 1970-01-01 00:00:00 .. 2105-12-31 23:59:59. */
export const MIN_DATE_SECONDS = 0n;
export const MAX_DATE_SECONDS = BigInt(Date.UTC(2105, 11, 31, 23, 59, 59) / 1000);
const DECIMAL = /^-?[0-9]{1,20}(\.[0-9]{1,10})?$/;

export function textProblem(value: string, maxLength = MAX_TEXT_LENGTH): string | undefined {
  if (UNSTORABLE.test(value)) return "must be text without NUL characters or broken surrogates";
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  return undefined;
}

function dateProblem(ts: Timestamp | undefined): string | undefined {
  if (!ts) return undefined;
  if (ts.seconds < MIN_DATE_SECONDS || ts.seconds > MAX_DATE_SECONDS) return "must lie between 1970-01-01 00:00:00 and 2105-12-31 23:59:59";
  return undefined;
}

type Item = ordersV1.PurchaseOrderItem;
const ORDER_TEXTS: [string, (po: ordersV1.PurchaseOrder) => string | undefined][] = [
  ["externalComment", (po) => po.externalComment],
  ["externalWarehouseID", (po) => po.externalWarehouseId],
  ["supplier", (po) => po.supplier],
  ["label", (po) => po.label],
  ["orderType", (po) => po.orderType],
];
const ITEM_KEYS: [string, (item: Item) => string | undefined][] = [
  ["key", (i) => i.key],
  ["sku", (i) => i.sku],
  ["ean", (i) => i.ean],
  ["season", (i) => i.season],
  ["externalWarehouseID", (i) => i.externalWarehouseId],
  ["totalPriceCurrency", (i) => i.totalPriceCurrency],
];
const ITEM_DECIMALS: [string, (item: Item) => { value: string } | undefined][] = [
  ["totalPriceNet", (i) => i.totalPriceNet],
  ["totalPriceVat", (i) => i.totalPriceVat],
];

/**
 * Every field problem of one purchase order (paths as the REST body names them). Paths are
 * built only for a problem: a valid batch of 5,000 items builds none.
 */
export function purchaseOrderViolations(po: ordersV1.PurchaseOrder): FieldViolation[] {
  const out: FieldViolation[] = [];
  const add = (message: string | undefined, path: () => string) => void (message && out.push({ path: path(), message }));
  add(po.externalPoNo.trim() ? textProblem(po.externalPoNo, MAX_KEY_LENGTH) : "is required", () => "externalPONo");
  add(dateProblem(po.orderDate), () => "orderDate");
  add(dateProblem(po.deliveryDate), () => "deliveryDate");
  if (po.deliveryStatus < 0 || po.deliveryStatus > 5) add("must be 0..5", () => "deliveryStatus");
  for (const [name, get] of ORDER_TEXTS) {
    const v = get(po);
    if (v !== undefined) add(textProblem(v), () => name);
  }
  const rows = new Set<string>();
  po.items.forEach((item, i) => {
    const at = (field: string) => () => `items[${i}].${field}`;
    if (item.externalRowId !== undefined) {
      add(textProblem(item.externalRowId, MAX_KEY_LENGTH), at("externalRowID"));
      if (rows.has(item.externalRowId)) add("must be unique within the order", at("externalRowID"));
      rows.add(item.externalRowId);
    }
    for (const [name, get] of ITEM_KEYS) {
      const v = get(item);
      if (v !== undefined) add(textProblem(v, MAX_KEY_LENGTH), at(name));
    }
    if (item.quantity < 0) add("must be at least 0", at("quantity"));
    add(dateProblem(item.deliveryDate), at("deliveryDate"));
    for (const [name, get] of ITEM_DECIMALS) {
      const d = get(item);
      if (d && !DECIMAL.test(d.value)) add("must be a decimal number", at(name));
    }
    let delivered = 0;
    item.deliveries.forEach((d, j) => {
      if (d.quantity < 0) add("must be at least 0", at(`deliveries[${j}].quantity`));
      if (d.deliveryId !== undefined) add(textProblem(d.deliveryId, MAX_KEY_LENGTH), at(`deliveries[${j}].deliveryID`));
      add(dateProblem(d.deliveryDate), at(`deliveries[${j}].deliveryDate`));
      delivered += d.quantity;
    });
    if (delivered > 2 ** 31 - 1) add("delivered quantities sum beyond 2147483647", at("deliveries"));
  });
  return out;
}

export const violationMessage = (violations: FieldViolation[]) => violations.map((v) => `${v.path}: ${v.message}`).join("; ");
