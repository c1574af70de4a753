import type { Knex } from "knex";

/**
 * The version of each account's data in one service's schema, behind the gateway's weak ETags on
 * lists (CONTRACT "Conditional requests"): one row per account, greater after every write of that
 * account, read before an answer is computed. A version starts at the clock in microseconds and a
 * later one is at least one more, so it only grows, even across a schema made again. The row is
 * taken in the writing transaction, so a reader sees the version move on exactly when the write
 * does.
 */
const TABLE = `
  CREATE TABLE account_versions (
    account_id uuid PRIMARY KEY,
    version bigint NOT NULL,
    changed_at timestamptz NOT NULL
  )`;

/**
 * The trigger function finds account_versions in the schema it was made in, whatever the search
 * path of the session that writes (an operator's psql, a test's own connection).
 */
const IN_SCHEMA = "SET search_path FROM CURRENT";

const NEXT_VERSION = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";
const ON_CONFLICT = "ON CONFLICT (account_id) DO UPDATE SET version = greatest(v.version + 1, excluded.version), changed_at = excluded.changed_at";

/** Creates account_versions, for a service that bumps it itself (bumpAccountVersions) in each writing transaction. */
export async function createAccountVersionsTable(db: Knex): Promise<void> {
  await db.raw(TABLE);
}

/**
 * The trigger function's current text, its one home: every service's migration that creates
 * account_versions runs it (createAccountVersions). It bumps the versions of the accounts whose
 * rows a statement changed (its transition table `changed`), in a fixed order. Its body's text
 * (indentation included) is what the schemas made before hold: change it by a migration.
 */
export const BUMP_ACCOUNT_VERSIONS_FUNCTION = `
    CREATE OR REPLACE FUNCTION bump_account_versions() RETURNS trigger LANGUAGE plpgsql ${IN_SCHEMA} AS $$
    BEGIN
      INSERT INTO account_versions AS v (account_id, version, changed_at)
      SELECT account_id, ${NEXT_VERSION}, now()
      FROM (SELECT DISTINCT account_id FROM changed) c ORDER BY account_id
      ${ON_CONFLICT};
      RETURN NULL;
    END $$;`;

/**
 * Creates account_versions and bumps it by triggers after every statement that inserts, updates
 * or deletes rows of `tables` (each has account_id), in its transaction, whichever code path wrote
 * them: a write cannot forget it. One row per account a statement touched, in a fixed order, so
 * two transactions bumping the same accounts take their rows in one order.
 */
export async function createAccountVersions(db: Knex, tables: readonly string[]): Promise<void> {
  tables.forEach(assertTable);
  await db.raw(`
    ${TABLE};
    ${BUMP_ACCOUNT_VERSIONS_FUNCTION}
    ${tables.map(versionTriggers).join("\n")}
  `);
}

/** The three statement triggers of one table (a trigger with a transition table takes one event). */
function versionTriggers(table: string): string {
  const on = (event: string, name: string, transition: string) =>
    `CREATE TRIGGER ${table}_${name} AFTER ${event} ON ${table} REFERENCING ${transition} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_account_versions();`;
  return [on("INSERT", "inserted", "NEW"), on("UPDATE", "updated", "NEW"), on("DELETE", "deleted", "OLD")].join("\n");
}

function assertTable(name: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a table name: ${name}`);
}

/** Bumps the versions of `accountIds` in the transaction that changes their data (for tables without the triggers). */
export async function bumpAccountVersions(tx: Knex | Knex.Transaction, accountIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(accountIds)].sort();
  if (!ids.length) return;
  await tx.raw(
    `INSERT INTO account_versions AS v (account_id, version, changed_at)
     SELECT a, ${NEXT_VERSION}, now() FROM unnest(?::uuid[]) AS a ORDER BY a
     ${ON_CONFLICT}`,
    [ids],
  );
}

/** The account's data version as text, an expression with one binding (the account): 0 before its first write. One indexed row. */
export const ACCOUNT_VERSION_SQL = "coalesce((SELECT version FROM account_versions WHERE account_id = ?), 0)::text";

/** The account's data version: 0 before its first write. */
export async function accountVersion(db: Knex, accountId: string): Promise<bigint> {
  const { rows } = await db.raw(`SELECT ${ACCOUNT_VERSION_SQL} AS version`, [accountId]);
  return BigInt(rows[0].version);
}

/**
 * The rows of `query` and the account's data version, read by one statement, so in one snapshot:
 * the version of exactly the data answered (a list's weak ETag, libs/rpc data-version.ts), with
 * no round trip of its own. An empty answer has its version too. `orderBy`: the column of `query`
 * its rows are answered in.
 */
export async function withAccountVersion<R>(db: Knex, accountId: string, query: Knex.QueryBuilder, orderBy?: string): Promise<{ rows: R[]; version: string }> {
  const { rows }: { rows: (R & { data_version: string; in_answer: boolean | null })[] } = await db.raw(
    `SELECT v.data_version, r.* FROM (SELECT ${ACCOUNT_VERSION_SQL} AS data_version) v
     LEFT JOIN (SELECT true AS in_answer, q.* FROM ? q) r ON true${orderBy ? ` ORDER BY r.${orderBy}` : ""}`,
    [accountId, query],
  );
  return { rows: rows[0].in_answer ? rows : [], version: rows[0].data_version };
}
