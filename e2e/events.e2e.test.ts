import { randomUUID } from "node:crypto";
import { topics } from "@analytics/contracts";
import { busMessage, eventually } from "@analytics/testing";
import { client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";
import { serviceNames } from "@analytics/contracts";


/** The whole platform on real Postgres and real NATS JetStream, driven over HTTP. */
describe("platform over HTTP: auth, admin, event queue, conventions", () => {
  const platform = platformForFile();

  // Published on the platform's stream as the catalogue service would.
  const skuChanged = async (accountId: string, key: string) => {
    const id = randomUUID();
    const [error] = await platform.bus.publish([
      busMessage(topics.catalogueSkuUpdated, accountId, `sku:${id}`, { accountId, skuId: id, version: 1n, product: { id, key, sku: key, status: 2 } }),
    ]);
    if (error) throw error;
  };

  async function queueOf(account: Awaited<ReturnType<typeof signUp>>, n: number) {
    return eventually(async () => {
      const res = await account.api("GET", "/v2/api/events?pageSize=1000");
      return res.body.length === n ? res.body : undefined;
    }, 15_000, `${n} events`);
  }

  it("is ready, with every dependency answering", async () => {
    const ready = await client(platform.baseUrl)("GET", "/readyz");
    expect(ready.status).toBe(200);
    const health = await client(platform.baseUrl)("GET", "/healthz");
    expect(health.body.checks).toEqual({ database: true, ...Object.fromEntries(serviceNames.map((name) => [name, true])) });
  });

  it("turns bus messages into the account's queue and pages it with X-Total-Count and Link", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const empty = await acme.api("GET", "/v2/api/events");
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    expect(empty.headers.get("x-total-count")).toBe("0");

    for (const key of ["a", "b", "c"]) await skuChanged(acme.accountID, key);
    const all = await queueOf(acme, 3);
    expect(all.map((e: any) => e.payload.key)).toEqual(["a", "b", "c"]);
    expect(all[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      accountId: acme.accountID,
      eventType: "update_sku",
      payload: expect.objectContaining({ key: "a", sku: "a", status: 2 }),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      completedAt: null,
      failedAt: null,
    });

    const first = await acme.api("GET", "/v2/api/events?pageSize=2&event_type=update_sku");
    expect(first.body.map((e: any) => e.payload.key)).toEqual(["a", "b"]);
    expect(first.headers.get("x-total-count")).toBe("3");
    expect(first.headers.get("link")).toBe(
      '</v2/api/events?pageSize=2&event_type=update_sku&page=2>; rel="next", </v2/api/events?pageSize=2&event_type=update_sku&page=1>; rel="first", </v2/api/events?pageSize=2&event_type=update_sku&page=2>; rel="last"',
    );
    const second = await acme.api("GET", "/v2/api/events?page=2&pageSize=2&event_type=update_sku");
    expect(second.body.map((e: any) => e.payload.key)).toEqual(["c"]);
    expect(second.headers.get("link")).toBe(
      '</v2/api/events?page=1&pageSize=2&event_type=update_sku>; rel="prev", </v2/api/events?page=1&pageSize=2&event_type=update_sku>; rel="first", </v2/api/events?page=2&pageSize=2&event_type=update_sku>; rel="last"',
    );
  });

  it("processes events once: PATCH, batch, 404, 409, status filter, payload replace", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Once");
    for (const key of ["p1", "p2", "p3"]) await skuChanged(acme.accountID, key);
    const [e1, e2, e3] = await queueOf(acme, 3);

    const done = await acme.api("PATCH", "/v2/api/events", { id: e1.id, status: "completed" });
    expect(done).toMatchObject({ status: 200, body: { id: e1.id, updated: true } });
    const again = await acme.api("PATCH", "/v2/api/events", { id: e1.id, status: "failed" });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ statusCode: 409, error: "Conflict" });
    expect((await acme.api("PATCH", "/v2/api/events", { id: randomUUID(), status: "failed" })).status).toBe(404);

    const batch = await acme.api("PATCH", "/v2/api/events/batch", [
      { id: e2.id, status: "failed" },
      { id: e1.id, status: "completed" },
      { id: randomUUID(), status: "completed" },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.map((r: any) => r.updated)).toEqual([true, false, false]);

    const pending = await acme.api("GET", "/v2/api/events?status=pending");
    expect(pending.body.map((e: any) => e.id)).toEqual([e3.id]);
    const failed = await acme.api("GET", "/v2/api/events?status=failed");
    expect(failed.body[0]).toMatchObject({ id: e2.id, completedAt: null, failedAt: expect.any(String) });

    const replaced = await acme.api("PUT", `/v2/api/events/${e3.id}`, { payload: { key: "p3", note: "fixed" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id: e3.id, payload: { key: "p3", note: "fixed" } });
    expect((await acme.api("PUT", `/v2/api/events/${e3.id}`, { payload: null })).status).toBe(400);
    expect((await acme.api("PUT", `/v2/api/events/${e3.id}`, {})).status).toBe(400);
    expect((await acme.api("PUT", `/v2/api/events/${e3.id}`, { payload: 1, extra: true })).status).toBe(400);
    expect((await acme.api("PUT", `/v2/api/events/${randomUUID()}`, { payload: 1 })).status).toBe(404);
    // What jsonb cannot hold is a 400 naming where, never a value silently changed (1e309 would
    // be stored as null). JSON text with the literal number: JSON.stringify cannot write it.
    const putText = async (text: string) => {
      const res = await fetch(`${platform.baseUrl}/v2/api/events/${e3.id}`, { method: "PUT", headers: { "content-type": "application/json", authorization: `Bearer ${acme.token}` }, body: text });
      return { status: res.status, message: ((await res.json()) as { message: string }).message };
    };
    expect(await putText('{"payload":{"a":{"b":["c",1e309]}}}')).toEqual({ status: 400, message: expect.stringMatching(/payload\.a\.b\[1\]: must be a finite number/) });
    expect(await putText('{"payload":{"k\\u0000":1}}')).toMatchObject({ status: 400 });
    expect((await acme.api("GET", `/v2/api/events?status=pending`)).body[0].payload).toEqual({ key: "p3", note: "fixed" });
  });

  it("lets exactly one of concurrent PATCHes through the gateway win", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Race");
    await skuChanged(acme.accountID, "race");
    const [event] = await queueOf(acme, 1);
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, n) => acme.api("PATCH", "/v2/api/events", { id: event.id, status: n % 2 ? "completed" : "failed" })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 409)).toHaveLength(9);
  });

  it("keeps accounts apart: another account's event is a 404", async () => {
    const a = await signUp(platform.baseUrl, ADMIN_TOKEN, "A");
    const b = await signUp(platform.baseUrl, ADMIN_TOKEN, "B");
    await skuChanged(a.accountID, "mine");
    const [event] = await queueOf(a, 1);
    expect((await b.api("GET", "/v2/api/events")).body).toEqual([]);
    expect((await b.api("PATCH", "/v2/api/events", { id: event.id, status: "completed" })).status).toBe(404);
    expect((await b.api("PUT", `/v2/api/events/${event.id}`, { payload: 1 })).status).toBe(404);
    expect((await b.api("PATCH", "/v2/api/events/batch", [{ id: event.id, status: "completed" }])).body).toEqual([{ id: event.id, updated: false }]);
    expect((await a.api("GET", "/v2/api/events?status=pending")).body).toHaveLength(1);
  });

  it("stops a revoked key's token at once and answers conventions as GeneralResponse", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Revoked");
    const admin = client(platform.baseUrl, ADMIN_TOKEN);
    expect((await acme.api("GET", "/v2/api/events")).status).toBe(200);
    expect((await admin("DELETE", `/admin/v1/accounts/${acme.accountID}/keys/${acme.apiKeyId}`)).status).toBe(200);
    const after = await acme.api("GET", "/v2/api/events");
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ statusCode: 401, error: "Unauthorized", message: expect.any(String), code: "unauthenticated" });
    const anon = client(platform.baseUrl);
    expect((await anon("GET", "/v1/events")).status).toBe(404);
    expect((await anon("POST", "/v3/api/auth", {})).status).toBe(404);
    expect((await anon("GET", "/v2/api/openapi.json")).status).toBe(200);
  });
});
