import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import type { Bus, BusMessage, PublishOutcome } from "@analytics/bus";
import { topics } from "@analytics/contracts";
import { createDb, migrate } from "@analytics/db";
import { DomainError } from "@analytics/errors";
import { backoffMs, BusUnavailable, encodeEntry, enqueue, IN_PROCESS_RELAY_BATCH, OutboxRelay, outboxEntry, outboxMigrations, outageWaitMs, RELAY_BATCH } from "../src";
import { createTestBus, databaseForFile, eventually } from "@analytics/testing";

/** A brand-created entry whose brand name carries a label, for following rows through the bus. */
const entry = (account: string, aggregateId: string, label: string) =>
  outboxEntry(topics.catalogueBrandCreated, account, aggregateId, { accountId: account, brand: { id: aggregateId, name: label } });
const labelOf = (m: BusMessage) => fromBinary(topics.catalogueBrandCreated.schema, m.payload).brand!.name;

/** A bus that records what it accepted and asks `refuse` about each message. */
function recordingBus(refuse: (m: BusMessage) => boolean | Promise<boolean> = () => false) {
  const accepted: BusMessage[] = [];
  const bus: Bus = {
    kind: "in-process",
    publish: async (messages) =>
      Promise.all(
        messages.map(async (m): Promise<PublishOutcome> => {
          if (await refuse(m)) return new Error("refused");
          accepted.push(m);
          return undefined;
        }),
      ),
    subscribe: async () => ({ stop: async () => undefined }),
    ping: async () => undefined,
    backlog: async () => 0,
    close: async () => undefined,
  };
  return { bus, accepted, labels: () => accepted.map(labelOf) };
}

