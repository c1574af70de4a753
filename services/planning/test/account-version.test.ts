import { randomUUID } from "node:crypto";
import { refreshTimezoneNames } from "../src/repository";
import { planningUnderTest, settings, sku } from "./fixtures";

/**
 * GetAccountVersion: the version of an account's planning data, behind the gateway's weak ETag on
 * planning answers. It moves on with every replica batch and sales-plans write of that account,
 * and with nothing of another account's.
 */
describe("planning's account data version", () => {
  const p = planningUnderTest();
  const version = async (accountId: string) => (await p.client.getAccountVersion({}, p.as(accountId))).version;
  const plan = (skuId: string, volume: string) => ({ key: "K1", skuFound: true, skuId, channel: 1, month: "2026-09", volume: { value: volume } });

  it("is 0 before any data, and grows when a replica message of the account is applied, not another account's", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    expect(await version(a)).toBe(0n);
    await p.apply([sku(a, randomUUID(), 1, { key: "K1", season: "SS26" })]);
    const first = await version(a);
    expect(first).toBeGreaterThan(0n);
    await p.apply([sku(b, randomUUID(), 1, { key: "K1", season: "SS26" })]);
    expect(await version(a)).toBe(first);
    await p.apply([sku(a, randomUUID(), 1, { key: "K2", season: "SS26" })]);
    expect(await version(a)).toBeGreaterThan(first);
  });

  it("grows with a sales plan stored or changed, not with one sent as stored", async () => {
    const acc = randomUUID();
    const skuId = randomUUID();
    await p.client.upsertSalesPlans({ plans: [plan(skuId, "5")] }, p.as(acc));
    const first = await version(acc);
    expect(first).toBeGreaterThan(0n);
    await p.client.upsertSalesPlans({ plans: [plan(skuId, "5")] }, p.as(acc));
    expect(await version(acc)).toBe(first);
    await p.client.upsertSalesPlans({ plans: [plan(skuId, "6")] }, p.as(acc));
    expect(await version(acc)).toBeGreaterThan(first);
  });

  it("answers today in the account's timezone", async () => {
    const acc = randomUUID();
    await p.apply([settings(acc, 1, "Pacific/Kiritimati")]);
    const { today } = await p.client.getAccountVersion({}, p.as(acc));
    const expected = new Intl.DateTimeFormat("en-CA", { timeZone: "Pacific/Kiritimati" }).format(new Date());
    expect(today).toBe(expected);
  });

  it("answers today in UTC for a timezone Postgres does not know, and knows again zones the start-up refresh adds back", async () => {
    const unknown = randomUUID();
    await p.apply([settings(unknown, 1, "Mars/Olympus_Mons")]);
    const dayIn = (timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone }).format(new Date());
    expect((await p.client.getAccountVersion({}, p.as(unknown))).today).toBe(dayIn("UTC"));
    // Kiritimati (UTC+14) is a day ahead of UTC from 10:00 UTC, Pago Pago (UTC-11) a day behind
    // until 11:00 UTC: at any hour one of them tells a known zone from UTC.
    const zones = ["Pacific/Kiritimati", "Pacific/Pago_Pago"];
    const accounts = zones.map(() => randomUUID());
    await p.apply(zones.map((zone, i) => settings(accounts[i], 1, zone)));
    await p.db("timezone_names").whereIn("name", zones).delete();
    const today = async () => Promise.all(accounts.map(async (acc) => (await p.client.getAccountVersion({}, p.as(acc))).today));
    expect(await today()).toEqual([dayIn("UTC"), dayIn("UTC")]);
    await refreshTimezoneNames(p.db);
    expect(await today()).toEqual(zones.map(dayIn));
    // A name Postgres does not know (a zone dropped by a tzdata upgrade) goes at the next start:
    // left in the copy, it would reach AT TIME ZONE and fail every answer of its accounts.
    await p.db("timezone_names").insert({ name: "Mars/Olympus_Mons" });
    await refreshTimezoneNames(p.db);
    expect((await p.client.getAccountVersion({}, p.as(unknown))).today).toBe(dayIn("UTC"));
  });
});
