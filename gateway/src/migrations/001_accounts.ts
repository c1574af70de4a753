import type { Migration } from "@analytics/db";

export const createAccounts: Migration = {
  name: "001_accounts",
  async up(db) {
    await db.schema.createTable("accounts", (t) => {
      t.uuid("id").primary();
      t.text("name").notNullable();
      t.specificType("custom_price_fields", "text[]").notNullable().defaultTo("{}");
      t.text("timezone").notNullable().defaultTo("UTC");
      t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.timestamp("updated_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
    });
    await db.schema.createTable("api_keys", (t) => {
      t.uuid("id").primary();
      t.uuid("account_id").notNullable().references("id").inTable("accounts");
      t.text("name").notNullable();
      // HMAC-SHA256 of the secret under API_KEY_PEPPER; the secret itself is never stored.
      t.text("secret_hash").notNullable();
      t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.timestamp("revoked_at", { useTz: true });
      t.index(["account_id"]);
    });
  },
};
