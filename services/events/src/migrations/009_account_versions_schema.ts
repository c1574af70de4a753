import type { Migration } from "@analytics/db";

/**
 * Migration 007's trigger function made before it found account_versions in its own schema
 * (libs/db createAccountVersions now does): a write from a session with another search path (an
 * operator's psql) failed on it. Pinned here for schemas made before.
 */
export const accountVersionsSchema: Migration = {
  name: "009_account_versions_schema",
  async up(db) {
    await db.raw("ALTER FUNCTION bump_account_versions() SET search_path FROM CURRENT");
  },
};
