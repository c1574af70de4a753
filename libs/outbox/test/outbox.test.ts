import { randomUUID } from "node:crypto";
import type { Bus, BusMessage } from "@analytics/bus";
import { createDb, migrate, type Db } from "@analytics/db";
import { backoffMs, enqueue, OutboxRelay, outboxMigration } from "../src";
import { createTestBus, createTestDatabase, eventually, type TestDatabase } from "@analytics/testing";

describe("outbox", () => {
  let database: TestDatabase;
  let db: Db;
  const account = randomUUID();

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb({ url: database.url, schema: "producer" });
    await migrate(db, "producer", [outboxMigration]);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });
  beforeEach(async () => {
    await db("outbox").delete();
  });

  it("writes nothing when the change's transaction rolls back", async () => {
    await expect(
      db.transaction(async (tx) => {
        await enqueue(tx, [{ subject: "analytics.p.thing.created", accountId: account, data: { n: 1 } }]);
        throw new Error("rollback");
      }),
    ).rejects.toThrow();
    expect(await db("outbox")).toHaveLength(0);
  });

  it("relays committed rows to real JetStream in commit order with Nats-Msg-Id = row id", async () => {
    const t = await createTestBus();
    try {
      const ids = await db.transaction((tx) =>
        enqueue(tx, [1, 2, 3].map((n) => ({ subject: "analytics.p.thing.created", accountId: account, data: { n } }))),
      );
      const received: BusMessage[] = [];
      const sub = await t.bus.subscribe({ durable: "c", subjects: ["analytics.p.>"], handler: async (m) => void received.push(m) });
      const relay = new OutboxRelay({ db, bus: t.bus, pollMs: 20 });
      relay.start();
      await eventually(async () => received.length === 3);
      await relay.stop();
      await sub.stop();
      expect(received.map((m) => m.id)).toEqual(ids);
      expect(received.map((m) => (m.data as { n: number }).n)).toEqual([1, 2, 3]);
      expect(received[0].accountId).toBe(account);
      expect(await db("outbox").whereNull("published_at")).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  it("keeps a row the bus refuses and retries it with backoff", async () => {
    let up = false;
    const published: string[] = [];
    const flaky: Bus = {
      kind: "in-process",
      publish: async (m) => {
        if (!up) throw new Error("nats down");
        published.push(m.id);
      },
      subscribe: async () => ({ stop: async () => undefined }),
      ping: async () => undefined,
      close: async () => undefined,
    };
    const [id] = await enqueue(db, [{ subject: "analytics.p.thing.updated", accountId: account, data: {} }]);
    const relay = new OutboxRelay({ db, bus: flaky });
    expect(await relay.relayOnce()).toBe(0);
    const row = await db("outbox").where({ id }).first();
    expect(row.attempts).toBe(1);
    expect(row.published_at).toBeNull();
    expect(row.last_error).toMatch(/nats down/);
    up = true;
    await db("outbox").where({ id }).update({ next_attempt_at: new Date(0) });
    expect(await relay.relayOnce()).toBe(1);
    expect(published).toEqual([id]);
    expect(backoffMs(1)).toBe(200);
    expect(backoffMs(20)).toBe(60000);
  });

  it("never publishes a row twice when two relays run at once", async () => {
    const counts = new Map<string, number>();
    const bus: Bus = {
      kind: "in-process",
      publish: async (m) => {
        await new Promise((r) => setTimeout(r, 2));
        counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
      },
      subscribe: async () => ({ stop: async () => undefined }),
      ping: async () => undefined,
      close: async () => undefined,
    };
    await enqueue(db, Array.from({ length: 50 }, (_, n) => ({ subject: "analytics.p.thing.created", accountId: account, data: { n } })));
    const a = new OutboxRelay({ db, bus, batchSize: 10 });
    const b = new OutboxRelay({ db, bus, batchSize: 10 });
    await Promise.all([(async () => { while ((await a.relayOnce()) > 0); })(), (async () => { while ((await b.relayOnce()) > 0); })()]);
    expect(counts.size).toBe(50);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
  });
});
