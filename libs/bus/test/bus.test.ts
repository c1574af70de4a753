import { infrastructureKind } from "@analytics/errors";
import { randomUUID } from "node:crypto";
import { DEFAULT_MAX_AGE_SECONDS, DUPLICATE_WINDOW_SECONDS, type BusMessage, InProcessBus, NatsBus, retryDelayMs, subjectMatches } from "../src";
import { createTestBus, eventually, startNatsCluster, uniqueName, type TestBus } from "@analytics/testing";

const message = (subject: string, text = ""): BusMessage => ({
  id: randomUUID(),
  subject,
  accountId: randomUUID(),
  occurredAt: new Date().toISOString(),
  aggregate: `thing:${randomUUID()}`,
  payload: new TextEncoder().encode(text),
});
const text = (m: BusMessage) => new TextDecoder().decode(m.payload);

describe("subjectMatches", () => {
  it("follows NATS wildcards", () => {
    expect(subjectMatches("analytics.catalogue.sku.*", "analytics.catalogue.sku.updated")).toBe(true);
    expect(subjectMatches("analytics.catalogue.sku.*", "analytics.catalogue.sku")).toBe(false);
    expect(subjectMatches("analytics.>", "analytics.inventory.stock.updated")).toBe(true);
    expect(subjectMatches("analytics.>", "analytics")).toBe(false);
    expect(subjectMatches("analytics.orders.*.*", "analytics.catalogue.sku.updated")).toBe(false);
  });
  it("backs off redeliveries up to 30 s", () => {
    expect(retryDelayMs(1)).toBe(500);
    expect(retryDelayMs(3)).toBe(2000);
    expect(retryDelayMs(50)).toBe(30000);
  });
});

describe("InProcessBus", () => {
  it("counts a message published only after every consumer of its subject handled it", async () => {
    const bus = new InProcessBus();
    const seen: string[] = [];
    await bus.subscribe({ durable: "a", subjects: ["analytics.catalogue.sku.created"], handle: async (ms) => void seen.push(...ms.map((m) => m.subject)) });
    await bus.subscribe({ durable: "b", subjects: ["analytics.orders.purchase_order.created"], handle: async (ms) => void seen.push(...ms.map((m) => "b:" + m.subject)) });
    const outcomes = await bus.publish([message("analytics.catalogue.sku.created"), message("analytics.catalogue.sku.created")]);
    expect(outcomes).toEqual([undefined, undefined]);
    expect(seen).toEqual(["analytics.catalogue.sku.created", "analytics.catalogue.sku.created"]);
  });

  it("refuses only the messages a consumer failed, so the outbox retries just those", async () => {
    const bus = new InProcessBus();
    const handled: string[] = [];
    await bus.subscribe({
      durable: "a",
      subjects: ["analytics.x.y.z"],
      handle: async (ms) => {
        if (ms.some((m) => text(m) === "poison")) throw new Error("cannot handle");
        handled.push(...ms.map(text));
      },
    });
    const outcomes = await bus.publish([message("analytics.x.y.z", "1"), message("analytics.x.y.z", "poison"), message("analytics.x.y.z", "3")]);
    expect(outcomes.map((o) => o?.message)).toEqual([undefined, "cannot handle", undefined]);
    expect(handled).toEqual(["1", "3"]);
  });

  it("refuses a message whose consumer has stopped (a shutdown in progress) until it is back, rather than dropping it", async () => {
    const bus = new InProcessBus();
    const handled: string[] = [];
    const spec = { durable: "events-queue", subjects: ["analytics.catalogue.sku.changed"], handle: async (ms: BusMessage[]) => void handled.push(...ms.map(text)) };
    const subscription = await bus.subscribe(spec);
    await subscription.stop();
    const [refused] = await bus.publish([message("analytics.catalogue.sku.changed", "while stopped")]);
    expect(refused?.message).toMatch(/events-queue.*stopped/);
    // An outage, not the message's fault: the outbox does not count it against the row.
    expect(infrastructureKind(refused)).toBe("unavailable");
    // Subjects no consumer ever asked for still count as published: nobody will ask for them.
    expect(await bus.publish([message("analytics.orders.purchase_order.created")])).toEqual([undefined]);
    await bus.subscribe(spec);
    expect(await bus.publish([message("analytics.catalogue.sku.changed", "again")])).toEqual([undefined]);
    expect(handled).toEqual(["again"]);
  });
});

