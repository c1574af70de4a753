import { randomUUID } from "node:crypto";
import { type BusMessage, InProcessBus, retryDelayMs, subjectMatches } from "../src";
import { createTestBus, eventually, type TestBus } from "@analytics/testing";

const message = (subject: string, data: unknown = {}): BusMessage => ({
  id: randomUUID(),
  subject,
  accountId: randomUUID(),
  occurredAt: new Date().toISOString(),
  data,
});

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
  it("resolves publish only after matching subscribers processed the message", async () => {
    const bus = new InProcessBus();
    const seen: string[] = [];
    await bus.subscribe({ durable: "a", subjects: ["analytics.catalogue.>"], handler: async (m) => void seen.push(m.subject) });
    await bus.subscribe({ durable: "b", subjects: ["analytics.orders.>"], handler: async (m) => void seen.push("b:" + m.subject) });
    await bus.publish(message("analytics.catalogue.sku.created"));
    expect(seen).toEqual(["analytics.catalogue.sku.created"]);
  });

  it("rejects publish when a subscriber fails, so the outbox retries", async () => {
    const bus = new InProcessBus();
    await bus.subscribe({ durable: "a", subjects: [">"], handler: async () => { throw new Error("db down"); } });
    await expect(bus.publish(message("analytics.x.y.z"))).rejects.toThrow(/subscriber/);
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

  it("stores a message published twice with one Nats-Msg-Id once", async () => {
    const m = message("analytics.catalogue.sku.updated", { n: 1 });
    await t.bus.publish(m);
    await t.bus.publish(m);
    const received: BusMessage[] = [];
    const sub = await t.bus.subscribe({ durable: "events", subjects: ["analytics.catalogue.>"], handler: async (x) => void received.push(x) });
    await eventually(async () => received.length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(received).toHaveLength(1);
    expect(received[0]).toEqual(m);
  });

  it("redelivers after a failed handler and keeps a durable position across restarts", async () => {
    let failures = 0;
    const received: string[] = [];
    const handler = async (m: BusMessage) => {
      if ((m.data as { failOnce?: boolean }).failOnce && failures === 0) {
        failures++;
        throw new Error("transient");
      }
      received.push(m.id);
    };
    const first = message("analytics.inventory.stock.updated", { failOnce: true });
    const sub = await t.bus.subscribe({ durable: "planning", subjects: ["analytics.inventory.>"], handler });
    await t.bus.publish(first);
    await eventually(async () => received.includes(first.id), 10_000, "redelivery");
    expect(failures).toBe(1);
    await sub.stop();

    const whileDown = message("analytics.inventory.stock.updated");
    await t.bus.publish(whileDown);
    const again = await t.bus.subscribe({ durable: "planning", subjects: ["analytics.inventory.>"], handler });
    await eventually(async () => received.includes(whileDown.id), 10_000, "message published while stopped");
    await again.stop();
    expect(received.filter((id) => id === first.id)).toHaveLength(1);
  });

  it("gives each durable consumer its own copy and filters by subject", async () => {
    const a: string[] = [];
    const b: string[] = [];
    const s1 = await t.bus.subscribe({ durable: "events", subjects: ["analytics.catalogue.sku.*"], handler: async (m) => void a.push(m.subject) });
    const s2 = await t.bus.subscribe({ durable: "planning", subjects: ["analytics.>"], handler: async (m) => void b.push(m.subject) });
    await t.bus.publish(message("analytics.catalogue.sku.created"));
    await t.bus.publish(message("analytics.orders.purchase_order.created"));
    await eventually(async () => a.length === 1 && b.length === 2);
    await s1.stop();
    await s2.stop();
    expect(a).toEqual(["analytics.catalogue.sku.created"]);
  });
});
