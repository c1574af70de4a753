import { topics, type pricingV1 } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { invalid, notFound } from "@analytics/errors";
import { enqueue, outboxEntry } from "@analytics/outbox";
import { commit, notWritten, type ServiceContext } from "@analytics/rpc";
import * as repo from "./repository";
import { decimal, priceListFromRow, priceListsTable } from "./resources";
import { Problems } from "./validation";

/** Price lists: created or updated by (account, externalPriceListId). */

/** The list's columns, once its fields keep their rules (PriceList in pricing.proto) and its currency is a code. */
function checked(list: pricingV1.PriceList | undefined): repo.PriceListWrite {
  if (!list) throw invalid("a price list is required", [{ path: "", message: "is required" }]);
  const withVat = { ...list, defaultVat: list.defaultVat ?? decimal("0") };
  const p = new Problems();
  p.list.push(...priceListsTable.violations(withVat));
  if (list.currency) p.currency("currency", list.currency);
  p.check("price list");
  return priceListsTable.rowOf(withVat) as repo.PriceListWrite;
}

const missing = (externalId: string) => notFound(`price list ${externalId} not found`);

export async function getPriceList(db: Db, accountId: string, externalId: string) {
  const row = await repo.findPriceList(db, accountId, externalId);
  if (!row) throw missing(externalId);
  return row;
}

async function write(ctx: ServiceContext, accountId: string, work: (tx: Parameters<typeof repo.upsertPriceList>[0]) => Promise<(repo.PriceListRow & { changed: boolean }) | undefined>, externalId: string) {
  const row = await commit(ctx, async (tx) => {
    const row = await work(tx);
    if (!row) throw missing(externalId);
    if (!row.changed) return row;
    const t = row.created ? topics.pricingPriceListCreated : topics.pricingPriceListUpdated;
    await enqueue(tx, [outboxEntry(t, accountId, row.id, { accountId, version: BigInt(row.version), priceList: priceListFromRow(row) })]);
    return row;
  });
  return row;
}

/** POST: creates the list, or updates the one with that external id. */
export function createPriceList(ctx: ServiceContext, accountId: string, list: pricingV1.PriceList | undefined) {
  const w = checked(list);
  return write(ctx, accountId, (tx) => repo.upsertPriceList(tx, accountId, w), w.external_id);
}

/** PUT: updates an existing list; the body's id, when sent, must be the path's; `ifRevision` (If-Match) checked under the row's lock. */
export function updatePriceList(ctx: ServiceContext, accountId: string, externalId: string, list: pricingV1.PriceList | undefined, ifRevision?: string) {
  if (list && list.externalPriceListId && list.externalPriceListId !== externalId) {
    throw invalid("externalPriceListId differs from the path", [{ path: "externalPriceListId", message: "must equal the path's externalPriceListId" }]);
  }
  const w = checked(list && { ...list, externalPriceListId: externalId });
  return write(
    ctx,
    accountId,
    async (tx) => {
      if (!(await repo.lockPriceListAt(tx, accountId, externalId, ifRevision))) throw notWritten(`price list ${externalId}`, ifRevision);
      return repo.updatePriceList(tx, accountId, w);
    },
    externalId,
  );
}
