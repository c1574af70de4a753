import { spawnSync } from "node:child_process";
import pg from "pg";
import { eventually } from "@analytics/testing";
import { checkoutRoot, client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * Planning's later revision, its first step over HTTP (CONTRACT "Planning: the later revision"):
 * stored sales plans, the account's salesPlanGrowth, and sales reaching planning's replica from
 * the orders service's transaction messages.
 */
describe("sales plans, salesPlanGrowth and sales actuals over HTTP", () => {
  const platform = platformForFile();
  /** One query on the platform's database (every schema), on a connection of its own. */
  const sql = {
    async query(text: string, values: unknown[]) {
      const connection = new pg.Client({ connectionString: platform.databaseUrl });
      await connection.connect();
      try {
        return await connection.query(text, values);
      } finally {
        await connection.end();
      }
    },
  };

  const outcomes = (body: { reference: string; statusCode: number; message: string }[]) => body.map((r) => [r.reference, r.statusCode, r.message]);
  /** What planning stores of an account's plans: key/channel/month -> volume (null: removed). */
  const storedPlans = async (accountId: string) =>
    Object.fromEntries(
      (
        await sql.query(
          `SELECT s.key || '/' || p.channel || '/' || to_char(p.month, 'YYYY-MM') AS plan, p.volume::text AS volume
           FROM planning.sales_plans p JOIN catalogue.products s ON s.id = p.sku_id WHERE p.account_id = $1`,
          [accountId],
        )
      ).rows.map((r) => [r.plan, r.volume]),
    );

  it("POST /planning/sales-plans/batch: created, unchanged, updated, removed; unknown key 404; bad fields 400 naming them", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    expect((await acme.api("POST", "/v2/api/products/batch", [{ key: "KA" }, { key: "KB" }])).status).toBe(201);
    const url = "/v2/api/planning/sales-plans/batch";
    const first = await acme.api("POST", url, [
      { key: "KA", channel: 1, month: "2026-09", volume: 120 },
      { key: "KA", channel: 2, month: "2026-09", volume: 40.5 },
      { key: "NOPE", channel: 1, month: "2026-09", volume: 1 },
      { key: "KB", channel: 3, month: "2026-09", volume: 1 },
      { key: "KB", channel: 1, month: "2026-13", volume: 1 },
      { key: "KB", channel: 1, month: "2026-09", volume: -1 },
      { key: "KB", channel: 1, month: "2026-09" },
      { key: "KB", channel: 1, month: "2026-09", volume: "7" },
      { key: "KB", channel: 1, month: "2026-10", volume: 0 },
    ]);
    expect(first.status).toBe(200);
    expect(outcomes(first.body)).toEqual([
      ["KA", 201, "created"],
      ["KA", 201, "created"],
      ["NOPE", 404, expect.stringContaining("NOPE")],
      ["KB", 400, expect.stringContaining("channel")],
      ["KB", 400, expect.stringContaining("month")],
      ["KB", 400, expect.stringContaining("volume")],
      ["KB", 400, expect.stringContaining("volume")],
      ["KB", 400, expect.stringContaining("volume")],
      ["KB", 201, "created"],
    ]);
    expect(first.body.every((r: { referenceField: string }) => r.referenceField === "key")).toBe(true);
    expect(await storedPlans(acme.accountID)).toEqual({ "KA/1/2026-09": "120", "KA/2/2026-09": "40.5", "KB/1/2026-10": "0" });

    // The same plans again change nothing; another volume updates; null removes, once.
    const second = await acme.api("POST", url, [
      { key: "KA", channel: 1, month: "2026-09", volume: 120 },
      { key: "KA", channel: 2, month: "2026-09", volume: 41 },
      { key: "KB", channel: 1, month: "2026-10", volume: null },
      { key: "KB", channel: 1, month: "2026-11", volume: null },
      { key: "KA", channel: 1, month: "2026-09", volume: 5 },
    ]);
    expect(outcomes(second.body)).toEqual([
      ["KA", 200, "unchanged"],
      ["KA", 200, "updated"],
      ["KB", 200, "removed"],
      ["KB", 200, "unchanged"],
      ["KA", 409, expect.stringContaining("more than once")],
    ]);
    expect(outcomes((await acme.api("POST", url, [{ key: "KB", channel: 1, month: "2026-10", volume: null }])).body)).toEqual([["KB", 200, "unchanged"]]);
    // A removed plan stays as a row without volume (updatedSince sees the removal).
    expect(await storedPlans(acme.accountID)).toEqual({ "KA/1/2026-09": "120", "KA/2/2026-09": "41", "KB/1/2026-10": null });

    // Another account's products are unknown here.
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect(outcomes((await other.api("POST", url, [{ key: "KA", channel: 1, month: "2026-09", volume: 1 }])).body)).toEqual([["KA", 404, expect.any(String)]]);

    // More than 1000 items, or none, is a 400 of the whole request.
    const tooMany = Array.from({ length: 1001 }, () => ({ key: "KA", channel: 1, month: "2026-09", volume: 1 }));
    expect((await acme.api("POST", url, tooMany)).status).toBe(400);
    expect((await acme.api("POST", url, [])).status).toBe(400);
  });

  it("the account setting salesPlanGrowth: default 0, > -1, carried to planning's replica", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const admin = client(platform.baseUrl, ADMIN_TOKEN);
    const settingsUrl = `/admin/v1/accounts/${acme.accountID}/settings`;
    expect((await admin("GET", settingsUrl)).body).toEqual({ customPriceFields: [], timezone: "UTC", salesPlanGrowth: 0, rateLimitPerSecond: 100, rateLimitBurst: 6000 });
    const put = await admin("PUT", settingsUrl, { timezone: "Europe/Stockholm", salesPlanGrowth: 0.125 });
    expect([put.status, put.body]).toEqual([200, { customPriceFields: [], timezone: "Europe/Stockholm", salesPlanGrowth: 0.125, rateLimitPerSecond: 100, rateLimitBurst: 6000 }]);
    expect((await admin("GET", settingsUrl)).body.salesPlanGrowth).toBe(0.125);
    for (const bad of [-1, -2, "0.1", null]) {
      const res = await admin("PUT", settingsUrl, { salesPlanGrowth: bad });
      expect([res.status, res.body.details?.[0]?.path]).toEqual([400, "salesPlanGrowth"]);
    }
    expect((await admin("GET", settingsUrl)).body.salesPlanGrowth).toBe(0.125);
    await eventually(
      async () => (await sql.query("SELECT sales_plan_growth::text AS g FROM planning.accounts WHERE account_id = $1", [acme.accountID])).rows[0]?.g === "0.125" || undefined,
      20_000,
      "salesPlanGrowth in planning's replica",
    );
  });

  it("transactions written through the orders service reach planning's sales, replaced and cancelled ones corrected", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const sales = async () =>
      (await sql.query("SELECT key, channel, to_char(day, 'YYYY-MM-DD') AS day, units::int AS units FROM planning.sales_daily WHERE account_id = $1 ORDER BY key, channel, day", [acme.accountID])).rows;
    const until = (expected: unknown[]) => eventually(async () => (JSON.stringify(await sales()) === JSON.stringify(expected) ? true : undefined), 20_000, `sales ${JSON.stringify(expected)}`);
    const sale = { externalTransactionID: "T-1", channel: 1, type: 1, createdDate: "2026-03-01T12:00:00Z", items: [{ externalItemID: "1", key: "KA", quantity: 4 }, { externalItemID: "2", key: "KA", quantity: 1, type: 2 }] };
    const created = await acme.api("POST", "/v2/api/transactions", [sale]);
    expect(created.status).toBe(201);
    await until([{ key: "KA", channel: 1, day: "2026-03-01", units: 3 }]);
    const id = created.body[0].id;
    expect((await acme.api("PUT", "/v2/api/transactions/", [{ ...sale, id, channel: 2, items: [{ externalItemID: "1", key: "KA", quantity: 6 }] }])).status).toBe(200);
    await until([{ key: "KA", channel: 2, day: "2026-03-01", units: 6 }]);
    expect((await acme.api("PUT", "/v2/api/transactions/", [{ ...sale, id, cancelledDate: "2026-03-02T00:00:00Z" }])).status).toBe(200);
    await until([]);

    // The drift check compares planning's transactions with the orders service's, by version.
    const drift = () => {
      const run = spawnSync(process.execPath, ["deploy/local/planning-drift.mjs", platform.databaseUrl], { cwd: checkoutRoot, encoding: "utf8" });
      return JSON.parse(run.stdout) as { transactions: { account_id: string; stale: number }[] };
    };
    expect(drift().transactions).toEqual([]);
    await sql.query("UPDATE planning.sales_transactions SET version = version - 1 WHERE account_id = $1", [acme.accountID]);
    expect(drift().transactions).toEqual([expect.objectContaining({ account_id: acme.accountID, missing: 0, stale: 1, extra: 0 })]);
  });
});
