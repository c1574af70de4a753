import pino from "pino";
import type { OutboxRelay } from "@analytics/outbox";
import { crossingTransactions, databaseForFile } from "@analytics/testing";
import { commit } from "@analytics/rpc";

/** Issue 6: a deadlock or serialization failure is retried inside the service, not answered 500. */
describe("catalogue commit", () => {
  const database = databaseForFile();
  const db = database.openDb("catalogue");
  let kicks = 0;
  const ctx = () => ({ db, relay: { kick: () => void kicks++ } as unknown as OutboxRelay, logger: pino({ level: "silent" }) });
  beforeAll(async () => {
    await db.raw('CREATE SCHEMA IF NOT EXISTS "catalogue"');
    await db.raw("CREATE TABLE rows_under_test (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)");
    await db("rows_under_test").insert([{ id: 1 }, { id: 2 }]);
  });

  it("runs a deadlocked change again and commits both, waking the relay after each", async () => {
    const pair = crossingTransactions("rows_under_test", (work) => commit(ctx(), work));
    expect((await pair.settled).map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
    expect([...pair.attempts].sort()).toEqual([1, 2]);
    expect((await db("rows_under_test").orderBy("id")).map((r) => r.n)).toEqual([2, 2]);
    expect(kicks).toBe(2);
  });
});
