import { randomUUID } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { createTestBus, eventually, startNatsCluster, uniqueName, type NatsCluster } from "@analytics/testing";
import { consumerName, NatsBus, PULL_HEARTBEAT_MS, type BusMessage } from "../src";

const SUBJECT = "analytics.inventory.stock.updated";
/** One partition: the test's messages and its consumer's leader are one durable consumer's. */
const DURABLE = `${consumerName("planning", SUBJECT)}__p0`;
/** Far beyond every wait below: a message handled in time was not one redelivered after the ack wait. */
const ACK_WAIT_MS = 120_000;

const message = (text: string): BusMessage => ({
  id: randomUUID(),
  subject: SUBJECT,
  accountId: "00000000-0000-4000-8000-000000000001",
  occurredAt: new Date().toISOString(),
  aggregate: "stock:1",
  payload: new TextEncoder().encode(text),
});

/**
 * A consumer whose JetStream leader changes under it goes on consuming: its waiting pull, which
 * lived on the old leader only, is noticed lost by missed heartbeats and made again. Before, it
 * waited for two missed heartbeats of 15 s (the library's default with a 30 s expiry): 35 to 42 s
 * measured. The 5 s figure is the cluster run's (`deploy/cluster/run.mjs --leaders` reports it
 * per leader change); here the bounds only tell that old wait and the ack wait apart.
 */
describe("NatsBus while its JetStream leaders change (3 nats-server processes)", () => {
  let cluster: NatsCluster;
  let stream: string;
  const closing: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    cluster = await startNatsCluster(3);
  });
  afterAll(async () => {
    await cluster.stop();
  });
  beforeEach(() => {
    stream = uniqueName("L").toUpperCase();
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close().catch(() => undefined);
  });

  /** A bus on the servers at `indexes`, closed after the test. */
  async function busOn(indexes: number[]): Promise<NatsBus> {
    const bus = await NatsBus.connect({ url: indexes.map((i) => cluster.urls[i]).join(","), stream, subjectPrefix: `${stream.toLowerCase()}.`, replicas: 3, partitions: 1, ackWaitMs: ACK_WAIT_MS });
    closing.push(() => bus.close());
    return bus;
  }

  /** The consumer's and the stream's leaders, by server index (servers are named n0, n1, n2). */
  async function leaders(via: number[]) {
    const nc = await connect({ servers: via.map((i) => cluster.urls[i]) });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 1000 });
      const consumer = (await jsm.consumers.info(stream, DURABLE)).cluster?.leader;
      const streamLeader = (await jsm.streams.info(stream)).cluster?.leader;
      return consumer && streamLeader ? { consumer: Number(consumer.slice(1)), stream: Number(streamLeader.slice(1)) } : undefined;
    } finally {
      await nc.close();
    }
  }

  /** A "planning" consumer on the servers at `consumerServers`; what it handled. */
  async function consuming(consumerServers: number[]) {
    const handled = new Set<string>();
    const bus = await busOn(consumerServers);
    const sub = await bus.subscribe({ durable: "planning", subjects: [SUBJECT], handle: async (ms) => void ms.forEach((m) => handled.add(new TextDecoder().decode(m.payload))) });
    closing.push(() => sub.stop());
    return { handled };
  }

  /** Publishes until JetStream stores it (during an election the stream may have no leader). */
  async function publish(bus: NatsBus, text: string) {
    await eventually(async () => !(await bus.publish([message(text)]))[0], 30_000, `JetStream to store "${text}"`);
  }

  it("resumes after its consumer's leader steps down, on missed heartbeats rather than the pull's expiry or the ack wait", async () => {
    const producer = await busOn([0, 1, 2]);
    const { handled } = await consuming([0, 1, 2]);
    await publish(producer, "before");
    await eventually(async () => handled.has("before"), 20_000, "the first message");
    const nc = await connect({ servers: cluster.urls });
    closing.push(() => nc.close());
    const answer = await nc.request(`$JS.API.CONSUMER.LEADER.STEPDOWN.${stream}.${DURABLE}`, "", { timeout: 5000 });
    expect(answer.json<{ success?: boolean }>().success).toBe(true);
    await publish(producer, "after");
    // Two or three missed heartbeats and a pull; before, the first check of missed heartbeats came 15 s after the last one.
    await eventually(async () => handled.has("after"), 10 * PULL_HEARTBEAT_MS, "the message published after the leader changed");
  });

  it("resumes after the server of its consumer's leader is lost (a new leader elected), the consumer connected elsewhere", async () => {
    // The consumer's leader on a server the consuming process is not connected to: what it held there is lost without a disconnect.
    const producer = await busOn([0, 1, 2]);
    await producer.subscribe({ durable: "planning", subjects: [SUBJECT], handle: async () => undefined }).then((s) => s.stop());
    const { consumer: lost } = await eventually(() => leaders([0, 1, 2]), 20_000, "the consumer's leader");
    const others = [0, 1, 2].filter((i) => i !== lost);
    const { handled } = await consuming(others);
    await publish(producer, "before");
    await eventually(async () => handled.has("before"), 20_000, "the first message");
    await cluster.kill(lost);
    closing.push(async () => cluster.restart(lost));
    await publish(producer, "after");
    // The servers wait 4-9 s before electing a new leader (nats-server's Raft election timeout); then a few heartbeats.
    await eventually(async () => handled.has("after"), 20_000, "the message published after the leader's server was lost");
    expect((await leaders(others))?.consumer).not.toBe(lost);
  });
});

describe("NatsBus when its durable consumer is gone", () => {
  it("makes it again and reads on (from the stream's start: the inbox drops what was handled)", async () => {
    const t = await createTestBus();
    try {
      const handled: string[] = [];
      const sub = await t.bus.subscribe({ durable: "planning", subjects: [SUBJECT], handle: async (ms) => void handled.push(...ms.map((m) => new TextDecoder().decode(m.payload))) });
      await t.bus.publish([message("before")]);
      await eventually(async () => handled.includes("before"), 10_000, "the first message");
      const nc = await connect({ servers: t.url });
      try {
        await (await jetstreamManager(nc)).consumers.delete(t.stream, `${consumerName("planning", SUBJECT)}__p${partitionFor(t.bus)}`);
      } finally {
        await nc.close();
      }
      await t.bus.publish([message("after")]);
      await eventually(async () => handled.includes("after"), 20_000, "the message published after the consumer was deleted");
      await sub.stop();
    } finally {
      await t.close();
    }
  });
});

/** The partition of the test's account on a bus. */
function partitionFor(bus: NatsBus): number {
  return Number(/\.p(\d+)$/.exec(bus.partitioned(SUBJECT, message("").accountId))![1]);
}
