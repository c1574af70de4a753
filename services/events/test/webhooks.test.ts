import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import { Code } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { eventsV1, importToRest, ImportSchema, topics } from "@analytics/contracts";
import { consumerHandler, type ServiceDeps } from "@analytics/rpc";
import { busMessage, codeOf, eventually, serviceUnderTest, startWebhookReceiver, type WebhookReceiver } from "@analytics/testing";
import { startEventsService } from "../src/service";
import { claimDue, recordAndClaim, recordAttempts, type AttemptOutcome } from "../src/repository/webhooks";
import { importsConsumer, queueConsumer } from "../src/subscriptions";

const { EventsService } = eventsV1;

/**
 * Webhooks end to end inside the events service (real Postgres): the endpoints' resource, and the
 * worker pushing queue entries to a local receiver that checks every signature with the
 * standardwebhooks package (libs/testing/src/webhook-receiver.ts).
 */
describe("webhooks (real Postgres, a local receiver verifying with standardwebhooks)", () => {
  const PER_ENDPOINT = 3;
  const start = (deps: ServiceDeps) => startEventsService(deps, { allowPrivate: true, concurrencyPerEndpoint: PER_ENDPOINT, pollMs: 50, imageUrls: { signing: "s".repeat(32) } });
  const events = serviceUnderTest(EventsService, start, { schema: "events" });
  const { client, db, as } = events;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.answer = () => 204;
  });

  const handle = consumerHandler(db, "events", queueConsumer);
  const skuMessage = (accountId: string, id: string, version: number) =>
    busMessage(topics.catalogueSkuUpdated, accountId, `sku:${id}`, { accountId, skuId: id, version: BigInt(version), product: { id, key: `K-${id}`, sku: `v${version}` } });
  /** Queue entries made as the bus would: the consumer's own handler. */
  const queue = (accountId: string, products: string[], version: number) => handle(products.map((p) => skuMessage(accountId, p, version)));

  async function endpoint(accountId: string, name: string, eventTypes: string[] = []) {
    const { endpoint } = await client.createWebhookEndpoint({ endpoint: { url: receiver.url(name), eventTypes } }, as(accountId));
    receiver.trust(name, endpoint!.secret!);
    return endpoint!;
  }
  /** The service's /metrics text (on its h2c port). */
  const metrics = () =>
    new Promise<string>((resolve, reject) => {
      const session = http2.connect(events.service.url);
      session.on("error", reject);
      const req = session.request({ ":path": "/metrics" });
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (text += c));
      req.on("end", () => {
        session.close();
        resolve(text);
      });
      req.end();
    });
  const sample = (text: string, name: string, labels: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? undefined : Number(line.split(" ").at(-1));
  };
  const deliveredTo = (name: string) => receiver.received.filter((r) => r.endpoint === name && r.status < 300);
  /**
   * Brings an endpoint's only delivery to its last scheduled attempt, the receiver failing it:
   * after its first attempt is recorded, the next is made the 8th and due now. Returns the delivery once failed.
   */
  async function failForGood(endpointId: string): Promise<{ id: string; status: string; attempts: number }> {
    const row = () => db("webhook_deliveries").where({ endpoint_id: endpointId }).first();
    await eventually(async () => {
      const r = await row();
      return r?.attempts === 1 && r.lease_until === null;
    }, 20_000, "the first attempt recorded");
    await db("webhook_deliveries").where({ endpoint_id: endpointId }).update({ attempts: 7, next_attempt_at: db.fn.now() });
    return eventually(async () => {
      const r = await row();
      return r.status === "failed" && r;
    }, 20_000, "the last attempt failed");
  }

  describe("the resource", () => {
    it("shows the secret once, lists, reads, updates and deletes an endpoint; another account sees none of it", async () => {
      const acc = randomUUID();
      const { endpoint } = await client.createWebhookEndpoint({ endpoint: { url: "https://hooks.example.com/a", eventTypes: ["update_sku"], description: "ERP" } }, as(acc));
      expect(endpoint).toMatchObject({ url: "https://hooks.example.com/a", eventTypes: ["update_sku"], description: "ERP", enabled: true });
      expect(endpoint!.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      const id = endpoint!.id;
      expect((await client.getWebhookEndpoint({ id }, as(acc))).endpoint!.secret).toBeUndefined();
      expect((await client.listWebhookEndpoints({}, as(acc))).endpoints.map((e) => [e.id, e.secret])).toEqual([[id, undefined]]);
      const updated = await client.updateWebhookEndpoint({ id, endpoint: { url: "https://hooks.example.com/b", eventTypes: [], description: "PIM" } }, as(acc));
      expect(updated.endpoint).toMatchObject({ url: "https://hooks.example.com/b", eventTypes: [], description: "PIM" });

      const stranger = as(randomUUID());
      expect((await client.listWebhookEndpoints({}, stranger)).endpoints).toEqual([]);
      for (const call of [
        client.getWebhookEndpoint({ id }, stranger),
        client.updateWebhookEndpoint({ id, endpoint: { url: "https://x.example.com", eventTypes: [] } }, stranger),
        client.rotateWebhookSecret({ id }, stranger),
        client.deleteWebhookEndpoint({ id }, stranger),
        client.listWebhookDeliveries({ endpointId: id }, stranger),
        client.getWebhookEndpoint({ id: "not-a-uuid" }, as(acc)),
      ]) {
        expect(await codeOf(call)).toBe(Code.NotFound);
      }
      await client.deleteWebhookEndpoint({ id }, as(acc));
      expect(await codeOf(client.getWebhookEndpoint({ id }, as(acc)))).toBe(Code.NotFound);
    });

    it("serves a gateway from before `endpoint` (its deprecated fields) while a rolling update is under way", async () => {
      const acc = randomUUID();
      const { endpoint } = await client.createWebhookEndpoint({ url: "https://hooks.example.com/old", eventTypes: ["update_sku"], description: "ERP" }, as(acc));
      expect([endpoint!.url, endpoint!.eventTypes, endpoint!.description]).toEqual(["https://hooks.example.com/old", ["update_sku"], "ERP"]);
      const updated = await client.updateWebhookEndpoint({ id: endpoint!.id, url: "https://hooks.example.com/older", eventTypes: [] }, as(acc));
      expect(updated.endpoint!.url).toBe("https://hooks.example.com/older");
    });

    it("writes an endpoint conditionally (If-Match): of two writes naming one revision, one is done and the other Aborted, nothing changed", async () => {
      const acc = randomUUID();
      const { endpoint } = await client.createWebhookEndpoint({ endpoint: { url: "https://hooks.example.com/a", eventTypes: [] } }, as(acc));
      const id = endpoint!.id;
      const { revision } = await client.getWebhookEndpoint({ id }, as(acc));
      expect(revision).toMatch(/^\d+$/);
      const writes = await Promise.allSettled(
        ["first", "second"].map((name) => client.updateWebhookEndpoint({ id, endpoint: { url: `https://hooks.example.com/${name}`, eventTypes: [] }, ifRevision: revision }, as(acc))),
      );
      expect(writes.map((w) => (w.status === "fulfilled" ? "done" : (w.reason as { code: Code }).code)).sort()).toEqual([Code.Aborted, "done"].sort());
      const winner = writes.findIndex((w) => w.status === "fulfilled");
      const now = await client.getWebhookEndpoint({ id }, as(acc));
      expect(now.endpoint!.url).toBe(`https://hooks.example.com/${["first", "second"][winner]}`);
      expect(now.revision).not.toBe(revision);
      const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: { code: Code; rawMessage: string }) => [Code[e.code], e.rawMessage]);
      const stale = ["Aborted", "webhook endpoint changed since the revision the request named"];
      expect(await refusal(client.deleteWebhookEndpoint({ id, ifRevision: revision }, as(acc)))).toEqual(stale);
      await client.deleteWebhookEndpoint({ id, ifRevision: now.revision }, as(acc));
      expect(await codeOf(client.getWebhookEndpoint({ id }, as(acc)))).toBe(Code.NotFound);
      // Gone: a 412 when a revision is named (not the one named), a 404 otherwise.
      expect(await refusal(client.updateWebhookEndpoint({ id, endpoint: { url: "https://hooks.example.com/c", eventTypes: [] }, ifRevision: now.revision }, as(acc)))).toEqual(stale);
      expect(await refusal(client.deleteWebhookEndpoint({ id }, as(acc)))).toEqual(["NotFound", "webhook endpoint not found"]);
    });

    it("refuses an 11th endpoint of an account, also when they are created at once", async () => {
      const acc = randomUUID();
      const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => client.createWebhookEndpoint({ endpoint: { url: `https://h${i}.example.com`, eventTypes: [] } }, as(acc))));
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(10);
      expect((await client.listWebhookEndpoints({}, as(acc))).endpoints).toHaveLength(10);
      expect(await codeOf(client.createWebhookEndpoint({ endpoint: { url: "https://h.example.com", eventTypes: [] } }, as(acc)))).toBe(Code.AlreadyExists);
    });

    it("refuses an unknown event type and a URL that is not absolute, naming the field", async () => {
      const acc = randomUUID();
      const bad = await client.createWebhookEndpoint({ endpoint: { url: "https://h.example.com", eventTypes: ["update_sku", "nope"] } }, as(acc)).catch((e) => e);
      expect(bad).toMatchObject({ code: Code.InvalidArgument, rawMessage: expect.stringContaining("eventTypes[1]") });
      const url = await client.createWebhookEndpoint({ endpoint: { url: "hooks", eventTypes: [] } }, as(acc)).catch((e) => e);
      expect(url).toMatchObject({ code: Code.InvalidArgument, rawMessage: expect.stringContaining("url") });
    });
  });

  describe("delivery", () => {
    it("delivers every entry of a subscribed type once, signed (verified by standardwebhooks), as {id, type, timestamp, data}", async () => {
      const acc = randomUUID();
      const all = await endpoint(acc, "all");
      await endpoint(acc, "orders-only", ["draft_po_change"]);
      const products = [randomUUID(), randomUUID()];
      await queue(acc, products, 1);
      const entries = await db("events").where({ account_id: acc }).orderBy("seq");
      await eventually(async () => deliveredTo("all").length === 2, 20_000, "two deliveries");
      expect(receiver.rejected).toEqual([]);
      const got = deliveredTo("all").map((r) => r.body);
      expect(got.map((b) => b.id).sort()).toEqual(entries.map((e) => e.id).sort());
      const first = got.find((b) => b.id === entries[0].id)!;
      expect(first).toEqual({
        id: entries[0].id,
        type: "update_sku",
        timestamp: entries[0].created_at.toISOString(),
        data: { id: entries[0].id, accountId: acc, eventType: "update_sku", payload: entries[0].payload, createdAt: entries[0].created_at.toISOString(), completedAt: null, failedAt: null },
      });
      expect(deliveredTo("all").map((r) => r.webhookId).sort()).toEqual(entries.map((e) => e.id).sort());
      expect(deliveredTo("orders-only")).toEqual([]);
      const log = await eventually(async () => {
        const l = await client.listWebhookDeliveries({ endpointId: all.id, page: { page: 1, pageSize: 10 } }, as(acc));
        return l.deliveries.every((d) => d.status !== "pending") && l;
      }, 20_000, "both attempts recorded");
      expect(log.totalCount).toBe(2n);
      expect(log.deliveries.map((d) => [d.status, d.attempt, d.statusCode])).toEqual([
        ["delivered", 1, 204],
        ["delivered", 1, 204],
      ]);
    });

    it("pushes a finished import once to endpoints of import.finished or every type, a redelivered message included, data the Import object; no queue entry", async () => {
      const acc = randomUUID();
      const imports = await endpoint(acc, "imports", ["import.finished"]);
      await endpoint(acc, "imports-all");
      await endpoint(acc, "imports-skus-only", ["update_sku"]);
      const handleImports = consumerHandler(db, "events", importsConsumer);
      const at = (iso: string) => timestampFromDate(new Date(iso));
      const job = (status: string) => ({
        id: randomUUID(),
        resource: "products",
        format: "ndjson",
        status,
        linesTotal: 3n,
        linesProcessed: 3n,
        linesSucceeded: status === "completed" ? 3n : 1n,
        linesFailed: status === "completed" ? 0n : 2n,
        createdAt: at("2026-03-01T10:00:00.000Z"),
        startedAt: at("2026-03-01T10:00:01.000Z"),
        finishedAt: at("2026-03-01T10:00:02.500Z"),
        resultsExpireAt: at("2026-03-08T10:00:02.500Z"),
        message: status === "cancelled" ? "cancelled" : "",
      });
      const jobs = [job("completed"), job("cancelled")];
      const messages = jobs.map((j) => busMessage(topics.importFinished, acc, `import:${j.id}`, { accountId: acc, import: j }));
      await handleImports(messages);
      // The bus delivers at least once: the same messages again, alone and in a batch, make nothing more.
      await handleImports(messages);
      await handleImports([messages[1], messages[0], messages[1]]);
      const webhookEvents = await db("webhook_events").where({ account_id: acc }).orderBy("seq");
      expect(webhookEvents.map((e) => [e.event_type, e.aggregate])).toEqual(jobs.map((j) => ["import.finished", `import:${j.id}`]));
      await eventually(async () => deliveredTo("imports").length === 2 && deliveredTo("imports-all").length === 2, 20_000, "each import delivered to both endpoints");
      expect(receiver.rejected).toEqual([]);
      for (const name of ["imports", "imports-all"]) {
        const got = new Map(deliveredTo(name).map((r) => [r.body.data.id, r]));
        for (const [i, j] of jobs.entries()) {
          const event = webhookEvents[i];
          expect(got.get(j.id)!.webhookId).toBe(event.id);
          // data: the job exactly as GET /imports/{id} answers it (the gateway's own conversion).
          expect(got.get(j.id)!.body).toEqual({ id: event.id, type: "import.finished", timestamp: event.created_at.toISOString(), data: importToRest(create(ImportSchema, j)) });
        }
      }
      expect(deliveredTo("imports-skus-only")).toEqual([]);
      // Pushed only: the account's queue has no entry of it, and the delivery log names its type.
      expect((await client.listEvents({ page: { page: 1, pageSize: 10 } }, as(acc))).totalCount).toBe(0n);
      const log = await eventually(async () => {
        const l = await client.listWebhookDeliveries({ endpointId: imports.id, page: { page: 1, pageSize: 10 } }, as(acc));
        return l.deliveries.every((d) => d.status === "delivered") && l;
      }, 20_000, "both attempts recorded");
      expect(log.deliveries.map((d) => [d.eventType, d.status, d.eventId]).sort()).toEqual(webhookEvents.map((e) => ["import.finished", "delivered", e.id]).sort());
    });

    it("signs with the old secret too for 24 hours after a rotation", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "rotated");
      const { endpoint: rotated } = await client.rotateWebhookSecret({ id: ep.id }, as(acc));
      expect(rotated!.secret).not.toEqual(ep.secret);
      for (const [name, secret] of [["rotated-old", ep.secret!], ["rotated-new", rotated!.secret!]]) {
        await client.updateWebhookEndpoint({ id: ep.id, endpoint: { url: receiver.url(name), eventTypes: [] } }, as(acc));
        receiver.trust(name, secret);
        await queue(acc, [randomUUID()], 1);
        await eventually(async () => deliveredTo(name).length === 1, 20_000, `a delivery verified with the ${name} secret`);
      }
      // Past the 24 hours, the old one no longer verifies: only the new secret signs.
      await db("webhook_endpoints").where({ id: ep.id }).update({ previous_secret_until: db.raw("now() - interval '1 second'") });
      await client.updateWebhookEndpoint({ id: ep.id, endpoint: { url: receiver.url("rotated-expired"), eventTypes: [] } }, as(acc));
      receiver.trust("rotated-expired", ep.secret!);
      await queue(acc, [randomUUID()], 1);
      await eventually(async () => receiver.rejected.some((r) => r.endpoint === "rotated-expired"), 20_000, "a delivery the old secret no longer verifies");
    });

    it("delivers a product's entries in queue order: a later one waits for the earlier one's outcome, a failure and its retry included", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "ordered");
      const product = randomUUID();
      let failures = 1;
      receiver.answer = (_, d) => (d.body.data.payload.sku === "v1" && failures-- > 0 ? 500 : 204);
      await queue(acc, [product], 1);
      await queue(acc, [product], 2);
      await queue(acc, [product], 3);
      await eventually(async () => deliveredTo("ordered").length === 3, 30_000, "three deliveries (the first after its retry ~5 s on)");
      // v1 failed once, and v2 was not sent before v1 succeeded.
      expect(receiver.received.filter((r) => r.endpoint === "ordered").map((r) => [r.body.data.payload.sku, r.status])).toEqual([
        ["v1", 500],
        ["v1", 204],
        ["v2", 204],
        ["v3", 204],
      ]);
      // The delivery log lists every attempt of each delivery: v1's failure and its retry.
      const log = await eventually(async () => {
        const l = await client.listWebhookDeliveries({ endpointId: ep.id }, as(acc));
        return l.deliveries.every((d) => d.status === "delivered") && l;
      }, 20_000, "the three deliveries recorded");
      const v1 = log.deliveries.at(-1)!;
      expect(v1.attempts.map((a) => [a.attempt, a.statusCode, a.nextRetryAt !== undefined])).toEqual([
        [1, 500, true],
        [2, 204, false],
      ]);
      expect(v1.attempts.every((a) => a.attemptedAt !== undefined && a.durationMs !== undefined)).toBe(true);
      expect(log.deliveries.slice(0, 2).map((d) => d.attempts.map((a) => a.statusCode))).toEqual([[204], [204]]);
    });

    it("schedules the retries after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then gives up, and the next entry of the product goes", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "failing");
      const product = randomUUID();
      receiver.answer = (_, d) => (d.body.data.payload.sku === "v1" ? 503 : 204);
      await queue(acc, [product], 1);
      await queue(acc, [product], 2);
      const schedule = [5, 300, 1800, 7200, 18000, 36000, 36000];
      const row = () => db("webhook_deliveries").where({ endpoint_id: ep.id }).orderBy("event_seq").first();
      for (const [n, seconds] of schedule.entries()) {
        const d = await eventually(async () => {
          const r = await row();
          return r.attempts === n + 1 && r.lease_until === null ? r : undefined;
        }, 20_000, `attempt ${n + 1}`);
        const wait = (d.next_attempt_at.getTime() - d.last_attempt_at.getTime()) / 1000;
        expect(d.status).toBe("pending");
        expect(wait).toBeGreaterThanOrEqual(seconds * 0.9 - 1);
        expect(wait).toBeLessThanOrEqual(seconds * 1.1 + 1);
        expect(deliveredTo("failing")).toEqual([]);
        // Skip the wait: make the retry due now.
        await db("webhook_deliveries").where({ id: d.id }).update({ next_attempt_at: db.fn.now() });
      }
      await eventually(async () => (await row()).status === "failed", 20_000, "the delivery given up after the 8th attempt");
      expect((await row()).attempts).toBe(8);
      await eventually(async () => deliveredTo("failing").length === 1, 20_000, "the product's next entry delivered");
      expect(deliveredTo("failing")[0].body.data.payload.sku).toBe("v2");
    });

    it("disables an endpoint at once on a 410, and PUT enabled=true resumes it from the same entry; entries queued while it was disabled are not pushed", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "gone");
      receiver.answer = () => 410;
      await queue(acc, [randomUUID()], 1);
      await eventually(async () => (await client.getWebhookEndpoint({ id: ep.id }, as(acc))).endpoint!.enabled === false, 20_000, "the endpoint disabled");
      expect((await client.getWebhookEndpoint({ id: ep.id }, as(acc))).endpoint!.disabledReason).toBe("gone");
      expect(receiver.received.filter((r) => r.endpoint === "gone")).toHaveLength(1);
      // An entry queued while the endpoint is disabled gets no delivery to it (the pull queue has it).
      const whileDisabled = randomUUID();
      await queue(acc, [whileDisabled], 1);
      receiver.answer = () => 204;
      await client.updateWebhookEndpoint({ id: ep.id, endpoint: { url: ep.url, eventTypes: [] }, enabled: true }, as(acc));
      await eventually(async () => deliveredTo("gone").length === 1, 20_000, "the entry delivered after re-enabling");
      const rows = await db("webhook_deliveries").where({ endpoint_id: ep.id }).select("event_id");
      expect(rows).toHaveLength(1);
      expect(deliveredTo("gone")[0].body.data.payload.id).not.toBe(whileDisabled);
      expect(await db("events").where({ account_id: acc }).count({ n: "*" }).then(([r]) => Number(r.n))).toBe(2);
    });

    it("disables an endpoint whose attempts have all failed for 5 days, not before", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "five-days");
      receiver.answer = () => 500;
      await db("webhook_endpoints").where({ id: ep.id }).update({ failing_since: db.raw("now() - interval '4 days 23 hours'") });
      await queue(acc, [randomUUID()], 1);
      await eventually(async () => receiver.received.some((r) => r.endpoint === "five-days"), 20_000, "a failed attempt");
      await eventually(async () => (await db("webhook_deliveries").where({ endpoint_id: ep.id }).first()).attempts === 1);
      expect((await client.getWebhookEndpoint({ id: ep.id }, as(acc))).endpoint!.enabled).toBe(true);
      await db("webhook_endpoints").where({ id: ep.id }).update({ failing_since: db.raw("now() - interval '5 days 1 minute'") });
      await db("webhook_deliveries").where({ endpoint_id: ep.id }).update({ next_attempt_at: db.fn.now() });
      await eventually(async () => (await client.getWebhookEndpoint({ id: ep.id }, as(acc))).endpoint!.disabledReason === "failing", 20_000, "disabled as failing");
    });

    it("retries a failed delivery by hand", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "manual");
      receiver.answer = () => 500;
      await queue(acc, [randomUUID()], 1);
      await failForGood(ep.id);
      const { deliveries } = await client.listWebhookDeliveries({ endpointId: ep.id }, as(acc));
      // Failed for good: its schedule is over, nothing would send it again.
      expect(deliveries[0]).toMatchObject({ status: "failed", attempt: 8, statusCode: 500 });
      expect(deliveries[0].nextRetryAt).toBeUndefined();
      receiver.answer = () => 200;
      const { delivery } = await client.retryWebhookDelivery({ endpointId: ep.id, deliveryId: deliveries[0].id }, as(acc));
      expect(delivery).toMatchObject({ id: deliveries[0].id, status: "pending", attempt: 0 });
      await eventually(async () => deliveredTo("manual").length === 1, 20_000, "delivered after the manual retry");
      // A delivered one is not sent again (a 409): it could put an older state after a newer one.
      await eventually(async () => (await client.listWebhookDeliveries({ endpointId: ep.id }, as(acc))).deliveries[0].status === "delivered", 3_000, "recorded delivered");
      expect(await codeOf(client.retryWebhookDelivery({ endpointId: ep.id, deliveryId: deliveries[0].id }, as(acc)))).toBe(Code.AlreadyExists);
      expect(await codeOf(client.retryWebhookDelivery({ endpointId: ep.id, deliveryId: randomUUID() }, as(acc)))).toBe(Code.NotFound);
    });

    it("sends a failed delivery retried by hand alone: the product's later entries are not held back by it", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "retried-alone");
      const product = randomUUID();
      receiver.answer = (_, d) => (d.body.data.payload.sku === "v1" ? 503 : 204);
      const sent = (sku: string) => receiver.received.filter((r) => r.endpoint === "retried-alone" && r.body.data.payload.sku === sku);
      const v1 = async () => (await db("webhook_deliveries").where({ endpoint_id: ep.id }).orderBy("event_seq").first()) as { id: string; status: string; attempts: number; lease_until: Date | null };
      await queue(acc, [product], 1);
      await eventually(async () => (await v1()).attempts === 1 && (await v1()).lease_until === null, 20_000, "v1's first attempt recorded");
      // v1 as after the last attempt of its schedule: failed, and the product's next entry goes.
      await db("webhook_deliveries").where({ id: (await v1()).id }).update({ status: "failed" });
      await queue(acc, [product], 2);
      await eventually(async () => deliveredTo("retried-alone").length === 1, 20_000, "v2 delivered after v1 failed");
      await client.retryWebhookDelivery({ endpointId: ep.id, deliveryId: (await v1()).id }, as(acc));
      await eventually(async () => sent("v1").length === 2 && (await v1()).lease_until === null && (await v1()).attempts === 1, 20_000, "v1 sent again, and failed again");
      // v1 is pending again (its next attempt about 5 s on), and v3 does not wait for it.
      await queue(acc, [product], 3);
      await eventually(async () => deliveredTo("retried-alone").length === 2, 20_000, "v3 delivered while v1 is pending");
      expect((await v1()).status).toBe("pending");
      expect(deliveredTo("retried-alone").map((r) => r.body.data.payload.sku)).toEqual(["v2", "v3"]);
      await db("webhook_deliveries").where({ endpoint_id: ep.id }).delete();
    });

    it("keeps an endpoint's limit over replicas: a worker's claim waits for another's claim of the endpoint, then counts its leases", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "replicas");
      // Four deliveries, none due yet (the service's worker leaves them alone).
      const ids: string[] = (
        await db.raw(
          `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, aggregate, next_attempt_at)
           SELECT ?, gen_random_uuid(), g, 'p' || g, now() + interval '1 hour' FROM generate_series(1, 4) g RETURNING id`,
          [ep.id],
        )
      ).rows.map((r: { id: string }) => r.id);
      const leased = () => db("webhook_deliveries").where({ endpoint_id: ep.id }).where("lease_until", ">", db.fn.now()).count({ n: "*" }).then(([r]) => Number(r.n));
      const waitingForClaimLock = async () =>
        Number((await db.raw("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'")).rows[0].n) > 0;
      // Another replica's claim under way: it leases the first three, its limit, and has not committed yet.
      const replica = await db.transaction();
      try {
        await replica("webhook_deliveries").whereIn("id", ids.slice(0, 3)).update({ next_attempt_at: db.raw("now() - interval '1 minute'") });
        await claimDue(replica, { limit: 10, perEndpoint: PER_ENDPOINT, leaseMs: 60_000, token: randomUUID() });
        expect(Number((await replica("webhook_deliveries").where({ endpoint_id: ep.id }).whereNotNull("lease_token").count({ n: "*" }))[0].n)).toBe(PER_ENDPOINT);
        // The fourth becomes due, ahead of them: the service's worker claims the endpoint now.
        await db("webhook_deliveries").where({ id: ids[3] }).update({ next_attempt_at: db.raw("now() - interval '1 hour'") });
        await eventually(async () => (await waitingForClaimLock()) || (await leased()) > 0, 20_000, "the service's worker claiming the endpoint");
        await replica.commit();
      } catch (err) {
        await replica.rollback();
        throw err;
      }
      await eventually(async () => !(await waitingForClaimLock()), 20_000, "the service's worker past the lock");
      // It counted the replica's leases: the fourth waits for a free slot.
      expect(await leased()).toBe(PER_ENDPOINT);
      await db("webhook_deliveries").where({ endpoint_id: ep.id }).delete();
    });

    it("keeps a slow endpoint to its own slots: another endpoint's deliveries go meanwhile", async () => {
      const acc = randomUUID();
      await endpoint(acc, "slow");
      const other = randomUUID();
      await endpoint(other, "fast");
      const held: (() => void)[] = [];
      receiver.answer = (name) => (name === "slow" ? new Promise((resolve) => held.push(() => resolve(204))) : 204);
      await queue(acc, Array.from({ length: 10 }, () => randomUUID()), 1);
      await eventually(async () => held.length === PER_ENDPOINT, 20_000, "the slow endpoint's slots full");
      await queue(other, Array.from({ length: 10 }, () => randomUUID()), 1);
      await eventually(async () => deliveredTo("fast").length === 10, 20_000, "the other account's endpoint served meanwhile");
      expect(held).toHaveLength(PER_ENDPOINT);
      while (deliveredTo("slow").length < 10) {
        held.splice(0).forEach((release) => release());
        await eventually(async () => held.length > 0 || deliveredTo("slow").length === 10, 20_000, "the slow endpoint's next deliveries");
      }
      expect(receiver.mostOpen.get("slow")).toBe(PER_ENDPOINT);
    });

    it("reports deliveries by outcome (delivered, failed, gone, gave_up), attempt latency, and per endpoint its backlog and oldest pending", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "metered");
      const held: (() => void)[] = [];
      const answers: Record<string, number> = { "metered-failing": 500, "metered-gone": 410, "metered-gave-up": 503 };
      receiver.answer = (name) => (name === "metered" ? new Promise((resolve) => held.push(() => resolve(204))) : (answers[name] ?? 204));
      const product = randomUUID();
      await queue(acc, [product], 1);
      await queue(acc, [product], 2);
      await eventually(async () => held.length === 1, 20_000, "the first delivery in flight");
      // Its entries as if queued a minute ago: the oldest pending is about that old.
      await db("webhook_deliveries").where({ endpoint_id: ep.id }).update({ created_at: db.raw("now() - interval '1 minute'") });
      const before = await metrics();
      expect(sample(before, "webhook_pending_deliveries", `endpoint="${ep.id}"`)).toBe(2);
      expect(sample(before, "webhook_oldest_pending_age_seconds", `endpoint="${ep.id}"`)).toBeGreaterThanOrEqual(60);
      const count = (text: string, outcome: string) => sample(text, "webhook_attempts_total", `outcome="${outcome}"`) ?? 0;
      const timed = (text: string, outcome: string) => sample(text, "webhook_attempt_duration_seconds_count", `outcome="${outcome}"`) ?? 0;

      // Each outcome at least once more, at an endpoint of its own (a 410 disables its endpoint).
      const [failing, gone, gaveUp] = await Promise.all(
        ["metered-failing", "metered-gone", "metered-gave-up"].map(async (name) => {
          const other = randomUUID();
          const e = await endpoint(other, name);
          await queue(other, [randomUUID()], 1);
          return e;
        }),
      );
      await failForGood(gaveUp.id);
      await eventually(async () => (await db("webhook_deliveries").where({ endpoint_id: failing.id }).first())?.attempts >= 1, 20_000, "a failed attempt recorded");
      await eventually(async () => (await db("webhook_endpoints").where({ id: gone.id }).first()).enabled === false, 20_000, "the 410 recorded");
      while (deliveredTo("metered").length < 2) {
        held.splice(0).forEach((release) => release());
        await eventually(async () => held.length > 0 || deliveredTo("metered").length === 2, 20_000, "the next delivery");
      }
      const after = await eventually(async () => {
        const text = await metrics();
        return sample(text, "webhook_pending_deliveries", `endpoint="${ep.id}"`) === undefined && text;
      }, 20_000, "the backlog drained");
      expect(count(after, "delivered")).toBeGreaterThanOrEqual(count(before, "delivered") + 2);
      expect(timed(after, "delivered")).toBeGreaterThanOrEqual(timed(before, "delivered") + 2);
      // The gave-up endpoint's first attempt counts as failed, its last as gave_up.
      expect(count(after, "failed")).toBeGreaterThanOrEqual(count(before, "failed") + 2);
      expect(count(after, "gone")).toBeGreaterThanOrEqual(count(before, "gone") + 1);
      expect(count(after, "gave_up")).toBeGreaterThanOrEqual(count(before, "gave_up") + 1);
      for (const outcome of ["failed", "gone", "gave_up"]) expect([outcome, timed(after, outcome) >= count(after, outcome)]).toEqual([outcome, true]);
      // A gauge only for endpoints with pending deliveries: the one failing has its retry pending, the one given up none.
      expect(sample(after, "webhook_pending_deliveries", `endpoint="${failing.id}"`)).toBe(1);
      expect(sample(after, "webhook_pending_deliveries", `endpoint="${gaveUp.id}"`)).toBeUndefined();
      await db("webhook_deliveries").whereIn("endpoint_id", [failing.id, gone.id]).delete();
    });

    it("records a batch of attempts in one statement: each delivery still held, each endpoint once for all its outcomes", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "batched");
      const token = randomUUID();
      // Deliveries as a worker holds them (leased for a minute: the service's own worker leaves them alone).
      const held = async (n: number, leaseToken = token) =>
        (
          await db.raw(
            `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, aggregate, lease_until, lease_token)
             SELECT ?, gen_random_uuid(), g, 'p' || g, now() + interval '1 minute', ? FROM generate_series(1, ?) g RETURNING id`,
            [ep.id, leaseToken, n],
          )
        ).rows.map((r: { id: string }) => r.id) as string[];
      const failed: AttemptOutcome = { kind: "failed", retryInMs: 5_000, disableIfFailingSinceMs: 5 * 24 * 3600_000 };
      const startedAt = new Date(Date.now() - 20);
      const row = (id: string) => db("webhook_deliveries").where({ id }).first();
      const endpointRow = () => db("webhook_endpoints").where({ id: ep.id }).first();

      // Failures alone start the failing streak.
      const [a, b] = await held(2);
      await recordAttempts(db, [
        { id: a, token, startedAt, statusCode: 500, durationMs: 12, outcome: failed },
        { id: b, token, startedAt, durationMs: 5, error: "connect ECONNREFUSED", outcome: failed },
      ]);
      expect(await row(a)).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500, last_duration_ms: 12, lease_token: null });
      expect(await row(b)).toMatchObject({ status: "pending", attempts: 1, last_status_code: null, last_error: "connect ECONNREFUSED" });
      const retry = await row(a);
      expect(retry.next_attempt_at.getTime() - retry.last_attempt_at.getTime()).toBe(5_000);
      // Each attempt is logged with its delivery: when it started, its answer or error, its duration, the retry it scheduled.
      expect(retry.attempt_log).toEqual([{ attempt: 1, at: expect.any(String), status_code: 500, duration_ms: 12, error: null, next_retry_at: expect.any(String) }]);
      expect(new Date(retry.attempt_log[0].at).getTime()).toBe(startedAt.getTime());
      expect(new Date(retry.attempt_log[0].next_retry_at).getTime()).toBe(retry.next_attempt_at.getTime());
      expect((await row(b)).attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: null, error: "connect ECONNREFUSED" })]);
      expect((await endpointRow()).failing_since).not.toBeNull();

      // A success in the batch ends the streak; an attempt whose lease went to another worker records nothing.
      const [c, d] = await held(2);
      const [stolen] = await held(1, randomUUID());
      await recordAttempts(db, [
        { id: c, token, startedAt, statusCode: 204, durationMs: 3, outcome: { kind: "delivered" } },
        { id: d, token, startedAt, statusCode: 500, durationMs: 3, outcome: failed },
        { id: stolen, token, startedAt, statusCode: 204, durationMs: 3, outcome: { kind: "delivered" } },
      ]);
      expect(await row(c)).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 204 });
      expect(await row(stolen)).toMatchObject({ status: "pending", attempts: 0, last_attempt_at: null });
      expect(await endpointRow()).toMatchObject({ failing_since: null, enabled: true });

      // Failures alone 5 days into the streak disable the endpoint; a 410 in a batch disables it at once.
      await db("webhook_endpoints").where({ id: ep.id }).update({ failing_since: db.raw("now() - interval '5 days 1 minute'") });
      const [e, f] = await held(2);
      await recordAttempts(db, [
        { id: e, token, startedAt, statusCode: 500, durationMs: 3, outcome: failed },
        { id: f, token, startedAt, statusCode: 503, durationMs: 3, outcome: failed },
      ]);
      expect(await endpointRow()).toMatchObject({ enabled: false, disabled_reason: "failing" });
      await db("webhook_endpoints").where({ id: ep.id }).update({ enabled: true, disabled_reason: null, failing_since: null });
      const [g, h] = await held(2);
      await recordAttempts(db, [
        { id: g, token, startedAt, statusCode: 204, durationMs: 3, outcome: { kind: "delivered" } },
        { id: h, token, startedAt, statusCode: 410, durationMs: 3, outcome: { kind: "gone" } },
      ]);
      expect(await endpointRow()).toMatchObject({ enabled: false, disabled_reason: "gone" });
      expect(await row(h)).toMatchObject({ status: "pending", attempts: 1, last_status_code: 410 });
      await db("webhook_deliveries").where({ endpoint_id: ep.id }).delete();
    });

    it("commits a round without waiting for its WAL flush only when it wrote no endpoint row (a crash then costs at most a redelivery)", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "flushed");
      const token = randomUUID();
      const [a, b] = (
        await db.raw(
          `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, aggregate, lease_until, lease_token)
           SELECT ?, gen_random_uuid(), g, 'p' || g, now() + interval '1 minute', ? FROM generate_series(1, 2) g RETURNING id`,
          [ep.id, token],
        )
      ).rows.map((r: { id: string }) => r.id) as string[];
      const startedAt = new Date();
      /** synchronous_commit as a round leaves it for its commit (limit 0: it claims nothing of the other tests'). */
      const commitMode = (id: string, outcome: AttemptOutcome, statusCode: number) =>
        db.transaction(async (tx) => {
          await recordAndClaim(tx, [{ id, token, startedAt, statusCode, durationMs: 3, outcome }], { limit: 0, perEndpoint: PER_ENDPOINT, leaseMs: 60_000, token });
          return (await tx.raw("SELECT current_setting('synchronous_commit') AS mode")).rows[0].mode;
        });
      // A success of a healthy endpoint: a lost commit only sends it again.
      expect(await commitMode(a, { kind: "delivered" }, 204)).toBe("off");
      // A 410 disables the endpoint: that commit is flushed.
      expect(await commitMode(b, { kind: "gone" }, 410)).toBe("on");
      expect(await db("webhook_endpoints").where({ id: ep.id }).first()).toMatchObject({ enabled: false });
      await db("webhook_deliveries").where({ endpoint_id: ep.id }).delete();
    });

    it("sends again (the same webhook-id) what a killed worker held, once its lease has run out", async () => {
      const acc = randomUUID();
      const ep = await endpoint(acc, "orphaned");
      await db("webhook_endpoints").where({ id: ep.id }).update({ enabled: false });
      await queue(acc, [randomUUID()], 1);
      // What a worker killed with the delivery in hand leaves: the row leased (for 2 s here) and never recorded.
      const [orphan] = await db.raw(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_seq, aggregate, lease_until, lease_token)
         SELECT ?, id, seq, 'sku', now() + interval '2 seconds', gen_random_uuid() FROM events WHERE account_id = ? RETURNING event_id, lease_until`,
        [ep.id, acc],
      ).then((r: { rows: { event_id: string; lease_until: Date }[] }) => r.rows);
      await db("webhook_endpoints").where({ id: ep.id }).update({ enabled: true });
      await eventually(async () => deliveredTo("orphaned").length === 1, 20_000, "the orphaned delivery sent after its lease");
      expect(deliveredTo("orphaned")[0].webhookId).toBe(orphan.event_id);
      // Recorded after the lease ran out (the receiver counts an attempt before the worker records it).
      const recorded = await eventually(async () => {
        const row = await db("webhook_deliveries").where({ endpoint_id: ep.id }).first();
        return row.status === "delivered" && row;
      }, 20_000, "the attempt recorded");
      expect(recorded.last_attempt_at.getTime()).toBeGreaterThanOrEqual(orphan.lease_until.getTime());
    });
  });
});
