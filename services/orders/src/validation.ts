import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { FieldViolation } from "@analytics/errors";
import type { ordersV1 } from "@analytics/contracts";
import { jsonProblems, unstorableText } from "@analytics/db";

/**
 * The service defends itself although the gateway validates: whatever reaches SQL must be
 * something Postgres accepts, so bad input is a 400 of its order and never a raw SQL error.
 */

export const MAX_KEY_LENGTH = 500;
const MAX_TEXT_LENGTH = 10_000;
/** The specification's date range of purchase orders: 1970-01-01 00:00:00 .. 2105-12-31 23:59:59. */
export const MIN_DATE_SECONDS = 0n;
export const MAX_DATE_SECONDS = BigInt(Date.UTC(2105, 11, 31, 23, 59, 59) / 1000);
const DECIMAL = /^-?[0-9]{1,20}(\.[0-9]{1,10})?$/;

export function textProblem(value: string, maxLength = MAX_TEXT_LENGTH): string | undefined {
  const unstorable = unstorableText(value);
  if (unstorable) return unstorable;
  if (value.length > maxLength) return `must be at most ${maxLength} characters`;
  return undefined;
}

function dateProblem(ts: Timestamp | undefined): string | undefined {
  if (!ts) return undefined;
  if (ts.seconds < MIN_DATE_SECONDS || ts.seconds > MAX_DATE_SECONDS) return "must lie between 1970-01-01 00:00:00 and 2105-12-31 23:59:59";
  return undefined;
}

/** Every field problem of one purchase order (paths as the REST body names them). */
export function purchaseOrderViolations(po: ordersV1.PurchaseOrder): FieldViolation[] {
  const out: FieldViolation[] = [];
  const add = (path: string, message: string | undefined) => void (message && out.push({ path, message }));
  add("externalPONo", po.externalPoNo.trim() ? textProblem(po.externalPoNo, MAX_KEY_LENGTH) : "is required");
  add("orderDate", dateProblem(po.orderDate));
  add("deliveryDate", dateProblem(po.deliveryDate));
  if (po.deliveryStatus < 0 || po.deliveryStatus > 5) add("deliveryStatus", "must be 0..5");
  const texts = { externalComment: po.externalComment, externalWarehouseID: po.externalWarehouseId, supplier: po.supplier, label: po.label, orderType: po.orderType };
  for (const [path, v] of Object.entries(texts)) if (v !== undefined) add(path, textProblem(v));
  out.push(...jsonProblems(po.attributes, "attributes"));
  const rows = new Set<string>();
  po.items.forEach((item, i) => {
    const p = `items[${i}]`;
    if (item.externalRowId !== undefined) {
      add(`${p}.externalRowID`, textProblem(item.externalRowId, MAX_KEY_LENGTH));
      if (rows.has(item.externalRowId)) add(`${p}.externalRowID`, "must be unique within the order");
      rows.add(item.externalRowId);
    }
    const itemTexts = { key: item.key, sku: item.sku, ean: item.ean, season: item.season, externalWarehouseID: item.externalWarehouseId, totalPriceCurrency: item.totalPriceCurrency };
    for (const [path, v] of Object.entries(itemTexts)) if (v !== undefined) add(`${p}.${path}`, textProblem(v, MAX_KEY_LENGTH));
    if (item.quantity < 0) add(`${p}.quantity`, "must be at least 0");
    out.push(...jsonProblems(item.attributes, `${p}.attributes`));
    add(`${p}.deliveryDate`, dateProblem(item.deliveryDate));
    for (const [name, d] of Object.entries({ totalPriceNet: item.totalPriceNet, totalPriceVat: item.totalPriceVat })) {
      if (d && !DECIMAL.test(d.value)) add(`${p}.${name}`, "must be a decimal number");
    }
    let delivered = 0;
    item.deliveries.forEach((d, j) => {
      if (d.quantity < 0) add(`${p}.deliveries[${j}].quantity`, "must be at least 0");
      if (d.deliveryId !== undefined) add(`${p}.deliveries[${j}].deliveryID`, textProblem(d.deliveryId, MAX_KEY_LENGTH));
      add(`${p}.deliveries[${j}].deliveryDate`, dateProblem(d.deliveryDate));
      delivered += d.quantity;
    });
    if (delivered > 2 ** 31 - 1) add(`${p}.deliveries`, "delivered quantities sum beyond 2147483647");
  });
  return out;
}

export const violationMessage = (violations: FieldViolation[]) => violations.map((v) => (v.path ? `${v.path}: ${v.message}` : v.message)).join("; ");
