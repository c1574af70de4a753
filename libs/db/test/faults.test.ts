import { Code } from "@connectrpc/connect";
import { toConnectError } from "@analytics/errors";
import { crossingTransactions, databaseForFile, eventually, freezableProxy } from "@analytics/testing";
import { copyRows, createDb, inTransaction, STALL_MS } from "../src";
import { failure, statusOf } from "./failures";

describe("database faults (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("faults");
  beforeAll(async () => {
    await db.raw('CREATE SCHEMA IF NOT EXISTS "faults"');
    await db.raw("CREATE TABLE things (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)");
    await db("things").insert([{ id: 1 }, { id: 2 }]);
  });

  it("maps a unique violation to 409 and never to a 500", async () => {
    const error = await failure(db("things").insert({ id: 1 }));
    expect(toConnectError(error).code).toBe(Code.AlreadyExists);
    expect(statusOf(error)).toBe(409);
  });

  it.each([
    ["cannot_connect_now", "57P03"],
    ["admin_shutdown", "57P01"],
    ["query_canceled", "57014"],
    ["too_many_connections", "53300"],
  ])("maps %s (%s) to 503", async (name, code) => {
    const error = await failure(db.raw(`DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '${name}'; END $$`));
    expect((error as { code: string }).code).toBe(code);
    expect(statusOf(error)).toBe(503);
  });

  it("retries a deadlocked transaction inside the service", async () => {
    const pair = crossingTransactions("things", (work) => inTransaction(db, work, 3));
    expect((await pair.settled).map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
    expect([...pair.attempts].sort()).toEqual([1, 2]);
    expect((await db("things").orderBy("id")).map((r) => r.n)).toEqual([2, 2]);

    // Without retries, the victim's caller gets the deadlock, which answers 503 (not 500).
    const once = crossingTransactions("things", (work) => inTransaction(db, work, 1));
    const rejected = (await once.settled).filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0].reason.code).toBe("40P01");
    expect(statusOf(rejected[0].reason)).toBe(503);
  });

  it("gives up on a transaction that keeps failing to serialize, with 503", async () => {
    let attempts = 0;
    const error = await failure(
      inTransaction(db, async (tx) => {
        attempts++;
        await tx.raw("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$");
      }),
    );
    expect(attempts).toBe(3);
    expect((error as { code: string }).code).toBe("40001");
    expect(statusOf(error)).toBe(503);
  });

  it("answers 503 when the server refuses connections", async () => {
    const url = new URL(database.url);
    url.port = "9";
    const refused = createDb({ url: url.toString(), schema: "faults", acquireTimeoutMs: 2_000 });
    try {
      expect(statusOf(await failure(refused.raw("select 1")))).toBe(503);
    } finally {
      await refused.destroy();
    }
  });

  /** A pool of one connection, held by a transaction until `release()`. */
  async function poolHeld() {
    const small = createDb({ url: database.url, schema: "faults", poolMax: 1, acquireTimeoutMs: 300 });
    let release!: () => void;
    let holding!: () => void;
    const holds = new Promise<void>((resolve) => (holding = resolve));
    const held = small.transaction(async (tx) => {
      await tx.raw("select 1");
      await new Promise<void>((resolve) => {
        release = resolve;
        holding();
      });
    });
    await holds;
    return {
      small,
      release,
      close: async () => {
        release();
        await held;
        await small.destroy();
      },
    };
  }

  it("answers 503 when the pool has no free connection in time", async () => {
    const { small, close } = await poolHeld();
    try {
      expect(statusOf(await failure(small.raw("select 1")))).toBe(503);
    } finally {
      await close();
    }
  });

  it("waits again for a pooled connection when the process stood still through the wait (a frozen replica thawing)", async () => {
    const { small, release, close } = await poolHeld();
    try {
      const waiting = small.raw("select 1 as one").then((result) => result.rows);
      await new Promise((resolve) => setImmediate(resolve));
      // The process stands still past the wait's timeout, as under SIGSTOP; the connection is given
      // back as it runs again, but the wait's timer fires before that is read.
      const until = performance.now() + STALL_MS + 300;
      while (performance.now() < until);
      release();
      expect(await waiting).toEqual([{ one: 1 }]);
    } finally {
      await close();
    }
  });

  it("answers 503 when the server hangs (frozen), on pooled and on new connections", async () => {
    const proxy = await freezableProxy(database.url);
    const frozenDb = createDb({ url: proxy.url, schema: "faults", acquireTimeoutMs: 500, statementTimeoutMs: 500 });
    try {
      await frozenDb.raw("select 1"); // one pooled connection
      proxy.freeze();
      const [pooled, fresh] = await Promise.all([
        failure(frozenDb.raw("select 1")),
        failure(frozenDb.transaction(async (tx) => tx.raw("select 2"))),
      ]);
      expect(statusOf(pooled)).toBe(503);
      expect(statusOf(fresh)).toBe(503);
    } finally {
      await proxy.close();
      await frozenDb.destroy();
    }
  });

  it("gives up a COPY the server stops answering, with 503, instead of hanging", async () => {
    const proxy = await freezableProxy(database.url);
    const frozenDb = createDb({ url: proxy.url, schema: "faults", acquireTimeoutMs: 500, statementTimeoutMs: 500 });
    try {
      const error = await failure(
        frozenDb.transaction(async (tx) => {
          await tx.raw("select 1");
          proxy.freeze();
          await copyRows(tx, "things", ["id", "n"], [[10, 1]]);
        }),
      );
      expect(statusOf(error)).toBe(503);
    } finally {
      await proxy.close();
      await frozenDb.destroy();
    }
  });

  it("never hands out a connection whose transaction a freeze left open: after the thaw the pool works again", async () => {
    const proxy = await freezableProxy(database.url);
    const app = `faults-thaw-${process.pid}`;
    const frozenDb = createDb({ url: proxy.url, schema: "faults", applicationName: app, poolMax: 1, acquireTimeoutMs: 500, statementTimeoutMs: 300 });
    try {
      // The statement and then the ROLLBACK time out in the driver while the server is frozen;
      // the ROLLBACK, still queued behind the statement, is never sent.
      const error = await failure(
        frozenDb.transaction(async (tx) => {
          await tx.raw("select 1");
          proxy.freeze();
          await tx.raw("select pg_sleep(1)");
        }),
      );
      expect(statusOf(error)).toBe(503);
      // The server now runs the held statement, which statement_timeout cancels inside the
      // transaction: that session is left in an aborted transaction. A query queued on it would
      // fail (25P02); it must get another connection.
      proxy.thaw();
      for (let i = 0; i < 3; i++) expect((await frozenDb.raw("select 42 AS n")).rows[0].n).toBe(42);
      await eventually(async () => (await db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ? AND state LIKE 'idle in transaction%'", [app])).rows[0].n === 0, 5_000, "no session left in a transaction");
    } finally {
      await proxy.close();
      await frozenDb.destroy();
    }
  });

  it("cancels a statement that runs longer than the statement timeout, with 503", async () => {
    const slow = createDb({ url: database.url, schema: "faults", statementTimeoutMs: 200 });
    try {
      const error = await failure(slow.raw("select pg_sleep(5)"));
      expect((error as { code: string }).code).toBe("57014");
      expect(statusOf(error)).toBe(503);
    } finally {
      await slow.destroy();
    }
  });
});
