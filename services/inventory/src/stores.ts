import { timestampDate } from "@bufbuild/protobuf/wkt";
import { isCurrencyCode, type inventoryV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { invalid, notFound, type FieldViolation } from "@analytics/errors";
import { enqueue } from "@analytics/outbox";
import { atRevision, commit, refuseDuplicates, type ServiceContext } from "@analytics/rpc";
import { storeChanged, trafficRecorded } from "./changes";
import * as repo from "./repository";
import { storesTable, trafficTable } from "./resources";
import { checkText } from "./validation";

const fail = (violations: FieldViolation[]) => invalid(`${violations[0].path}: ${violations[0].message}`, violations);

function storeInput(s: inventoryV1.Store, path: string): repo.StoreInput {
  const violations = [...storesTable.violations(s, path), ...s.warehouses.flatMap((w, i) => checkText(`${path}.warehouses[${i}]`, w, true))];
  if (s.channelType !== undefined && s.channelType !== 1 && s.channelType !== 2) violations.push({ path: `${path}.channelType`, message: "must be 1 (D2C) or 2 (B2B)" });
  if (s.currencyCode && !isCurrencyCode(s.currencyCode)) violations.push({ path: `${path}.currencyCode`, message: "must be an ISO 4217 currency code (e.g. SEK)" });
  if (violations.length) throw fail(violations);
  return storesTable.rowOf({ ...s, warehouses: [...new Set(s.warehouses)] }) as repo.StoreInput;
}

/** Stores name warehouses by externalId; an unknown one is a 400 naming it. */
async function checkWarehouses(db: Parameters<typeof repo.warehousesByExternalId>[0], accountId: string, inputs: repo.StoreInput[], paths: string[]) {
  const known = await repo.warehousesByExternalId(db, accountId, inputs.flatMap((s) => s.warehouses));
  const violations = inputs.flatMap((s, i) =>
    s.warehouses.flatMap((w) => (known.has(w) ? [] : [{ path: `${paths[i]}.warehouses`, message: `unknown warehouse ${w}` }])),
  );
  if (violations.length) throw fail(violations);
}

/** POST /stores: all or nothing (the contract answers 201 with the array of stores). */
export async function upsertStores(ctx: ServiceContext, accountId: string, items: inventoryV1.Store[]) {
  const inputs = items.map((s, i) => storeInput(s, `[${i}]`));
  refuseDuplicates(inputs, [], (s) => s.external_store_id, (_, i, first) => {
    throw fail([{ path: `[${i}].externalStoreId`, message: `repeats item ${first}` }]);
  });
  return commit(ctx, async (tx) => {
    await checkWarehouses(tx, accountId, inputs, inputs.map((_, i) => `[${i}]`));
    const rows = await repo.upsertStores(tx, accountId, inputs);
    await enqueue(tx, rows.filter((r) => r.changed).map((r) => storeChanged(accountId, r)));
    const byExternal = new Map(rows.map((r) => [r.external_store_id, r]));
    return inputs.map((s) => byExternal.get(s.external_store_id)!);
  });
}

export async function getStore(db: Db, accountId: string, externalStoreId: string) {
  const row = await repo.findStore(db, accountId, externalStoreId);
  if (!row) throw notFound(`store ${externalStoreId} not found`);
  return row;
}

export const listStores = repo.listStores;

/** PUT /stores/{externalStoreID}: a full replacement of an existing store; `ifRevision` (If-Match) checked under the row's lock. */
export async function updateStore(ctx: ServiceContext, accountId: string, externalStoreId: string, s: inventoryV1.Store, ifRevision?: string) {
  if (s.externalStoreId && s.externalStoreId !== externalStoreId) {
    throw fail([{ path: "externalStoreId", message: "must equal the path's externalStoreID" }]);
  }
  const input = storeInput({ ...s, externalStoreId }, "body");
  return commit(ctx, async (tx) => {
    // The store must exist (a PUT replaces, never creates), at the revision named if one is.
    atRevision(`store ${externalStoreId}`, await repo.findStore(tx, accountId, externalStoreId, true), ifRevision);
    await checkWarehouses(tx, accountId, [input], ["body"]);
    const [row] = await repo.upsertStores(tx, accountId, [input]);
    if (row.changed) await enqueue(tx, [storeChanged(accountId, row)]);
    return row;
  });
}

export async function deleteStore(ctx: ServiceContext, accountId: string, externalStoreId: string, ifRevision?: string): Promise<void> {
  await commit(ctx, async (tx) => {
    const current = atRevision(`store ${externalStoreId}`, await repo.findStore(tx, accountId, externalStoreId, true), ifRevision);
    await repo.deleteStore(tx, accountId, current.id);
    await enqueue(tx, [storeChanged(accountId, { ...current, version: Number(current.version) + 1 }, true)]);
  });
}

// ---------------------------------------------------------------------------------------------
// Store traffic

export const MAX_TRAFFIC_EVENTS = 10_000;

/**
 * POST /storetrafficevents: all or nothing, one statement. A (counter, eventTime) repeated in the
 * batch keeps its last event; one already stored is overwritten (a replay).
 */
export async function recordTraffic(ctx: ServiceContext, accountId: string, events: inventoryV1.StoreTrafficEvent[]) {
  if (events.length > MAX_TRAFFIC_EVENTS) throw fail([{ path: "", message: `at most ${MAX_TRAFFIC_EVENTS} events` }]);
  const violations: FieldViolation[] = [];
  const byKey = new Map<string, repo.TrafficInput>();
  events.forEach((e, i) => {
    const v = trafficTable.violations(e, `[${i}]`);
    if (v.length) return void violations.push(...v);
    const row = trafficTable.rowOf(e) as repo.TrafficInput;
    byKey.set(`${row.counter_id}\u0000${row.event_time}`, row);
  });
  if (violations.length) throw fail(violations);
  const inputs = [...byKey.values()];
  return commit(ctx, async (tx) => {
    const written = await repo.recordTraffic(tx, accountId, inputs);
    // Events stored as sent are no change: only what was written is announced.
    const keys = new Set(written.map((w) => `${w.counter_id}\u0000${w.event_time.toISOString()}`));
    await enqueue(tx, trafficRecorded(accountId, inputs.filter((e) => keys.has(`${e.counter_id}\u0000${e.event_time}`))));
    const created = written.filter((w) => w.created).length;
    return { created, updated: written.length - created };
  });
}

export function listTraffic(db: Db, accountId: string, req: inventoryV1.ListStoreTrafficRequest, page: repo.Page) {
  const from = req.from ? timestampDate(req.from) : undefined;
  const to = req.to ? timestampDate(req.to) : undefined;
  if (from && to && from > to) throw fail([{ path: "from", message: "must not be after to" }]);
  return repo.listTraffic(db, accountId, { counterId: req.storeTrafficCounterId || undefined, from, to }, page);
}
