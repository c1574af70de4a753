const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

import { busBacklog, client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, PLATFORM_HOOK_TIMEOUT_MS, signUp, startOnTestServices, startPlatform, type Platform, type PlatformOnTestServices } from "./harness";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { eventually, freezableProxy, startWebhookReceiver, testNatsUrl, whileProgressing, type FreezableProxy, type WebhookReceiver } from "@analytics/testing";

/**
 * Webhooks through the whole platform, proved by an independent verifier: a local receiver checks
 * every delivery with the standardwebhooks npm package (the specification's reference library,
 * not our code) and counts. Every queue entry is delivered, in queue order per product, through a
 * receiver answering 500 for a while, a SIGKILL of the platform mid-delivery and a NATS outage.
 */
describe("webhooks over the platform (real Postgres, NATS, a kill -9, a NATS outage, a failing receiver)", () => {
  const settings = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_MS: "50", PUBLIC_BASE_URL: "https://api.example.com" };
  let platform: PlatformOnTestServices;
  let names: { database: string; stream: string; dataDir: string };
  let restarted: Platform | undefined;
  let receiver: WebhookReceiver;
  /** The restarted platform's way to NATS, frozen for the outage. */
  let natsProxy: FreezableProxy | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    platform = await startOnTestServices(settings, undefined, (n) => (names = n));
  }, PLATFORM_HOOK_TIMEOUT_MS);
  afterAll(async () => {
    natsProxy?.thaw();
    await restarted?.stop();
    await natsProxy?.close();
    await platform?.close();
    await receiver?.close();
  }, PLATFORM_HOOK_TIMEOUT_MS);

  const PRODUCTS = 20;
  const ROUNDS_BEFORE_KILL = 4;
  const ROUNDS_AFTER = 2;
  /** Entries whose first attempt is answered 500 (each once), retried after about 5 s. */
  const FAILING = 15;

  it("serves the endpoints over REST: secret shown once, 10 per account, others' invisible (404), bad input a 400 naming the field, all in the OpenAPI document", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Rest");
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    const created = await acme.api("POST", "/v2/api/webhooks", { url: "https://hooks.example.com/erp", eventTypes: ["update_sku"], description: "ERP" });
    expect(created).toMatchObject({ status: 201, body: { url: "https://hooks.example.com/erp", eventTypes: ["update_sku"], description: "ERP", enabled: true, disabledReason: null } });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const { id } = created.body;
    const read = await acme.api("GET", `/v2/api/webhooks/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    const list = await acme.api("GET", "/v2/api/webhooks");
    expect(list.body.map((e: { id: string; secret?: string }) => [e.id, e.secret])).toEqual([[id, undefined]]);
    // The list's weak tag is its answer's hash: a 304 while it is current, another tag once an endpoint changed.
    const listTag = list.headers.get("etag")!;
    expect(listTag).toMatch(/^W\/"[^"]+"$/);
    expect((await acme.api("GET", "/v2/api/webhooks", undefined, { "if-none-match": listTag })).status).toBe(304);
    const put = await acme.api("PUT", `/v2/api/webhooks/${id}`, { url: "https://hooks.example.com/pim", eventTypes: [] });
    expect(put).toMatchObject({ status: 200, body: { url: "https://hooks.example.com/pim", eventTypes: [] } });
    const changedList = await acme.api("GET", "/v2/api/webhooks", undefined, { "if-none-match": listTag });
    expect([changedList.status, changedList.headers.get("etag")]).toEqual([200, expect.not.stringMatching(listTag)]);
    const rotated = await acme.api("POST", `/v2/api/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const deliveries = await acme.api("GET", `/v2/api/webhooks/${id}/deliveries`);
    expect(deliveries).toMatchObject({ status: 200, body: [] });
    expect(deliveries.headers.get("x-total-count")).toBe("0");

    for (const [method, path, body] of [
      ["GET", `/v2/api/webhooks/${id}`],
      ["PUT", `/v2/api/webhooks/${id}`, { url: "https://x.example.com" }],
      ["POST", `/v2/api/webhooks/${id}/rotate-secret`],
      ["GET", `/v2/api/webhooks/${id}/deliveries`],
      ["POST", `/v2/api/webhooks/${id}/deliveries/${id}/retry`],
      ["DELETE", `/v2/api/webhooks/${id}`],
    ] as const) {
      expect([method, path, (await other.api(method, path, body)).status]).toEqual([method, path, 404]);
    }
    expect((await other.api("GET", "/v2/api/webhooks")).body).toEqual([]);

    const badType = await acme.api("POST", "/v2/api/webhooks", { url: "https://h.example.com", eventTypes: ["nope"] });
    expect(badType.status).toBe(400);
    expect(JSON.stringify(badType.body)).toContain("eventTypes");
    const badUrl = await acme.api("POST", "/v2/api/webhooks", { url: "not a url" });
    expect(badUrl.status).toBe(400);
    expect(JSON.stringify(badUrl.body)).toContain("url");

    for (let i = 1; i < 10; i++) expect((await acme.api("POST", "/v2/api/webhooks", { url: `https://h${i}.example.com` })).status).toBe(201);
    const eleventh = await acme.api("POST", "/v2/api/webhooks", { url: "https://h11.example.com" });
    expect(eleventh.status).toBe(409);
    expect(await acme.api("DELETE", `/v2/api/webhooks/${id}`)).toMatchObject({ status: 200, body: { statusCode: 200, error: "", message: "deleted" } });
    expect((await acme.api("GET", `/v2/api/webhooks/${id}`)).status).toBe(404);

    const document = (await client(platform.baseUrl)("GET", "/v2/api/openapi.json")).body;
    expect(Object.keys(document.paths).filter((p) => p.startsWith("/v2/api/webhooks")).sort()).toEqual([
      "/v2/api/webhooks",
      "/v2/api/webhooks/{id}",
      "/v2/api/webhooks/{id}/deliveries",
      "/v2/api/webhooks/{id}/deliveries/{deliveryId}/retry",
      "/v2/api/webhooks/{id}/rotate-secret",
    ]);
    expect(Object.keys(document.components.schemas.WebhookAttempt.properties).sort()).toEqual(["attempt", "attemptedAt", "durationMs", "error", "nextRetryAt", "statusCode"]);
  });

  it("delivers each entry's data exactly as GET /events answers it, a product's image as the same capability URL", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Images");
    const created = await acme.api("POST", "/v2/api/webhooks", { url: receiver.url("images") });
    expect(created.status).toBe(201);
    receiver.trust("images", created.body.secret);
    expect((await acme.api("POST", "/v2/api/products", { key: "K1", productName: "With image" })).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/products/imageupload", { key: "K1", filename: "a.png", imageData: PNG })).status).toBe(200);
    type Entry = { id: string; eventType: string; createdAt: string; payload: { imageUrl?: string | null } };
    const entries = await eventually(async () => {
      const all = (await acme.api("GET", "/v2/api/events?pageSize=100")).body as Entry[];
      return all.some((e) => e.payload.imageUrl) ? all : undefined;
    }, 30_000, "the update_sku entry of the image");
    const delivered = await eventually(async () => {
      const byId = new Map(receiver.received.filter((d) => d.endpoint === "images" && d.status < 300).map((d) => [d.webhookId, d.body]));
      return entries.every((e) => byId.has(e.id)) ? byId : undefined;
    }, 60_000, "every entry delivered");
    for (const entry of entries) expect(delivered.get(entry.id)).toEqual({ id: entry.id, type: entry.eventType, timestamp: entry.createdAt, data: entry });
    const withImage = entries.find((e) => e.payload.imageUrl)!;
    expect(withImage.payload.imageUrl).toMatch(/^https:\/\/api\.example\.com\/v2\/api\/images\/[0-9a-f-]{36}\/[0-9a-f]{64}\/[\w-]+$/);
  }, 120_000);

  it("pushes import.finished once per finished import (products and transactions, completed, with errors, failed), data as GET /imports/{id} answers it, also when the bus delivers its message again", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Imports");
    const created = await acme.api("POST", "/v2/api/webhooks", { url: receiver.url("imports"), eventTypes: ["import.finished"] });
    expect(created.status).toBe(201);
    receiver.trust("imports", created.body.secret);
    const skusOnly = await acme.api("POST", "/v2/api/webhooks", { url: receiver.url("imports-skus-only"), eventTypes: ["update_sku"] });
    receiver.trust("imports-skus-only", skusOnly.body.secret);
    const upload = async (resource: string, body: string) => {
      const res = await fetch(`${platform.baseUrl}/v2/api/imports?resource=${resource}`, { method: "POST", headers: { authorization: `Bearer ${acme.token}`, "content-type": "application/x-ndjson" }, body });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    };
    const transaction = { externalTransactionID: "T1", type: 1, channel: 1, currencyCode: "EUR", createdDate: "2026-11-01T10:00:00Z", items: [{ externalItemID: "1", key: "K1", quantity: 1, moneyItemTotalNet: 10, moneyItemTotalVat: 2.5 }] };
    const jobs = [
      await upload("products", '{"key":"I1","sku":"I1"}\n{"key":"I2","sku":"I2"}\n'),
      await upload("transactions", `${JSON.stringify(transaction)}\n{"externalTransactionID":"T2","type":9}\n`),
      await upload("products", '{"key":"I3"}\nnot JSON\n'),
    ];
    type Job = { id: string; status: string };
    const answered = await eventually(async () => {
      const all = await Promise.all(jobs.map(async (id) => (await acme.api<Job>("GET", `/v2/api/imports/${id}`)).body));
      return all.every((j) => !["queued", "running"].includes(j.status)) && all;
    }, 30_000, "every job finished");
    expect(answered.map((j) => j.status)).toEqual(["completed", "completed_with_errors", "failed"]);
    const pushed = () => receiver.received.filter((d) => d.endpoint === "imports" && d.status < 300);
    await eventually(async () => pushed().length === jobs.length, 30_000, "each finished import pushed");
    expect(receiver.rejected).toEqual([]);
    // data: the job exactly as GET /imports/{id} answers it; one event (webhook-id) per job.
    expect(pushed().map((d) => d.body.data).sort((a, b) => jobs.indexOf(a.id) - jobs.indexOf(b.id))).toEqual(answered);
    expect(pushed().every((d) => d.body.type === "import.finished" && d.body.id === d.webhookId)).toBe(true);
    expect(new Set(pushed().map((d) => d.webhookId)).size).toBe(jobs.length);
    // Pushed only: the account's queue has no import.finished entry.
    expect((await acme.api<{ eventType: string }[]>("GET", "/v2/api/events?pageSize=100")).body.map((e) => e.eventType)).not.toContain("import.finished");

    // The bus delivers the messages again: the events service's consumers of import.finished are
    // deleted, made again at their next pull, and read the stream from its start.
    const nc = await connect({ servers: testNatsUrl() });
    try {
      const jsm = await jetstreamManager(nc);
      const consumers = async () => {
        const found = [];
        for await (const info of await jsm.consumers.list(names.stream)) if (info.name.startsWith("events-imports__")) found.push(info);
        return found;
      };
      const before = await consumers();
      expect(before.length).toBeGreaterThan(0);
      for (const info of before) await jsm.consumers.delete(names.stream, info.name);
      let last = "";
      await eventually(async () => {
        const again = await consumers();
        last = JSON.stringify(again.map((c) => ({ name: c.name, pending: c.num_pending, ackPending: c.num_ack_pending, delivered: c.delivered.consumer_seq })));
        return (
          again.length === before.length &&
          again.every((c) => c.num_pending === 0 && c.num_ack_pending === 0) &&
          again.reduce((n, c) => n + c.delivered.consumer_seq, 0) >= jobs.length
        );
      }, 90_000, () => `the import.finished messages delivered again and acknowledged (consumers: ${last})`);
    } finally {
      await nc.close();
    }
    // Acknowledged after the transaction that would have made a delivery: the log has one per job still.
    const log = await acme.api<unknown[]>("GET", `/v2/api/webhooks/${created.body.id}/deliveries?pageSize=100`);
    expect(log.headers.get("x-total-count")).toBe(String(jobs.length));
    expect(pushed()).toHaveLength(jobs.length);
    expect(receiver.received.filter((d) => d.endpoint === "imports-skus-only" && d.body.type === "import.finished")).toEqual([]);
  }, 120_000);

  it("delivers every entry, in order per product, through 500s, a kill of the worker mid-delivery and a NATS outage", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Hooked");
    const created = await acme.api("POST", "/v2/api/webhooks", { url: receiver.url("acme"), description: "ERP" });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    receiver.trust("acme", created.body.secret);
    // The first attempts of the first FAILING entries are answered 500 (each fails once: its retry,
    // about 5 s later, succeeds however slow the machine; a second failure would wait 5 min); then
    // each is answered after a short pause, until answers are held for the kill.
    let answered = 0;
    const failedOnce = new Set<string>();
    /** Deliveries whose answers are held from `holding` on: the kill lands while they are in flight. */
    let holding = false;
    const heldAtKill = new Set<string>();
    let releaseHeld!: () => void;
    const killHeld = new Promise<void>((resolve) => (releaseHeld = resolve));
    receiver.answer = (_endpoint, delivery) => {
      answered++;
      if (failedOnce.size < FAILING && !failedOnce.has(delivery.webhookId)) {
        failedOnce.add(delivery.webhookId);
        return 500;
      }
      if (holding) {
        heldAtKill.add(delivery.webhookId);
        return killHeld.then(() => 204);
      }
      return new Promise((resolve) => setTimeout(() => resolve(204), 20));
    };

    const round = (api: typeof acme.api, r: number) =>
      api("POST", "/v2/api/products/batch", Array.from({ length: PRODUCTS }, (_, p) => ({ key: `P${p}`, productName: `round ${r}` })));
    for (let r = 0; r < ROUNDS_BEFORE_KILL; r++) expect((await round(acme.api, r)).status).toBe(201);
    const received = () => receiver.received.filter((d) => d.endpoint === "acme");
    const delivered = () => new Set(received().filter((d) => d.status < 300).map((d) => d.webhookId)).size;
    await eventually(async () => answered > FAILING && delivered() >= 10, 60_000, () => `deliveries under way after the 500s (answered ${answered}, rejected ${JSON.stringify(receiver.rejected.slice(0, 2))}):\n${platform.logs.filter((l) => /webhook|error/i.test(l)).slice(-10).join("\n")}`);
    // The kill lands mid-delivery: the worker has a delivery out whose answer the receiver holds
    // (killed within the 15 s an attempt may take, so the worker has not given up on it).
    holding = true;
    await eventually(async () => heldAtKill.size > 0, 60_000, "a delivery held unanswered");
    const openAtKill = receiver.open.get("acme") ?? 0;
    const arrivedBeforeKill = receiver.arrived.length;
    await platform.kill();
    holding = false;
    releaseHeld();
    expect(openAtKill).toBeGreaterThan(0);
    const killedAt = delivered();

    natsProxy = await freezableProxy(testNatsUrl());
    restarted = await startPlatform({
      DATABASE_URL: platform.databaseUrl,
      NATS_URL: natsProxy.url,
      NATS_STREAM: names.stream,
      NATS_SUBJECT_PREFIX: `${names.stream.toLowerCase()}.`,
      ADMIN_TOKEN,
      DATA_DIR: names.dataDir,
      ...settings,
    });
    const auth = await client(restarted.baseUrl)("POST", "/v2/api/auth", { accountID: acme.accountID, apiKey: acme.apiKey });
    const api = client(restarted.baseUrl, auth.body.accessToken);
    type Entry = { id: string; payload: { id: string; key: string; productName: string } };
    const entries = async () => (await api("GET", "/v2/api/events?pageSize=1000")).body as Entry[];
    const ofRound = async (r: number) => (await entries()).filter((e) => e.payload.productName === `round ${r}`);
    const deliveredIds = () => new Set(received().filter((d) => d.status < 300).map((d) => d.webhookId));

    // A NATS outage (the restarted platform reaches NATS through a proxy, frozen as a hung server or
    // a cut network would be): a round queued before it is delivered during it (the worker reads
    // only Postgres; the receiver holds that round's answers until NATS is frozen), a round written during
    // it is accepted into the outbox, and after it every entry still arrives.
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const beforeOutage = ROUNDS_BEFORE_KILL;
    // Only that round's answers wait for the freeze. An earlier round's attempt (a re-send after
    // the kill, a retry after its 500) held past the worker's 15 s attempt timeout would fail again
    // and wait 5 min (the retry schedule), holding its product's later entries behind it.
    receiver.answer = async (_endpoint, delivery) => {
      if (delivery.body.data.payload.productName === `round ${beforeOutage}`) await held;
      return 204;
    };
    expect((await round(api, beforeOutage)).status).toBe(201);
    await whileProgressing(async () => (await ofRound(beforeOutage)).length, (n) => n === PRODUCTS, 45_000, "the round before the outage queued");
    const queuedBefore = (await ofRound(beforeOutage)).map((e) => e.id);
    natsProxy.freeze();
    open();
    await whileProgressing(async () => queuedBefore.filter((id) => deliveredIds().has(id)).length, (n) => n === PRODUCTS, 45_000, "the round before the outage delivered while NATS is frozen");
    for (let r = beforeOutage + 1; r < ROUNDS_BEFORE_KILL + ROUNDS_AFTER; r++) expect((await round(api, r)).status).toBe(201);
    // The outage is real: what was written during it has not reached the queue.
    expect(await ofRound(beforeOutage + 1)).toEqual([]);
    natsProxy.thaw();

    // The queue is complete when every product's last write is in it and the bus is drained: a
    // message the killed platform held comes back after JetStream's ack wait, 20 s; the newer
    // writes of its product wait for it (held, docs/events.md "Every change, in order"), so the
    // entries stay one per write, in order.
    const last = ROUNDS_BEFORE_KILL + ROUNDS_AFTER - 1;
    await whileProgressing(async () => (await ofRound(last)).length, (n) => n === PRODUCTS, 45_000, "every product's last write queued");
    await whileProgressing(() => busBacklog(names.stream), (n) => n === 0, 45_000, "every message of the bus handled (the killed platform's too)");
    // Entries of the queue not delivered yet (the queue read again each time).
    const undelivered = async () => {
      const ids = new Set(received().filter((d) => d.status < 300).map((d) => d.webhookId));
      return (await entries()).filter((e) => !ids.has(e.id)).length;
    };
    await whileProgressing(undelivered, (n) => n === 0, 45_000, () => `every entry delivered (killed at ${killedAt}, delivered ${delivered()})`);
    const queue = await entries();
    const total = queue.length;
    // One entry per write, each product's in write order (docs/events.md "Every change, in order").
    const rounds = Array.from({ length: ROUNDS_BEFORE_KILL + ROUNDS_AFTER }, (_, r) => `round ${r}`);
    for (let p = 0; p < PRODUCTS; p++) expect({ key: `P${p}`, names: queue.filter((e) => e.payload.key === `P${p}`).map((e) => e.payload.productName) }).toEqual({ key: `P${p}`, names: rounds });
    expect(total).toBe(PRODUCTS * rounds.length);

    expect(receiver.rejected).toEqual([]);
    expect(new Set(received().filter((d) => d.status < 300).map((d) => d.webhookId))).toEqual(new Set(queue.map((e) => e.id)));
    // Counted on arrival, not on answer: no product ever had two deliveries in flight at once, and
    // each product's arrivals are its queue entries in queue order (a webhook-id repeated, by a
    // retry after a 500 or a re-send after the kill, counts once).
    expect(receiver.overlaps.filter((o) => o.endpoint === "acme")).toEqual([]);
    const arrived = receiver.arrived.filter((a) => a.endpoint === "acme");
    const products = new Set(queue.map((e) => `update_sku:${e.payload.id}`));
    expect(new Set(arrived.map((a) => a.product))).toEqual(products);
    for (const product of products) {
      const ids = arrived.filter((a) => a.product === product).map((a) => a.webhookId);
      const inArrivalOrder = ids.filter((id, i) => id !== ids[i - 1]);
      expect({ product, inArrivalOrder }).toEqual({ product, inArrivalOrder: queue.filter((e) => `update_sku:${e.payload.id}` === product).map((e) => e.id) });
    }
    // Per product, no entry was sent before every earlier one of its product had succeeded.
    const position = new Map(queue.map((e, i) => [e.id, i]));
    const keyOf = new Map(queue.map((e) => [e.id, e.payload.key]));
    const succeeded = new Set<string>();
    for (const d of received()) {
      const earlier = queue.slice(0, position.get(d.webhookId)).filter((e) => keyOf.get(e.id) === keyOf.get(d.webhookId));
      expect({ sent: d.webhookId, waitingFor: earlier.filter((e) => !succeeded.has(e.id)).map((e) => e.id) }).toEqual({ sent: d.webhookId, waitingFor: [] });
      if (d.status < 300) succeeded.add(d.webhookId);
    }
    // Each delivery in flight at the kill was sent again after it, with its webhook-id (the killed
    // worker never learnt its outcome): at most a duplicate, no loss.
    const sentAfterKill = new Set(receiver.arrived.slice(arrivedBeforeKill).filter((a) => a.endpoint === "acme").map((a) => a.webhookId));
    expect([...heldAtKill].filter((id) => !sentAfterKill.has(id))).toEqual([]);
    // The 500s were retried.
    expect(received().filter((d) => d.status === 500)).toHaveLength(FAILING);
    const log = await api("GET", `/v2/api/webhooks/${created.body.id}/deliveries?pageSize=1000`);
    expect(log.status).toBe(200);
    expect(log.headers.get("x-total-count")).toBe(String(total));
    expect(log.body.every((d: { status: string }) => d.status === "delivered")).toBe(true);
    // Every recorded attempt is in the log: each delivery's last one a success, the 500s before some (one the kill cut off unrecorded is sent again).
    type Attempt = { attempt: number; attemptedAt: string; statusCode: number | null; durationMs: number | null };
    const attempts: Attempt[][] = log.body.map((d: { attempts: Attempt[] }) => d.attempts);
    expect(attempts.every((a) => a.length > 0 && a.at(-1)!.statusCode! < 300)).toBe(true);
    expect(attempts.flat().filter((a) => a.statusCode === 500).length).toBeGreaterThan(0);
  }, 600_000);
});