describe("outbox", () => {
  const database = databaseForFile();
  const db = database.openDb("producer");
  const account = randomUUID();

  beforeAll(async () => {
    await migrate(db, "producer", outboxMigrations);
  });
  beforeEach(async () => {
    await db("outbox").delete();
  });
  const dueNow = () => db("outbox").whereNull("published_at").update({ next_attempt_at: new Date(0) });

  it("writes nothing when the change's transaction rolls back", async () => {
    await expect(
      db.transaction(async (tx) => {
        await enqueue(tx, [entry(account, randomUUID(), "x")]);
        throw new Error("rollback");
      }),
    ).rejects.toThrow();
    expect(await db("outbox")).toHaveLength(0);
  });

  it("stores each message's exact bytes in entry order, whatever their sizes, an empty message too", async () => {
    const entries = [
      entry(account, randomUUID(), "a"),
      outboxEntry(topics.catalogueBrandCreated, account, randomUUID(), {}),
      entry(account, randomUUID(), "\u0000,\\x".repeat(700)),
      entry(account, randomUUID(), "ö"),
    ];
    const ids = await db.transaction((tx) => enqueue(tx, entries));
    const rows = await db("outbox").select("id", "payload").orderBy("seq");
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows.map((r) => Buffer.from(r.payload).toString("hex"))).toEqual(entries.map((e) => Buffer.from(encodeEntry(e)).toString("hex")));
    expect(rows[1].payload).toHaveLength(0);
  });

  it("refuses at write time a message the bus could never carry", async () => {
    const huge = "x".repeat(1024 * 1024);
    const error = await db.transaction((tx) => enqueue(tx, [entry(account, randomUUID(), huge)])).catch((e) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe("invalid");
    expect(await db("outbox")).toHaveLength(0);
  });

  it("relays committed rows to real JetStream as typed messages with Nats-Msg-Id = row id", async () => {
    const t = await createTestBus();
    try {
      const ids = await db.transaction((tx) => enqueue(tx, ["1", "2", "3"].map((n) => entry(account, randomUUID(), n))));
      const received: BusMessage[] = [];
      const sub = await t.bus.subscribe({ durable: "c", subjects: [topics.catalogueBrandCreated.subject], handle: async (ms) => void received.push(...ms) });
      const relay = new OutboxRelay({ db, bus: t.bus, pollMs: 20 });
      relay.start();
      await eventually(async () => received.length === 3);
      await relay.stop();
      await sub.stop();
      expect(received.map((m) => m.id)).toEqual(ids);
      expect(received.map(labelOf)).toEqual(["1", "2", "3"]);
      expect(received[0].accountId).toBe(account);
      expect(await db("outbox").whereNull("published_at")).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  it("holds back the later rows of an aggregate whose row was refused, and only those", async () => {
    const a = randomUUID();
    const b = randomUUID();
    let down = true;
    const { bus, labels } = recordingBus((m) => down && labelOf(m) === "a1");
    await enqueue(db, [entry(account, a, "a1"), entry(account, a, "a2"), entry(account, b, "b1"), entry(account, a, "a3")]);
    const relay = new OutboxRelay({ db, bus });
    await relay.relayOnce();
    expect(labels()).toEqual(["b1"]);
    const refused = await db("outbox").where({ aggregate: `brand:${a}` }).whereNull("published_at").orderBy("seq");
    expect(refused.map((r) => r.attempts)).toEqual([1, 0, 0]);
    expect(refused[0].last_error).toMatch(/refused/);

    // Not yet due: a2 and a3 still wait behind a1.
    await relay.relayOnce();
    expect(labels()).toEqual(["b1"]);
    down = false;
    await dueNow();
    await relay.relayOnce();
    expect(labels()).toEqual(["b1", "a1", "a2", "a3"]);
    expect(backoffMs(1)).toBe(200);
    expect(backoffMs(20)).toBe(60000);
  });

  it("sends the oldest due rows first, also after a retry moved a row", async () => {
    const { bus, labels } = recordingBus();
    await enqueue(db, ["r1", "r2", "r3", "r4"].map((n) => entry(account, randomUUID(), n)));
    // As after a refused attempt: the row's new version sits at the end of the table.
    await db("outbox").whereRaw("payload = (SELECT payload FROM outbox ORDER BY seq LIMIT 1)").update({ attempts: 1, next_attempt_at: new Date(0) });
    const relay = new OutboxRelay({ db, bus, batchSize: 2 });
    while ((await relay.relayOnce()) > 0);
    expect(labels()).toEqual(["r1", "r2", "r3", "r4"]);
  });

  it("gives every account a share of each batch: one account's 5,000 pending rows do not hold back another's one row", async () => {
    const { bus, accepted, labels } = recordingBus();
    const loading = randomUUID();
    const products = Array.from({ length: 50 }, () => randomUUID());
    await enqueue(db, Array.from({ length: 5000 }, (_, n) => entry(loading, products[n % 50], `a${n}`)));
    await enqueue(db, [entry(account, randomUUID(), "b")]);
    const relay = new OutboxRelay({ db, bus, batchSize: 500 });
    await relay.relayOnce();
    expect(labels()).toContain("b");
    // The loading account's rows still leave in write order, per product and overall.
    while ((await relay.relayOnce()) > 0);
    const loaded = accepted.filter((m) => m.accountId === loading).map(labelOf);
    expect(loaded).toEqual(Array.from({ length: 5000 }, (_, n) => `a${n}`));
  });

  it("claims RELAY_BATCH rows at a time for JetStream, IN_PROCESS_RELAY_BATCH for the in-process bus (whose claim is its consumers' batch)", async () => {
    await enqueue(db, Array.from({ length: RELAY_BATCH + IN_PROCESS_RELAY_BATCH + 1 }, (_, n) => entry(account, randomUUID(), `c${n}`)));
    const { bus } = recordingBus();
    expect(await new OutboxRelay({ db, bus: { ...bus, kind: "nats" } }).relayOnce()).toBe(RELAY_BATCH);
    expect(await new OutboxRelay({ db, bus: { ...bus, kind: "in-process" } }).relayOnce()).toBe(IN_PROCESS_RELAY_BATCH);
  });

  it("dead-letters a row that keeps failing, and then lets the rest of its aggregate go", async () => {
    const a = randomUUID();
    const { bus, labels } = recordingBus((m) => labelOf(m) === "poison");
    await enqueue(db, [entry(account, a, "poison"), entry(account, a, "after"), entry(account, randomUUID(), "other")]);
    const relay = new OutboxRelay({ db, bus, maxAttempts: 3 });
    for (let i = 0; i < 3; i++) {
      await relay.relayOnce();
      await dueNow();
    }
    const dead = await db("outbox").whereNotNull("dead_at");
    expect(dead).toHaveLength(1);
    expect(dead[0].attempts).toBe(3);
    expect(relay.stats.deadLettered).toBe(1);
    await relay.relayOnce();
    expect(labels()).toEqual(["other", "after"]);
  });

  it("counts nothing against a row while the bus is unreachable, however long: no attempt, no dead letter; all go out when it is back", async () => {
    let reachable = false;
    const { bus, labels } = recordingBus(() => !reachable);
    bus.ping = async () => {
      if (!reachable) throw new Error("no connection");
    };
    await enqueue(db, [entry(account, randomUUID(), "o1"), entry(account, randomUUID(), "o2")]);
    const relay = new OutboxRelay({ db, bus, maxAttempts: 3 });
    for (let i = 0; i < 5; i++) await expect(relay.relayOnce()).rejects.toBeInstanceOf(BusUnavailable);
    const rows = await db("outbox").orderBy("seq");
    expect(rows.map((r) => [r.attempts, r.dead_at, r.published_at])).toEqual([
      [0, null, null],
      [0, null, null],
    ]);
    reachable = true;
    await relay.relayOnce();
    expect(labels()).toEqual(["o1", "o2"]);
    expect(relay.stats.deadLettered).toBe(0);
  });

  it("counts nothing against a row that a consumer's unavailable database refused (in-process), and the running relay waits it out", async () => {
    let databaseDown = true;
    const bus = recordingBus().bus;
    const accepted: string[] = [];
    bus.publish = async (messages) =>
      messages.map((m) => {
        if (databaseDown) return new Error("Connection terminated unexpectedly");
        accepted.push(labelOf(m));
        return undefined;
      });
    await enqueue(db, [entry(account, randomUUID(), "d1")]);
    const relay = new OutboxRelay({ db, bus, maxAttempts: 1, pollMs: 10 });
    relay.start();
    try {
      await eventually(async () => relay.stats.unavailable >= 3, 10_000, "three failed tries of the outage");
      expect((await db("outbox").first()).attempts).toBe(0);
      // Writes during the outage (each kicks the relay) do not cut its wait short (0.8 s by now):
      // over 20 database round trips, long enough for several tries, none is made.
      const tries = relay.stats.unavailable;
      for (let i = 0; i < 20; i++) {
        relay.kick();
        await db.raw("select 1");
      }
      expect(relay.stats.unavailable).toBe(tries);
      databaseDown = false;
      await eventually(async () => accepted.includes("d1"), 10_000, "d1 published after the outage");
    } finally {
      await relay.stop();
    }
    expect((await db("outbox").first()).dead_at).toBeNull();
    expect(outageWaitMs(1)).toBe(200);
    expect(outageWaitMs(30)).toBe(10_000);
  });

  it("two relays on one outbox share the work: each row once, neither waits for the other", async () => {
    // The first relay's first publish waits until the second relay has published something, which
    // it can only do if it skips the rows the first one has locked.
    let release!: () => void;
    const secondPublished = new Promise<void>((resolve) => (release = resolve));
    const counts = new Map<string, number>();
    const count = (m: BusMessage) => void counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
    const first = recordingBus(async (m) => {
      await secondPublished;
      count(m);
      return false;
    });
    const second = recordingBus((m) => {
      count(m);
      release();
      return false;
    });
    await enqueue(db, Array.from({ length: 40 }, (_, n) => entry(account, randomUUID(), String(n))));
    // The second relay gives up waiting for a lock after 5 s, so a relay that waits fails the test.
    const impatient = createDb({ url: `${database.url}?options=${encodeURIComponent("-c lock_timeout=5000")}`, schema: "producer" });
    const a = new OutboxRelay({ db, bus: first.bus, batchSize: 10 });
    const b = new OutboxRelay({ db: impatient, bus: second.bus, batchSize: 10 });
    const draining = a.relayOnce();
    // The first relay holds its claim (the outbox's RowShareLock stays until its transaction ends).
    const claimed = `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
      WHERE c.relname = 'outbox' AND l.mode = 'RowShareLock' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
    await eventually(async () => (await db.raw(claimed)).rows[0].n > 0);
    try {
      while ((await b.relayOnce()) > 0);
    } finally {
      release();
      await impatient.destroy();
    }
    await draining;
    while ((await a.relayOnce()) > 0);
    expect(counts.size).toBe(40);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    expect(second.accepted.length).toBeGreaterThan(0);
  });
});
