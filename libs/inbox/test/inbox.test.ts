import { randomUUID } from "node:crypto";
import { createDb, migrate, type Db } from "@analytics/db";
import { inboxMigration, processOnce } from "../src";
import { createTestDatabase, type TestDatabase } from "@analytics/testing";

describe("inbox", () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb({ url: database.url, schema: "consumer" });
    await migrate(db, "consumer", [
      inboxMigration,
      { name: "001_effects", up: async (k) => void (await k.schema.createTable("effects", (t) => t.text("message_id"))) },
    ]);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  const msg = () => ({ id: randomUUID(), subject: "analytics.a.b.c", accountId: randomUUID(), occurredAt: "", data: {} });

  it("applies a redelivered message once", async () => {
    const m = msg();
    const effect = (tx: Db) => tx("effects").insert({ message_id: m.id }).then(() => undefined);
    expect(await processOnce(db, m, effect)).toBe(true);
    expect(await processOnce(db, m, effect)).toBe(false);
    expect(await db("effects").where({ message_id: m.id })).toHaveLength(1);
  });

  it("records nothing when the effect fails, so the retry applies it", async () => {
    const m = msg();
    await expect(
      processOnce(db, m, async (tx) => {
        await tx("effects").insert({ message_id: m.id });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await db("effects").where({ message_id: m.id })).toHaveLength(0);
    expect(await processOnce(db, m, (tx) => tx("effects").insert({ message_id: m.id }).then(() => undefined))).toBe(true);
  });

  it("lets exactly one of two concurrent deliveries apply the effect", async () => {
    const m = msg();
    const effect = (tx: Db) => tx("effects").insert({ message_id: m.id }).then(() => undefined);
    const results = await Promise.all([processOnce(db, m, effect), processOnce(db, m, effect)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await db("effects").where({ message_id: m.id })).toHaveLength(1);
  });
});
