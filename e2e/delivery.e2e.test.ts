import { databaseForFile, eventually, whileProgressing } from "@analytics/testing";
import { E2E_ADMIN_TOKEN as ADMIN_TOKEN, signUp, startPlatform, type Platform } from "./harness";

/**
 * Nothing lost: every committed change reaches the account's queue exactly once, also when the
 * single-process default (in-process bus) is killed or stopped between a write and its relay.
 */
describe("delivery across restarts (in-process bus)", () => {
  const database = databaseForFile();

  const env = () => ({ DATABASE_URL: database.url, NATS_URL: undefined, ADMIN_TOKEN });
  const products = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ key: `${prefix}-${i}`, sku: `${prefix}-${i}` }));

  async function queueTotal(platform: Platform, account: { accountID: string; apiKey: string }) {
    const auth = await fetch(`${platform.baseUrl}/v2/api/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ accountID: account.accountID, apiKey: account.apiKey }),
    }).then((r) => r.json() as Promise<{ accessToken: string }>);
    const res = await fetch(`${platform.baseUrl}/v2/api/events?pageSize=1&event_type=update_sku`, { headers: { authorization: `Bearer ${auth.accessToken}` } });
    return Number(res.headers.get("x-total-count"));
  }

  it("refuses a product too large to announce as that item's 400, and delivers the rest", async () => {
    const platform = await startPlatform(env());
    try {
      const account = await signUp(platform.baseUrl, ADMIN_TOKEN, "large");
      const huge = { key: "huge", externalAttributes: { blob: "x".repeat(1_200_000) } };
      const answer = await account.api("POST", "/v2/api/products/batch", [huge, { key: "small" }]);
      expect(answer.status).toBe(201);
      expect(answer.body.map((r: { statusCode: number }[]) => r[0].statusCode)).toEqual([400, 201]);
      expect(answer.body[0][0].message).toMatch(/too large/);
      await eventually(async () => (await queueTotal(platform, account)) === 1, 15_000, "the small product's entry");
      await eventually(async () => (await second_outboxPending(database.url)).rows[0].pending === 0, 15_000, "catalogue's outbox drained");
      expect(await queueTotal(platform, account)).toBe(1);
    } finally {
      await platform.stop();
    }
  }, 60_000);

  for (const how of ["kill", "stop"] as const) {
    it(`makes exactly one update_sku entry per product when the platform is ${how === "kill" ? "killed (SIGKILL)" : "stopped (SIGTERM)"} right after the writes`, async () => {
      const first = await startPlatform(env());
      const account = await signUp(first.baseUrl, ADMIN_TOKEN, `restart-${how}`);
      let created = 0;
      try {
        // Ten batches sent at once: the process dies while their outbox rows are being relayed.
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, b) => account.api("POST", "/v2/api/products/batch", products(`${how}${b}`, 102))),
        );
        for (const answer of answers) {
          expect(answer.status).toBe(201);
          created += answer.body.flat().filter((r: { statusCode: number }) => r.statusCode === 201).length;
        }
      } finally {
        await (how === "kill" ? first.kill() : first.stop());
      }
      expect(created).toBe(1020);
      const second = await startPlatform(env());
      try {
        // The backlog drains at the machine's pace: wait while it moves.
        await whileProgressing(() => queueTotal(second, account), (seen) => seen === created, 15_000, `${created} update_sku entries`);
        // Nothing more arrives: once the outbox is empty (the relay marks a row sent after the bus
        // has taken it, so the last entries may be in the queue a moment before), each change made
        // exactly one entry.
        await eventually(async () => (await second_outboxPending(database.url)).rows[0].pending === 0, 15_000, "catalogue's outbox drained");
        expect(await queueTotal(second, account)).toBe(created);
      } finally {
        await second.stop();
      }
    }, 300_000);
  }
});

/** Rows of catalogue's outbox not yet published (all must have left once the queue is complete). */
async function second_outboxPending(url: string) {
  const pg = await import("pg");
  const c = new pg.default.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query("SELECT count(*)::int AS pending FROM catalogue.outbox WHERE published_at IS NULL");
  } finally {
    await c.end();
  }
}
