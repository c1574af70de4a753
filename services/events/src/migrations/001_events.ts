import type { Migration } from "@analytics/db";

export const createEvents: Migration = {
  name: "001_events",
  async up(db) {
    await db.schema.createTable("events", (t) => {
      t.uuid("id").primary();
      // Creation order for stable paging.
      t.bigIncrements("seq", { primaryKey: false });
      t.uuid("account_id").notNullable();
      t.text("event_type").notNullable();
      t.jsonb("payload").notNullable();
      t.timestamp("created_at", { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.timestamp("completed_at", { useTz: true });
      t.timestamp("failed_at", { useTz: true });
    });
    await db.raw("ALTER TABLE events ADD CONSTRAINT events_processed_once CHECK (completed_at IS NULL OR failed_at IS NULL)");
    await db.raw("CREATE INDEX events_account_seq ON events (account_id, seq)");
    await db.raw("CREATE INDEX events_account_type_seq ON events (account_id, event_type, seq)");
  },
  async down(db) {
    await db.schema.dropTable("events");
  },
};
