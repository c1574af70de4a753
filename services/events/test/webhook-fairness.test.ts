import { randomUUID } from "node:crypto";
import { eventsV1, topics } from "@analytics/contracts";
import { consumerHandler, type ServiceDeps } from "@analytics/rpc";
import { busMessage, eventually, serviceUnderTest, startWebhookReceiver, type WebhookReceiver } from "@analytics/testing";
import { startEventsService } from "../src/service";
import { queueConsumer } from "../src/subscriptions";

const { EventsService } = eventsV1;

/**
 * A process's webhook slots shared between endpoints (real Postgres, a local receiver): endpoints
 * that never answer cannot take them all. The process's total is 12 here instead of 256, and the
 * per-endpoint limit 3 instead of 16: the same shape, with 6 dead endpoints instead of 17+.
 */
describe("webhook slots shared between endpoints", () => {
  const PER_ENDPOINT = 3;
  const MAX_IN_FLIGHT = 12;
  const DEAD = 6; // more than MAX_IN_FLIGHT / PER_ENDPOINT: together they could hold every slot
  const start = (deps: ServiceDeps) =>
    startEventsService(deps, { allowPrivate: true, concurrencyPerEndpoint: PER_ENDPOINT, maxInFlight: MAX_IN_FLIGHT, pollMs: 50, imageUrls: { signing: "s".repeat(32) } });
  const events = serviceUnderTest(EventsService, start, { schema: "events" });
  const { client, db, as } = events;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  const handle = consumerHandler(db, "events", queueConsumer);
  const queue = (accountId: string, products: string[]) =>
    handle(products.map((id) => busMessage(topics.catalogueSkuUpdated, accountId, `sku:${id}`, { accountId, skuId: id, version: 1n, product: { id, key: `K-${id}`, sku: "v1" } })));
  async function endpoint(accountId: string, name: string) {
    const { endpoint } = await client.createWebhookEndpoint({ endpoint: { url: receiver.url(name), eventTypes: [] } }, as(accountId));
    receiver.trust(name, endpoint!.secret!);
    return endpoint!;
  }

  it("gives a quick endpoint of another account slots while more dead endpoints than the process can hold at their limit hold theirs", async () => {
    // Dead receivers: they never answer (until released at the end), as one that lets every attempt run into its 15 s.
    const held: (() => void)[] = [];
    receiver.answer = (name) => (name.startsWith("dead") ? new Promise((resolve) => held.push(() => resolve(204))) : 204);
    const dead: string[] = [];
    // One after another, each with a full limit's worth due: the worst order (the first ones would take every slot).
    for (let i = 0; i < DEAD; i++) {
      const acc = randomUUID();
      dead.push((await endpoint(acc, `dead-${i}`)).id);
      await queue(acc, Array.from({ length: PER_ENDPOINT }, () => randomUUID()));
      await eventually(async () => (receiver.open.get(`dead-${i}`) ?? 0) > 0, 10_000, `dead-${i} holding a slot`);
    }
    const heldByDead = held.length;
    expect(heldByDead).toBeLessThan(MAX_IN_FLIGHT);

    const healthy = randomUUID();
    await endpoint(healthy, "healthy");
    await queue(healthy, Array.from({ length: 5 }, () => randomUUID()));
    await eventually(async () => receiver.received.filter((r) => r.endpoint === "healthy" && r.status === 204).length === 5, 10_000, "the healthy endpoint's deliveries");
    // All while the dead ones held their slots: none of their attempts ended (nor ran into its deadline).
    expect(held).toHaveLength(heldByDead);
    const ended = await db("webhook_deliveries").whereIn("endpoint_id", dead).where("attempts", ">", 0).count({ n: "*" });
    expect(Number(ended[0].n)).toBe(0);

    // The dead ones answer at last: everything is delivered, nothing was lost.
    receiver.answer = () => 204;
    held.splice(0).forEach((release) => release());
    await eventually(
      async () => receiver.received.filter((r) => r.endpoint.startsWith("dead") && r.status === 204).length === DEAD * PER_ENDPOINT,
      20_000,
      "the dead endpoints' deliveries once they answer",
    );
  });
});
