import { randomUUID } from "node:crypto";
import { planningUnderTest } from "./fixtures";

/**
 * UpsertSalesPlans as the planning service answers it to any caller: its own checks (the gateway
 * checks the same first), one result per plan in request order, nothing written by a bad item.
 */
describe("planning stores the account's sales plans", () => {
  const p = planningUnderTest();
  const plan = (key: string, skuId: string, channel: number, month: string, volume?: string) => ({ key, skuFound: true, skuId, channel, month, volume: volume === undefined ? undefined : { value: volume } });
  const upsert = async (accountId: string, plans: ReturnType<typeof plan>[]) =>
    (await p.client.upsertSalesPlans({ plans }, p.as(accountId))).results.map((r) => [r.reference, r.statusCode, r.message]);
  const stored = async (accountId: string) =>
    (await p.db("sales_plans").where({ account_id: accountId }).orderBy(["channel", "month"]).select("channel", p.db.raw("to_char(month, 'YYYY-MM') AS month"), p.db.raw("volume::text AS volume"))).map(
      (r: { channel: number; month: string; volume: string | null }) => `${r.channel}/${r.month}=${r.volume}`,
    );

  it("checks channel, month and volume itself, answers 404 for an unresolved SKU and 409 for a plan sent twice", async () => {
    const acc = randomUUID();
    const sku = randomUUID();
    expect(
      await upsert(acc, [
        plan("K", sku, 3, "2026-09", "1"),
        plan("K", sku, 1, "2026-9", "1"),
        plan("K", sku, 1, "2026-09", "-1"),
        plan("K", sku, 1, "2026-09", "abc"),
        { ...plan("NOPE", "", 1, "2026-09", "1"), skuFound: false },
        plan("K", sku, 1, "2026-09", "2.50"),
        plan("K", sku, 1, "2026-09", "3"),
      ]),
    ).toEqual([
      ["K", 400, expect.stringContaining("channel")],
      ["K", 400, expect.stringContaining("month")],
      ["K", 400, expect.stringContaining("volume")],
      ["K", 400, expect.stringContaining("volume")],
      ["NOPE", 404, expect.stringContaining("NOPE")],
      ["K", 201, "created"],
      ["K", 409, expect.stringContaining("more than once")],
    ]);
    expect(await stored(acc)).toEqual(["1/2026-09=2.50"]);
    // The same number written otherwise is unchanged; the plan of another account is its own.
    expect(await upsert(acc, [plan("K", sku, 1, "2026-09", "2.5")])).toEqual([["K", 200, "unchanged"]]);
    const other = randomUUID();
    expect(await upsert(other, [plan("K", sku, 1, "2026-09", "7")])).toEqual([["K", 201, "created"]]);
    expect(await stored(acc)).toEqual(["1/2026-09=2.50"]);
  });
});
