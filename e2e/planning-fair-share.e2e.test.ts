import pg from "pg";
import { eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * Planning's fair share and cancellation through the real gateway and service (docs/planning.md
 * "Fair share and cancellation"), with one answer per account at a time. A statement is made slow
 * deterministically: a transaction of the test holds `planning.skus` locked, so every breakdown
 * waits in its DECLARE until the lock is released.
 */
describe("planning answers over HTTP: a share per account, cancelled when the client leaves", () => {
  // Tests' pools of 3: 2 answers at once in all, 1 per account (as the chart's default pool).
  const platform = platformForFile();
  let db: pg.Client;
  let lock: pg.Client;
  beforeAll(async () => {
    db = new pg.Client({ connectionString: platform.databaseUrl });
    lock = new pg.Client({ connectionString: platform.databaseUrl });
    // The platform's database is dropped when it closes, before these end.
    for (const c of [db, lock]) c.on("error", () => undefined);
    await Promise.all([db.connect(), lock.connect()]);
  });
  afterAll(async () => {
    await lock?.end();
    await db?.end();
  });
  const holdSkus = async () => {
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE planning.skus IN ACCESS EXCLUSIVE MODE");
  };
  /** The breakdown statements waiting for the lock. */
  const waiting = async () =>
    (await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND (query LIKE 'DECLARE breakdown%' OR query LIKE '/* breakdown slice */%') AND wait_event_type = 'Lock'`)).rows[0].n as number;
  const breakdown = (token: string, signal?: AbortSignal) =>
    fetch(`${platform.baseUrl}/v2/api/planning/breakdown?fromDate=2026-03-01&toDate=2026-03-31&groupBy=skus`, { headers: { authorization: `Bearer ${token}` }, signal });

  it("a client that leaves while its breakdown's statement runs ends the statement", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    await holdSkus();
    try {
      const client = new AbortController();
      breakdown(acme.token, client.signal).catch(() => undefined);
      await eventually(async () => (await waiting()) === 1, 20_000, "the statement waiting");
      client.abort();
      // Gone while the lock is still held: cancelled, not finished.
      await eventually(async () => (await waiting()) === 0, 10_000, "the statement gone");
    } finally {
      await lock.query("ROLLBACK");
    }
    // Its place was given back: the account's next breakdown runs.
    expect((await breakdown(acme.token)).status).toBe(200);
  });

  it("an account over its share gets a 429 with Retry-After, while another account's breakdown runs", async () => {
    const [heavy, other] = [await signUp(platform.baseUrl, ADMIN_TOKEN, "Heavy"), await signUp(platform.baseUrl, ADMIN_TOKEN, "Other")];
    await holdSkus();
    let answers: Promise<Response>[] = [];
    try {
      answers = [breakdown(heavy.token)];
      await eventually(async () => (await waiting()) === 1, 20_000, "the heavy account's statement waiting");
      const refused = await breakdown(heavy.token);
      expect([refused.status, refused.headers.get("retry-after"), ((await refused.json()) as { message: string }).message]).toEqual([
        429,
        "5",
        expect.stringContaining("planning answers running"),
      ]);
      answers.push(breakdown(other.token));
      await eventually(async () => (await waiting()) === 2, 20_000, "the other account's statement running beside it");
    } finally {
      await lock.query("ROLLBACK");
    }
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200]);
  });
});
