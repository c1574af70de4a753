import type { Migration } from "@analytics/db";

/** Failed authentication attempts per key, shared by every gateway (FailureLimiter). */
export const authFailures: Migration = {
  name: "003_auth_failures",
  async up(db) {
    await db.schema.createTable("auth_failures", (t) => {
      t.text("key").primary();
      t.integer("failures").notNullable();
      t.timestamp("reset_at", { useTz: true }).notNullable();
      // Expired rows are found by it and pruned as failures arrive.
      t.index(["reset_at"]);
    });
  },
};
