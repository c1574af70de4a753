import pg from "pg";
import { eventually } from "@analytics/testing";
import { client, E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * CONTRACT "Retries" on the whole platform: 50 requests at once with one Idempotency-Key write
 * once and queue once, exactly as one request without a key does.
 */
describe("Idempotency-Key on the platform (real Postgres and JetStream)", () => {
  const platform = platformForFile();
  const batch = [1, 2, 3].map((i) => ({ key: `K${i}`, sku: `K${i}`, season: "AW26", productName: `P${i}` }));

  it("does 50 concurrent requests with one key once: one write, one set of queue entries", async () => {
    const keyed = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Keyed");
    const control = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Control");
    const send = () =>
      fetch(`${platform.baseUrl}/v2/api/products/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${keyed.token}`, "content-type": "application/json", "idempotency-key": "batch-2026-11-27-001" },
        body: JSON.stringify(batch),
      }).then(async (res) => ({ status: res.status, replayed: res.headers.get("idempotent-replayed"), body: await res.text() }));
    const answers = await Promise.all(Array.from({ length: 50 }, send));
    const ran = answers.filter((a) => a.status < 300 && a.replayed === null);
    expect(ran).toHaveLength(1);
    const odd = answers.filter((a) => a !== ran[0] && !(a.status === 409 || (a.replayed === "true" && a.status === ran[0].status && a.body === ran[0].body)));
    expect(odd.map((a) => `${a.status} ${a.replayed} ${a.body.slice(0, 200)}`)).toEqual([]);
    // A retry after all of them: the first answer again.
    const retry = await send();
    expect([retry.status, retry.replayed, retry.body]).toEqual([ran[0].status, "true", ran[0].body]);

    // The same batch once, without a key, by another account: what one write makes.
    expect((await control.api("POST", "/v2/api/products/batch", batch)).status).toBeLessThan(300);
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      // One write: as many catalogue outbox rows (messages) as the one request without a key.
      const outbox = async (accountId: string) => Number((await db.query("SELECT count(*) FROM catalogue.outbox WHERE account_id = $1", [accountId])).rows[0].count);
      expect(await outbox(keyed.accountID)).toBe(await outbox(control.accountID));
      // Once the events service has taken in every message of both accounts (its inbox rows are
      // written in the transaction that queues their entries), both queues are complete: as many.
      const ids = (await db.query("SELECT id FROM catalogue.outbox WHERE account_id = ANY($1)", [[keyed.accountID, control.accountID]])).rows.map((r) => r.id as string);
      await eventually(
        async () => Number((await db.query("SELECT count(DISTINCT message_id) FROM events.inbox WHERE message_id = ANY($1)", [ids])).rows[0].count) === ids.length,
        60_000,
        "the events service took in both accounts' messages",
      );
      const queue = async (account: typeof keyed) => Number((await account.api("GET", "/v2/api/events?pageSize=1")).headers.get("x-total-count"));
      expect(await queue(control)).toBe(batch.length);
      expect(await queue(keyed)).toBe(batch.length);
    } finally {
      await db.end();
    }
  });
  it("never keeps a webhook's signing secret: a replay of the creation or a rotation leaves it out and says so, and the table never holds it", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Secrets");
    const keyed = (key: string) => ({ "idempotency-key": key });
    const created = await acme.api("POST", "/v2/api/webhooks", { url: "https://hooks.example.com/erp" }, keyed("hook-1"));
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.headers.get("idempotent-redacted")).toBeNull();
    const { secret, ...endpoint } = created.body;
    const replay = await acme.api("POST", "/v2/api/webhooks", { url: "https://hooks.example.com/erp" }, keyed("hook-1"));
    expect([replay.status, replay.headers.get("idempotent-replayed"), replay.headers.get("idempotent-redacted"), replay.body]).toEqual([201, "true", "secret", endpoint]);
    const rotated = await acme.api("POST", `/v2/api/webhooks/${endpoint.id}/rotate-secret`, undefined, keyed("rotate-1"));
    expect(rotated.body.secret).toMatch(/^whsec_/);
    // After the endpoint is deleted too, the rotation's replay shows no secret.
    expect((await acme.api("DELETE", `/v2/api/webhooks/${endpoint.id}`)).status).toBe(200);
    const rotatedAgain = await acme.api("POST", `/v2/api/webhooks/${endpoint.id}/rotate-secret`, undefined, keyed("rotate-1"));
    expect([rotatedAgain.status, rotatedAgain.headers.get("idempotent-redacted"), rotatedAgain.body.secret, rotatedAgain.body.id]).toEqual([200, "secret", undefined, endpoint.id]);
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      const kept = (await db.query("SELECT body FROM gateway.idempotency_keys WHERE account_id = $1", [acme.accountID])).rows.map((r) => r.body as string);
      expect(kept).toHaveLength(2);
      for (const body of kept) {
        expect(body).toContain(endpoint.id);
        expect(body).not.toContain("whsec_");
      }
      expect(kept.join()).not.toContain(secret.slice("whsec_".length));
      expect(kept.join()).not.toContain(rotated.body.secret.slice("whsec_".length));
    } finally {
      await db.end();
    }
  });

  it("never shows one API key's kept answer to another key of the account: the same request under the key is a 422", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Two keys");
    const second = (await client(platform.baseUrl, E2E_ADMIN_TOKEN)("POST", `/admin/v1/accounts/${acme.accountID}/keys`, { name: "second" })).body;
    const token = (await client(platform.baseUrl)("POST", "/v2/api/auth", { accountID: acme.accountID, apiKey: second.apiKey })).body.accessToken;
    const other = client(platform.baseUrl, token);
    const order = [{ externalPONo: "PO-KEYED", items: [] }];
    const headers = { "idempotency-key": "po-1" };
    const first = await acme.api("POST", "/v2/api/purchaseorders", order, headers);
    expect(first.status).toBe(201);
    // A key is the account's (done at most once per account and key), and purchase orders are per
    // API key: the second key's same request is another request under the key, not a replay.
    const theirs = await other("POST", "/v2/api/purchaseorders", order, headers);
    expect([theirs.status, theirs.headers.get("idempotent-replayed")]).toEqual([422, null]);
    expect(JSON.stringify(theirs.body)).not.toContain(first.body[0].uuid);
    // The first key's retry replays its own answer.
    expect((await acme.api("POST", "/v2/api/purchaseorders", order, headers)).headers.get("idempotent-replayed")).toBe("true");
  });
});