describe("NatsBus (real JetStream)", () => {
  let t: TestBus;
  beforeEach(async () => {
    t = await createTestBus();
  });
  afterEach(async () => {
    await t.close();
  });

  it("sets the stream's limits explicitly", async () => {
    const info = await t.bus.streamInfo();
    expect(info.config.max_age).toBe(DEFAULT_MAX_AGE_SECONDS * 1e9);
    expect(info.config.duplicate_window).toBe(DUPLICATE_WINDOW_SECONDS * 1e9);
    expect(info.config.max_bytes).toBe(-1);
  });

  it("brings an existing stream to the configured age and size limits (NATS_STREAM_MAX_AGE_SECONDS, NATS_STREAM_MAX_BYTES)", async () => {
    const again = await NatsBus.connect({ url: t.url, stream: t.stream, subjectPrefix: t.subjectPrefix, maxAgeSeconds: 2 * 86400, maxBytes: 64 * 1024 * 1024 });
    try {
      const { config } = await again.streamInfo();
      expect([config.max_age, config.max_bytes]).toEqual([2 * 86400 * 1e9, 64 * 1024 * 1024]);
    } finally {
      await again.close();
    }
  });

  it("stores a message published twice with one Nats-Msg-Id once", async () => {
    const m = message("analytics.catalogue.sku.updated", "one");
    const other = message("analytics.catalogue.sku.updated", "two");
    expect(await t.bus.publish([m])).toEqual([undefined]);
    expect(await t.bus.publish([m, other])).toEqual([undefined, undefined]);
    expect((await t.bus.streamInfo()).state.messages).toBe(2);
    const received: BusMessage[] = [];
    const sub = await t.bus.subscribe({ durable: "events", subjects: ["analytics.catalogue.sku.updated"], handle: async (ms) => void received.push(...ms) });
    await eventually(async () => received.length === 2);
    await sub.stop();
    expect(received.map((r) => r.id)).toEqual([m.id, other.id]);
    expect({ ...received[0], payload: text(received[0]) }).toEqual({ ...m, payload: "one" });
  });

  it("hands a consumer what has piled up as one batch, in order", async () => {
    const subject = "analytics.inventory.stock.updated";
    const published = Array.from({ length: 300 }, (_, i) => message(subject, String(i)));
    await t.bus.publish(published);
    const batches: string[][] = [];
    const sub = await t.bus.subscribe({ durable: "planning", subjects: [subject], handle: async (ms) => void batches.push(ms.map(text)) });
    await eventually(async () => batches.flat().length === 300);
    await sub.stop();
    expect(batches.flat()).toEqual(published.map(text));
    expect(Math.max(...batches.map((b) => b.length))).toBeGreaterThan(1);
  });

  it("redelivers what a handler failed, alone, and keeps a durable position across restarts", async () => {
    const subject = "analytics.inventory.stock.updated";
    let failures = 0;
    const received: string[] = [];
    const handle = async (ms: BusMessage[]) => {
      if (ms.some((m) => text(m) === "fail-once") && failures === 0) {
        failures++;
        throw new Error("transient");
      }
      received.push(...ms.map((m) => m.id));
    };
    const first = message(subject, "fail-once");
    const fine = message(subject, "fine");
    await t.bus.publish([first, fine]);
    const sub = await t.bus.subscribe({ durable: "planning", subjects: [subject], handle });
    await eventually(async () => received.includes(first.id) && received.includes(fine.id), 10_000, "redelivery");
    expect(failures).toBe(1);
    await sub.stop();

    const whileDown = message(subject);
    await t.bus.publish([whileDown]);
    const again = await t.bus.subscribe({ durable: "planning", subjects: [subject], handle });
    await eventually(async () => received.includes(whileDown.id), 10_000, "message published while stopped");
    await again.stop();
    expect(received.filter((id) => id === first.id)).toHaveLength(1);
    expect(received.filter((id) => id === fine.id)).toHaveLength(1);
  });

  it("gives each durable consumer its own copy and filters by subject", async () => {
    const a: string[] = [];
    const b: string[] = [];
    const s1 = await t.bus.subscribe({ durable: "events", subjects: ["analytics.catalogue.sku.created"], handle: async (ms) => void a.push(...ms.map((m) => m.subject)) });
    const s2 = await t.bus.subscribe({
      durable: "planning",
      subjects: ["analytics.catalogue.sku.created", "analytics.orders.purchase_order.created"],
      handle: async (ms) => void b.push(...ms.map((m) => m.subject)),
    });
    await t.bus.publish([message("analytics.catalogue.sku.created"), message("analytics.orders.purchase_order.created")]);
    await eventually(async () => a.length === 1 && b.length === 2);
    await s1.stop();
    await s2.stop();
    expect(a).toEqual(["analytics.catalogue.sku.created"]);
  });
});

describe("NatsBus ack wait (real JetStream)", () => {
  it("keeps a slow batch and the messages waiting behind it in progress, so none is handed out twice", async () => {
    const t = await createTestBus({ ackWaitMs: 1000 });
    try {
      const subject = "analytics.inventory.stock.updated";
      const seen: string[] = [];
      let slow = true;
      const sub = await t.bus.subscribe({
        durable: "planning",
        subjects: [subject],
        maxBatch: 1,
        handle: async (ms) => {
          seen.push(...ms.map(text));
          // A batch that takes well over the ack wait (a slow database), the first time only.
          if (slow) await new Promise((r) => setTimeout(r, 2500));
          slow = false;
        },
      });
      await t.bus.publish([message(subject, "slow"), message(subject, "waiting")]);
      await eventually(async () => seen.includes("waiting"), 10_000, "the second message");
      await t.bus.publish([message(subject, "marker")]);
      await eventually(async () => seen.includes("marker"), 10_000, "the marker");
      await sub.stop();
      expect(seen).toEqual(["slow", "waiting", "marker"]);
    } finally {
      await t.close();
    }
  });
});

describe("NatsBus on a JetStream cluster (3 nats-server processes)", () => {
  it("brings an existing stream to the configured replicas when it starts", async () => {
    const cluster = await startNatsCluster(3);
    try {
      const stream = uniqueName("T").toUpperCase();
      const first = await NatsBus.connect({ url: cluster.urls[0], stream });
      expect((await first.streamInfo()).config.num_replicas).toBe(1);
      await first.close();
      const second = await NatsBus.connect({ url: cluster.urls.slice(1).join(","), stream, replicas: 3 });
      const info = await eventually(async () => {
        const i = await second.streamInfo();
        return i.cluster?.replicas?.length === 2 && i;
      }, 20_000, "two more copies of the stream");
      expect(info.config.num_replicas).toBe(3);
      await second.close();
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});
