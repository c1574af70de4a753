/** Rows as one jsonb array (bigints as text): how the replica's writes travel. */
export const json = (rows: unknown[]) => JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

/** An account's timezone as its answers and rollups read it: UTC when absent or unknown to Postgres. */
export const accountTimezone = (account: string) =>
  `coalesce((SELECT a.timezone FROM accounts a WHERE a.account_id = ${account} AND a.timezone IN (SELECT name FROM timezone_names)), 'UTC')`;

/**
 * The longest a recompute may take: an account of 3,000,000 sale lines takes minutes, far past the
 * pool's statement timeout, and it must not fail the batch (it would fail at each retry).
 */
export const RECOMPUTE_TIMEOUT_MS = 1_800_000;
