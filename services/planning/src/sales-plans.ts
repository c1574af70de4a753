import type { planningV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { refuseDuplicates } from "@analytics/rpc";
import { storeSalesPlans } from "./repository";

/**
 * The account's own sales plans, per SKU, channel and month (CONTRACT "Sales plans"): stored,
 * replaced or removed (no volume) in one transaction per batch, a handful of statements whatever
 * its size. Each item answers what it did: 201 created, 200 updated, removed or unchanged (sent
 * as stored, or a removal of a plan there is none of), 404 unknown SKU, 400 invalid, 409 the
 * same plan twice in one batch.
 */

type Result = Omit<planningV1.BatchResult, "$typeName" | "$unknown">;

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
/** An exact decimal as written (Decimal), not negative: plain digits or exponent notation. */
const VOLUME = /^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** The largest volume a plan takes (units a month): numeric holds more, nobody plans more. */
const MAX_VOLUME = 1e12;

function problemOf(p: planningV1.SalesPlanWrite): { field: string; message: string } | undefined {
  if (p.channel !== 1 && p.channel !== 2) return { field: "channel", message: "must be 1 (D2C) or 2 (B2B)" };
  if (!MONTH.test(p.month)) return { field: "month", message: "must be a month YYYY-MM" };
  const v = p.volume?.value;
  if (v !== undefined && (!VOLUME.test(v) || !(Number(v) <= MAX_VOLUME))) return { field: "volume", message: `must be a number from 0 to ${MAX_VOLUME}, or null to remove the plan` };
  return undefined;
}

export async function upsertSalesPlans(db: Db, accountId: string, plans: planningV1.SalesPlanWrite[]): Promise<Result[]> {
  const answer = (p: planningV1.SalesPlanWrite, statusCode: number, message: string): Result => ({ reference: p.key, referenceField: "key", statusCode, message });
  const results: (Result | undefined)[] = plans.map((p) => {
    const problem = problemOf(p);
    if (problem) return answer(p, 400, `${problem.field}: ${problem.message}`);
    if (!p.skuFound) return answer(p, 404, `no product with key ${p.key}`);
    return undefined;
  });
  refuseDuplicates(plans, results, (p) => `${p.skuId}/${p.channel}/${p.month}`, (p) => answer(p, 409, "the same key, channel and month appears more than once in the request"));
  const writes = plans.flatMap((p, i) => (results[i] ? [] : [{ i, sku_id: p.skuId, channel: p.channel, month: `${p.month}-01`, volume: p.volume?.value ?? null }]));
  if (writes.length) {
    const rows = await storeSalesPlans(db, accountId, writes);
    for (const r of rows) {
      const p = plans[r.i];
      if (r.same) results[r.i] = answer(p, 200, "unchanged");
      else if (r.removes) results[r.i] = answer(p, 200, "removed");
      else results[r.i] = r.was_absent ? answer(p, 201, "created") : answer(p, 200, "updated");
    }
  }
  return results as Result[];
}
