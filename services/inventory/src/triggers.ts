import { topics, type inventoryV1 } from "@analytics/contracts";
import { isIntegerId, isUuid, type Db, type Tx } from "@analytics/db";
import { invalid, notFound, type FieldViolation } from "@analytics/errors";
import { enqueue, enqueueInPages } from "@analytics/outbox";
import { commit, itemOutcome, refuseDuplicates, type ItemOutcome, type ServiceContext } from "@analytics/rpc";
import { stockTriggerChanged } from "./changes";
import * as repo from "./repository";
import { triggersTable } from "./resources";

const REF = "key";
const answer = (statusCode: number, reference: string, message: string, violations: FieldViolation[] = []): ItemOutcome<repo.TriggerRow> => itemOutcome(statusCode, reference, REF, message, violations);

function checkTrigger(t: inventoryV1.StockTrigger, i: number): FieldViolation[] {
  const p = `[${i}]`;
  const v = triggersTable.violations(t, p);
  if (!t.warehouseId && !t.warehouseExternalId) v.push({ path: `${p}.warehouseId`, message: "warehouseId or warehouseExternalId is required" });
  if (t.warehouseId && !isUuid(t.warehouseId)) v.push({ path: `${p}.warehouseId`, message: "must be a UUID" });
  if (t.min !== undefined && t.max !== undefined && t.min > t.max) v.push({ path: `${p}.min`, message: "must not exceed max" });
  if (t.lowerLimit !== undefined && t.upperLimit !== undefined && t.lowerLimit > t.upperLimit) v.push({ path: `${p}.lowerLimit`, message: "must not exceed upperLimit" });
  return v;
}

/**
 * POST /stocktriggers/batch: each item is a full write keyed by (warehouse, SKU); invalid items are
 * 400, unknown SKU or warehouse 404, the rest written in one statement, read back, and announced
 * (created or updated) with the trigger as GET returns it. One answer per item, in order.
 */
export async function upsertTriggers(ctx: ServiceContext, accountId: string, writes: inventoryV1.StockTriggerWrite[]) {
  const outcomes: (ReturnType<typeof answer> | undefined)[] = [];
  const candidates: { i: number; t: inventoryV1.StockTrigger }[] = [];
  writes.forEach((w, i) => {
    const t = w.trigger;
    const ref = t?.key ?? "";
    const v = t ? checkTrigger(t, i) : [{ path: `[${i}]`, message: "is required" }];
    if (v.length) outcomes[i] = answer(400, ref, `${v[0].path}: ${v[0].message}`, v);
    else if (!w.skuFound) outcomes[i] = answer(404, ref, `SKU ${ref} not found`);
    else candidates.push({ i, t: t! });
  });
  if (candidates.length) {
    await commit(ctx, async (tx) => {
      const byId = await repo.warehousesById(tx, accountId, candidates.flatMap((c) => (c.t.warehouseId ? [c.t.warehouseId] : [])));
      const byExternal = await repo.warehousesByExternalId(tx, accountId, candidates.flatMap((c) => (c.t.warehouseId ? [] : [c.t.warehouseExternalId])));
      const warehouseOf: { id: string }[] = [];
      for (const { i, t } of candidates) {
        const wh = t.warehouseId ? byId.get(t.warehouseId) : byExternal.get(t.warehouseExternalId);
        if (!wh) {
          outcomes[i] = answer(404, t.key, `warehouse ${t.warehouseId || t.warehouseExternalId} not found`);
          continue;
        }
        // Both identifiers sent must name the same warehouse; neither is silently preferred.
        if (t.warehouseId && t.warehouseExternalId && t.warehouseExternalId !== wh.external_id) {
          const message = `names warehouse ${wh.external_id}, not ${t.warehouseExternalId}`;
          outcomes[i] = answer(400, t.key, `[${i}].warehouseExternalId ${message}`, [{ path: `[${i}].warehouseExternalId`, message }]);
          continue;
        }
        warehouseOf[i] = wh;
      }
      refuseDuplicates(writes, outcomes, (w, i) => `${warehouseOf[i].id}:${w.trigger!.skuId}`, (w, i, first) =>
        answer(400, w.trigger!.key, `[${i}]: repeats item ${first} (same warehouse and SKU)`, [{ path: `[${i}].key`, message: `repeats item ${first}` }]),
      );
      const inputs: repo.TriggerInput[] = candidates.flatMap(({ i, t }) =>
        outcomes[i] ? [] : [{ ord: i, ...(triggersTable.rowOf({ ...t, warehouseId: warehouseOf[i].id }) as { warehouse_id: string; sku_id: string }) }],
      );
      const written = await repo.upsertTriggers(tx, accountId, inputs);
      const rows = new Map((await repo.findTriggers(tx, accountId, written.map((w) => String(w.id)))).map((r) => [String(r.id), r]));
      await enqueue(tx, written.filter((w) => w.changed).map((w) => stockTriggerChanged(accountId, rows.get(String(w.id))!, w.created)));
      for (const w of written) {
        const row = rows.get(String(w.id))!;
        const message = w.created ? "created" : w.changed ? "updated" : "unchanged";
        outcomes[w.ord] = { ...answer(w.created ? 201 : 200, row.key, message), value: row };
      }
    });
  }
  return outcomes.map((o) => o ?? answer(500, "", "item not answered"));
}

export async function getTrigger(db: Db, accountId: string, id: bigint) {
  const [row] = await repo.findTriggers(db, accountId, [String(id)]);
  if (!row) throw notFound(`stock trigger ${id} not found`);
  return row;
}

export function listTriggers(db: Db, accountId: string, req: inventoryV1.ListStockTriggersRequest, page: repo.Page) {
  const bad = [...req.warehouseIds.map((id) => ["warehouseId", id, isUuid(id)]), ...req.skuIds.map((id) => ["sku_id", id, isUuid(id) || isIntegerId(id)])].find(([, , ok]) => !ok);
  if (bad) {
    const message = bad[0] === "sku_id" ? "must be a product's UUID or integer id" : "must be a UUID";
    throw invalid(`${bad[0]} ${message}`, [{ path: String(bad[0]), message }]);
  }
  return repo.listTriggers(db, accountId, { warehouseIds: req.warehouseIds, skuIds: req.skuIds, keys: req.keys }, page);
}

/**
 * Re-announces every stored trigger, as it is, on analytics.inventory.stock_trigger.backfilled
 * (planning's replica reads it; it is no change for anyone else), `pageSize` at a time. Answers
 * how many it announced.
 */
export async function announceStoredTriggers(db: Db | Tx, pageSize = 500): Promise<number> {
  return enqueueInPages(
    db,
    (last: (repo.TriggerRow & { account_id: string }) | undefined) => repo.triggersPage(db, last, pageSize),
    async (rows) => rows.map((r) => stockTriggerChanged(r.account_id, r, false, topics.inventoryStockTriggerBackfilled)),
  );
}
