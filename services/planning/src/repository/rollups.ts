import type { Tx } from "@analytics/db";
import { accountTimezone, json } from "./sql";

/** A stored sales line as the rollups count it (its instant as text: exact, to the microsecond). */
export type SalesLineFigures = { account_id: string; key: string | null; sku: string | null; ean: string | null; channel: number; external_warehouse_id: string; sold_at: string; units: number };

/**
 * Adds sales lines to the rollups (sales_days and sales_months, migration 012), or takes them off:
 * `sign` -1 for the lines a transaction's newer version replaced or its cancellation removed. One
 * statement for the batch: the lines are grouped by the rollups' keys (the day in the account's
 * timezone), a group that nets to nothing is skipped, and the rest added to the stored sums in key
 * order (so concurrent batches lock rows in the same order). A row left with no lines stays, at 0:
 * the answers skip it.
 */
export async function addToSalesRollups(tx: Tx, lines: (Omit<SalesLineFigures, "sold_at"> & { sold_at: string; sign: 1 | -1 })[]): Promise<void> {
  if (!lines.length) return;
  await tx.raw(
    `WITH l AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS x(account_id uuid, key text, sku text, ean text, channel int, external_warehouse_id text, sold_at timestamptz, units int, sign int)),
     -- Each account's timezone, looked up once.
     tz AS (SELECT t.account_id, ${accountTimezone("t.account_id")} AS tz FROM (SELECT DISTINCT account_id FROM l) t),
     x AS (SELECT l.*, tz.tz FROM l JOIN tz USING (account_id)),
     d AS (
       SELECT account_id, (sold_at AT TIME ZONE tz)::date AS day,
         (CASE WHEN key IS NOT NULL THEN 1 WHEN sku IS NOT NULL THEN 2 ELSE 3 END)::smallint AS ref_kind, coalesce(key, sku, ean) AS ref,
         (CASE WHEN channel = 2 THEN 2 ELSE 1 END)::smallint AS channel, external_warehouse_id,
         sum(sign * units) AS units, sum(sign * greatest(units, 0)) AS shipped, sum(sign) AS lines
       FROM x WHERE coalesce(key, sku, ean) IS NOT NULL
       GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(sign * units) <> 0 OR sum(sign * greatest(units, 0)) <> 0 OR sum(sign) <> 0),
     m AS (
       INSERT INTO sales_months AS m (account_id, month, ref_kind, ref, channel, units, lines)
       SELECT account_id, date_trunc('month', day)::date, ref_kind, ref, channel, sum(units), sum(lines) FROM d
       GROUP BY 1, 2, 3, 4, 5 HAVING sum(units) <> 0 OR sum(lines) <> 0 ORDER BY 1, 2, 3, 4, 5
       ON CONFLICT (account_id, month, ref_kind, ref, channel) DO UPDATE SET units = m.units + excluded.units, lines = m.lines + excluded.lines)
     INSERT INTO sales_days AS s (account_id, day, ref_kind, ref, channel, external_warehouse_id, units, shipped, lines)
     SELECT * FROM d ORDER BY 1, 2, 3, 4, 5, 6
     ON CONFLICT (account_id, day, ref_kind, ref, channel, external_warehouse_id) DO UPDATE
       SET units = s.units + excluded.units, shipped = s.shipped + excluded.shipped, lines = s.lines + excluded.lines`,
    [json(lines)],
  );
}

/**
 * The longest a recompute may take: an account of 3,000,000 sale lines takes minutes, far past the
 * pool's statement timeout, and it must not fail the batch (it would fail at each retry).
 */
export const RECOMPUTE_TIMEOUT_MS = 1_800_000;

/**
 * Recomputes the accounts' sales rollups from their sales lines (sales_line_days, migration 012),
 * in the caller's transaction: a timezone change re-dates every sale. Runs with RECOMPUTE_TIMEOUT_MS
 * for the rest of that transaction.
 */
export async function recomputeSalesRollups(tx: Tx, accountIds: string[]): Promise<void> {
  if (!accountIds.length) return;
  await tx.raw(`SET LOCAL statement_timeout = ${RECOMPUTE_TIMEOUT_MS}`);
  for (const statement of [
    "DELETE FROM sales_days WHERE account_id = ANY(?::uuid[])",
    "DELETE FROM sales_months WHERE account_id = ANY(?::uuid[])",
    `INSERT INTO sales_days SELECT account_id, day, ref_kind, ref, channel, external_warehouse_id, sum(units), sum(shipped), count(*)
     FROM sales_line_days WHERE account_id = ANY(?::uuid[]) GROUP BY 1, 2, 3, 4, 5, 6`,
    `INSERT INTO sales_months SELECT account_id, date_trunc('month', day)::date, ref_kind, ref, channel, sum(units), sum(lines)
     FROM sales_days WHERE account_id = ANY(?::uuid[]) GROUP BY 1, 2, 3, 4, 5`,
  ])
    await tx.raw(statement, [accountIds]).options({ query_timeout: RECOMPUTE_TIMEOUT_MS + 1_000 });
}

/** The timezone each account's sales are dated in now (accountTimezone). */
export async function salesTimezones(tx: Tx, accountIds: string[]): Promise<Map<string, string>> {
  const { rows } = await tx.raw(`SELECT a AS account_id, ${accountTimezone("a")} AS tz FROM unnest(?::uuid[]) AS a`, [accountIds]);
  return new Map(rows.map((r: { account_id: string; tz: string }) => [r.account_id, r.tz]));
}

