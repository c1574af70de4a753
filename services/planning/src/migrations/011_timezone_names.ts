import type { Migration } from "@analytics/db";

/**
 * The time zone names Postgres knows, as a table: every planning answer (and its ETag's
 * account-local today) reads the account's timezone as UTC when Postgres does not know it, and
 * asking `pg_timezone_names` reads the whole zoneinfo tree each time: about 40 ms per statement,
 * which was most of a 304's time. Filled here and made current at each start
 * (repository.refreshTimezoneNames), so a Postgres upgrade's new or dropped zones count after a restart.
 */
export const timezoneNames: Migration = {
  name: "011_timezone_names",
  async up(db) {
    await db.raw(`
      CREATE TABLE timezone_names (name text PRIMARY KEY);
      INSERT INTO timezone_names SELECT DISTINCT name FROM pg_timezone_names;
    `);
  },
  async down(db) {
    await db.raw("DROP TABLE timezone_names");
  },
};
