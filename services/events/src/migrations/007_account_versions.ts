import type { Migration } from "@analytics/db";

/**
 * The version of each account's queue, behind the gateway's weak ETag on GET /events (CONTRACT
 * "Conditional requests"): bumped by triggers after every statement that inserts or updates
 * entries, in its transaction, whichever code path wrote them (the consumer's entries, status
 * changes, payload replacements). A version starts at the clock in microseconds, so a table made
 * again never hands out an earlier version.
 */
export const accountVersions: Migration = {
  name: "007_account_versions",
  async up(db) {
    await db.raw(`
      CREATE TABLE account_versions (
        account_id uuid PRIMARY KEY,
        version bigint NOT NULL,
        changed_at timestamptz NOT NULL
      );
      CREATE FUNCTION bump_account_versions() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO account_versions AS v (account_id, version, changed_at)
        -- One row per account (a statement may write many entries of one), in a fixed order.
        SELECT account_id, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, now()
        FROM (SELECT DISTINCT account_id FROM changed) c ORDER BY account_id
        ON CONFLICT (account_id) DO UPDATE SET version = greatest(v.version + 1, excluded.version), changed_at = excluded.changed_at;
        RETURN NULL;
      END $$;
      CREATE TRIGGER events_inserted AFTER INSERT ON events REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_account_versions();
      CREATE TRIGGER events_updated AFTER UPDATE ON events REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_account_versions();
      CREATE TRIGGER events_deleted AFTER DELETE ON events REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_account_versions();
    `);
  },
};
