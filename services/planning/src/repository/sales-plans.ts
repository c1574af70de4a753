import { bumpAccountVersions, type Db } from "@analytics/db";

/** A plan to store (volume null: removed), with its item's index in the request. */
export type SalesPlanWrite = { i: number; sku_id: string; channel: number; month: string; volume: string | null };

/**
 * Stores an account's plans (sales_plans), answering per item whether it was absent before, is a
 * removal, or changes nothing; a change bumps the account's data version.
 */
export async function storeSalesPlans(db: Db, accountId: string, writes: SalesPlanWrite[]): Promise<{ i: number; was_absent: boolean; removes: boolean; same: boolean }[]> {
  return db.transaction(async (tx) => {
    // One batch of an account's plans at a time: what each item answers stays true until it commits.
    await tx.raw("SELECT pg_advisory_xact_lock(hashtext('planning.sales_plans'), hashtext(?))", [accountId]);
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
    if (rows.some((r: { same: boolean }) => !r.same)) await bumpAccountVersions(tx, [accountId]);
    return rows;
  });
}
