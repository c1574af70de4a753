import { bumpAccountVersions, type Db, type Tx } from "@analytics/db";
import { moveGroupFigures } from "./group-months";

/**
 * Holds the accounts' plans and group months until the transaction ends: a batch of plans takes
 * its SKUs' figures off their group months and adds them back after, and the replica's consumer
 * changes the same group months from the cells with the plans it reads; either waits for the other
 * (in account order, before either writes), or a group month could count a plan twice.
 */
export async function lockAccountPlans(tx: Tx, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  // One statement: the locks are taken as the sorted rows reach the aggregate, in account order.
  await tx.raw(
    "SELECT count(pg_advisory_xact_lock(hashtext('planning.sales_plans'), hashtext(a))) FROM (SELECT DISTINCT unnest(?::text[]) AS a ORDER BY 1) s",
    [accountIds],
  );
}

/** A plan to store (volume null: removed), with its item's index in the request. */
export type SalesPlanWrite = { i: number; sku_id: string; channel: number; month: string; volume: string | null };

/**
 * Stores an account's plans (sales_plans), answering per item whether it was absent before, is a
 * removal, or changes nothing; a change bumps the account's data version.
 */
export async function storeSalesPlans(db: Db, accountId: string, writes: SalesPlanWrite[]): Promise<{ i: number; was_absent: boolean; removes: boolean; same: boolean }[]> {
  return db.transaction(async (tx) => {
    // One batch of an account's plans at a time: what each item answers stays true until it commits.
    await lockAccountPlans(tx, [accountId]);
    // The SKUs' figures leave their group months before the plans change and come back after.
    const skus = [...new Set(writes.map((w) => w.sku_id))].map((sku_id) => ({ account_id: accountId, sku_id }));
    await moveGroupFigures(tx, skus, -1, "sales");
    const { rows } = await tx.raw(
      `WITH x AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(i int, sku_id uuid, channel int, month date, volume numeric)),
       stored AS (
         SELECT x.*, p.volume AS before FROM x
         LEFT JOIN sales_plans p ON p.account_id = ? AND p.sku_id = x.sku_id AND p.channel = x.channel AND p.month = x.month),
       written AS (
         INSERT INTO sales_plans (account_id, sku_id, channel, month, volume, updated_at)
         SELECT ?, sku_id, channel, month, volume, now() FROM stored WHERE volume IS DISTINCT FROM before
         ON CONFLICT (account_id, sku_id, channel, month) DO UPDATE SET volume = excluded.volume, updated_at = excluded.updated_at)
       SELECT i, before IS NULL AS was_absent, volume IS NULL AS removes, volume IS NOT DISTINCT FROM before AS same FROM stored`,
      [JSON.stringify(writes), accountId, accountId],
    );
    await moveGroupFigures(tx, skus, 1, "sales");
    if (rows.some((r: { same: boolean }) => !r.same)) await bumpAccountVersions(tx, [accountId]);
    return rows;
  });
}
