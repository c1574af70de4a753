import { createAccountVersionsTable, type Migration } from "@analytics/db";

/**
 * The version of each account's planning data (replica and sales plans), bumped in the
 * transaction of every write of that account, read before an answer is computed: the gateway's
 * weak ETag on planning answers (CONTRACT "Conditional requests"). A version starts at the clock
 * in microseconds, so a rebuilt schema (the table made again) never hands out an earlier version.
 */
export const accountVersions: Migration = {
  name: "009_account_versions",
  async up(db) {
    await createAccountVersionsTable(db);
  },
};
