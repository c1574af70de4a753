import { createAccountVersions, type Migration } from "@analytics/db";

/**
 * The version of each account's queue, behind the gateway's weak ETag on GET /events (CONTRACT
 * "Conditional requests"): bumped by triggers after every statement that inserts, updates or
 * deletes entries, in its transaction, whichever code path wrote them (the consumer's entries, status
 * changes, payload replacements). A version starts at the clock in microseconds, so a table made
 * again never hands out an earlier version.
 */
export const accountVersions: Migration = {
  name: "007_account_versions",
  async up(db) {
    await createAccountVersions(db, ["events"]);
  },
};
