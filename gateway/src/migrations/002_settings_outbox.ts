import type { Migration } from "@analytics/db";

/** Settings changes are announced (AccountSettingsChanged) with a version that grows per change. */
export const settingsVersion: Migration = {
  name: "002_settings_version",
  async up(db) {
    await db.raw("ALTER TABLE accounts ADD COLUMN settings_version bigint NOT NULL DEFAULT 0");
  },
};
