import { randomUUID } from "node:crypto";
import { topics } from "@analytics/contracts";
import { planningUnderTest, settings, transaction } from "./fixtures";

/**
 * Planning's sales replica (CONTRACT "Sales actuals"): net units per item key, channel, warehouse
 * and day, from the orders service's transaction messages alone.
 */
describe("sales replica: net units sold per SKU, channel, warehouse and day", () => {
  const p = planningUnderTest();

  /** The account's daily sums (sales_daily), as plain rows. */
  const daily = async (accountId: string) =>
    (
      await p.db.raw(
        `SELECT key, channel, external_warehouse_id AS warehouse, to_char(day, 'YYYY-MM-DD') AS day, units::int AS units
         FROM sales_daily WHERE account_id = ? ORDER BY key, channel, warehouse, day`,
        [accountId],
      )
    ).rows;
  const day = (key: string, channel: number, warehouse: string, date: string, units: number) => ({ key, channel, warehouse, day: date, units });

  it("sales minus returns, an item's own type winning over its transaction's", async () => {
    const acc = randomUUID();
    await p.apply([
      transaction(acc, randomUUID(), 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 5 }, { key: "KB", quantity: 2 }] }),
      // A return transaction: its items are returns, but for the one that says it is a sale.
      transaction(acc, randomUUID(), 1, { type: 2, createdDate: "2026-03-10T15:00:00Z", items: [{ key: "KA", quantity: 1 }, { key: "KB", quantity: 4, type: 1 }] }),
      // A sale transaction with a returned item.
      transaction(acc, randomUUID(), 1, { channel: 2, createdDate: "2026-03-11T09:00:00Z", items: [{ key: "KA", quantity: 3 }, { key: "KA", quantity: 1, type: 2, externalItemId: "r" }] }),
    ]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-10", 4), day("KA", 2, "", "2026-03-11", 2), day("KB", 1, "", "2026-03-10", 6)]);
  });

  it("units shipped count under their warehouse, the rest under none", async () => {
    const acc = randomUUID();
    await p.apply([
      transaction(acc, randomUUID(), 1, {
        createdDate: "2026-03-10T12:00:00Z",
        items: [{ key: "KA", quantity: 6, shipments: [{ quantity: 2, warehouse: "WN" }, { quantity: 1, warehouse: "WS" }, { quantity: 1, warehouse: "WN" }] }],
      }),
    ]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-10", 2), day("KA", 1, "WN", "2026-03-10", 3), day("KA", 1, "WS", "2026-03-10", 1)]);
  });

  it("a cancelled transaction does not count, and an update cancelling one takes its units away", async () => {
    const acc = randomUUID();
    const t = randomUUID();
    await p.apply([
      transaction(acc, randomUUID(), 1, { createdDate: "2026-03-10T12:00:00Z", cancelledDate: "2026-03-10T13:00:00Z", items: [{ key: "KA", quantity: 5 }] }),
      transaction(acc, t, 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 2 }] }),
    ]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-10", 2)]);
    await p.apply([transaction(acc, t, 2, { createdDate: "2026-03-10T12:00:00Z", cancelledDate: "2026-03-12T08:00:00Z", items: [{ key: "KA", quantity: 2 }] })]);
    expect(await daily(acc)).toEqual([]);
  });

  it("a replaced transaction corrects the figures once; a redelivered or older message changes nothing", async () => {
    const acc = randomUUID();
    const t = randomUUID();
    const other = transaction(acc, randomUUID(), 1, { createdDate: "2026-03-10T08:00:00Z", items: [{ key: "KA", quantity: 10 }] });
    const v1 = transaction(acc, t, 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 5 }, { key: "KB", quantity: 1 }] });
    // The replace: KA 5 -> 3, KB removed, KC added, moved to the next day.
    const v2 = transaction(acc, t, 2, { createdDate: "2026-03-11T12:00:00Z", items: [{ key: "KA", quantity: 3 }, { key: "KC", quantity: 7, externalItemId: "c" }] });
    const corrected = [day("KA", 1, "", "2026-03-10", 10), day("KA", 1, "", "2026-03-11", 3), day("KC", 1, "", "2026-03-11", 7)];
    await p.apply([other, v1]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-10", 15), day("KB", 1, "", "2026-03-10", 1)]);
    await p.apply([v2]);
    expect(await daily(acc)).toEqual(corrected);
    // The same update again (a redelivery under a new message id), and the older version late.
    await p.apply([{ ...v2, id: randomUUID() }]);
    await p.apply([{ ...v1, id: randomUUID() }]);
    expect(await daily(acc)).toEqual(corrected);
  });

  it("out of order in one batch: the newest version wins whatever the order", async () => {
    const acc = randomUUID();
    const t = randomUUID();
    await p.apply([
      transaction(acc, t, 3, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 3 }] }),
      transaction(acc, t, 1, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 1 }] }),
      transaction(acc, t, 2, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 2 }] }),
    ]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-10", 3)]);
  });

  it("the day is the createdDate's calendar day in the account's timezone, also after the timezone changes", async () => {
    const acc = randomUUID();
    // 23:30 UTC on 9 March is 00:30 on 10 March in Stockholm.
    await p.apply([transaction(acc, randomUUID(), 1, { createdDate: "2026-03-09T23:30:00Z", items: [{ key: "KA", quantity: 1 }] })]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-09", 1)]);
    await p.apply([settings(acc, 1, "Europe/Stockholm")]);
    expect(await daily(acc)).toEqual([day("KA", 1, "", "2026-03-10", 1)]);
  });

  it("the account's salesPlanGrowth is kept from its settings message (a newer version only)", async () => {
    const acc = randomUUID();
    const growth = async () => (await p.db("accounts").where({ account_id: acc }).first("sales_plan_growth"))?.sales_plan_growth;
    await p.apply([settings(acc, 2, "UTC", "0.15")]);
    expect(await growth()).toBe("0.15");
    await p.apply([settings(acc, 1, "UTC", "0.5")]);
    expect(await growth()).toBe("0.15");
  });

  it("backfilled transactions (the orders service re-announcing what it stores) are applied by version like the others", async () => {
    const acc = randomUUID();
    const [known, forgotten] = [randomUUID(), randomUUID()];
    const backfilled = (m: ReturnType<typeof transaction>) => ({ ...m, id: randomUUID(), subject: topics.ordersTransactionBackfilled.subject });
    await p.apply([transaction(acc, known, 2, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 2 }] })]);
    const rows = [day("KA", 1, "", "2026-03-10", 2), day("KB", 1, "", "2026-03-11", 3)];
    await p.apply([
      // One the replica has (the same version: nothing changes), one it never got.
      backfilled(transaction(acc, known, 2, { createdDate: "2026-03-10T12:00:00Z", items: [{ key: "KA", quantity: 2 }] })),
      backfilled(transaction(acc, forgotten, 1, { createdDate: "2026-03-11T12:00:00Z", items: [{ key: "KB", quantity: 3 }] })),
    ]);
    expect(await daily(acc)).toEqual(rows);
    // A backfill that arrives after a newer update changes nothing either.
    await p.apply([transaction(acc, forgotten, 2, { createdDate: "2026-03-11T12:00:00Z", items: [{ key: "KB", quantity: 1 }] })]);
    await p.apply([backfilled(transaction(acc, forgotten, 1, { createdDate: "2026-03-11T12:00:00Z", items: [{ key: "KB", quantity: 3 }] }))]);
    expect(await daily(acc)).toEqual([rows[0], day("KB", 1, "", "2026-03-11", 1)]);
  });
});
