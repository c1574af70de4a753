import { randomUUID } from "node:crypto";
import type { BusMessage } from "@analytics/bus";
import { migrate, type Tx } from "@analytics/db";
import { inboxMigrations, processBatchOnce, processOnce, pruneInbox } from "../src";
import { databaseForFile } from "@analytics/testing";

describe("inbox", () => {
  const database = databaseForFile();
  const db = database.openDb("consumer");
  beforeAll(async () => {
    await migrate(db, "consumer", [
      ...inboxMigrations,
      { name: "001_effects", up: async (k) => void (await k.schema.createTable("effects", (t) => (t.text("consumer"), t.text("message_id")))) },
    ]);
  });

  const msg = (): BusMessage => ({ id: randomUUID(), subject: "analytics.a.b.c", accountId: randomUUID(), occurredAt: "", aggregate: "", payload: new Uint8Array() });
  const record = (consumer: string, m: BusMessage) => (tx: Tx) => tx("effects").insert({ consumer, message_id: m.id }).then(() => undefined);

  it("applies a redelivered message once", async () => {
    const m = msg();
    expect(await processOnce(db, "c", m, record("c", m))).toBe(true);
    expect(await processOnce(db, "c", m, record("c", m))).toBe(false);
    expect(await db("effects").where({ message_id: m.id })).toHaveLength(1);
  });

  it("keeps one inbox per consumer: two consumers of one service each apply every message", async () => {
    const m = msg();
    expect(await processOnce(db, "events-queue", m, record("events-queue", m))).toBe(true);
    expect(await processOnce(db, "events-other", m, record("events-other", m))).toBe(true);
    expect(await processOnce(db, "events-other", m, record("events-other", m))).toBe(false);
    expect((await db("effects").where({ message_id: m.id })).map((r) => r.consumer).sort()).toEqual(["events-other", "events-queue"]);
  });

  it("hands a batch's new messages to one effect, each once, skipping those seen before", async () => {
    const [seen, a, b] = [msg(), msg(), msg()];
    await processOnce(db, "batch", seen, async () => undefined);
    let handed: string[] = [];
    const fresh = await processBatchOnce(db, "batch", [seen, a, b, a], async (_tx, ms) => void (handed = ms.map((m) => m.id)));
    expect(handed).toEqual([a.id, b.id]);
    expect(fresh.map((m) => m.id)).toEqual([a.id, b.id]);
  });

  it("records nothing when the effect fails, so the retry applies it", async () => {
    const m = msg();
    await expect(
      processOnce(db, "c", m, async (tx) => {
        await record("c", m)(tx);
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await db("effects").where({ message_id: m.id })).toHaveLength(0);
    expect(await processOnce(db, "c", m, record("c", m))).toBe(true);
  });

  it("lets exactly one of two concurrent deliveries apply the effect", async () => {
    const m = msg();
    const results = await Promise.all([processOnce(db, "c", m, record("c", m)), processOnce(db, "c", m, record("c", m))]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await db("effects").where({ message_id: m.id })).toHaveLength(1);
  });

  it("prunes rows older than the retention, keeping recent ones", async () => {
    const [old, recent] = [msg(), msg()];
    await processOnce(db, "p", old, async () => undefined);
    await processOnce(db, "p", recent, async () => undefined);
    await db("inbox").where({ consumer: "p", message_id: old.id }).update({ received_at: new Date(Date.now() - 9 * 24 * 3600_000) });
    expect(await pruneInbox(db)).toBeGreaterThanOrEqual(1);
    expect((await db("inbox").where({ consumer: "p" })).map((r) => r.message_id)).toEqual([recent.id]);
  });
});
