import { accountVersion, copyRows, createAccountVersions, createDb, inTransaction, isUuid, migrate, pageWindow, ping, type Db } from "../src";
import { createTestDatabase, databaseForFile } from "@analytics/testing";

describe("db", () => {
  const database = databaseForFile();

  it("runs a service's migrations once, in its own schema", async () => {
    const db = createDb({ url: database.url, schema: "sample" });
    try {
      const migrations = [
        { name: "002_more", up: async (k: typeof db) => void (await k.schema.alterTable("things", (t) => t.text("note"))) },
        { name: "001_things", up: async (k: typeof db) => void (await k.schema.createTable("things", (t) => t.increments("id"))) },
      ];
      expect(await migrate(db, "sample", migrations)).toEqual(["001_things", "002_more"]);
      expect(await migrate(db, "sample", migrations)).toEqual([]);
      const tables = await db.raw(
        "select table_name from information_schema.tables where table_schema = 'sample' order by 1",
      );
      expect(tables.rows.map((r: { table_name: string }) => r.table_name)).toEqual(
        expect.arrayContaining(["knex_migrations", "things"]),
      );
      await ping(db);
    } finally {
      await db.destroy();
    }
  });

  it("lets replicas starting together on a fresh database migrate one after the other: all start, each migration runs once", async () => {
    const fresh = await createTestDatabase();
    const replicas = [1, 2, 3].map(() => createDb({ url: fresh.url, schema: "racing" }));
    try {
      const migrations = [
        { name: "001_things", up: async (k: Db) => void (await k.schema.createTable("things", (t) => t.increments("id"))) },
        // Long enough that the others start while it runs (an index build on a real table).
        { name: "002_slow", up: async (k: Db) => void (await k.raw("SELECT pg_sleep(0.3)")) },
      ];
      const applied = await Promise.all(replicas.map((db) => migrate(db, "racing", migrations)));
      expect(applied.filter((names) => names.length)).toEqual([["001_things", "002_slow"]]);
      expect((await replicas[0]("knex_migrations").select("name")).map((r) => r.name).sort()).toEqual(["001_things", "002_slow"]);
    } finally {
      await Promise.all(replicas.map((db) => db.destroy()));
      await fresh.drop();
    }
  });

  it("COPYs rows with every value kept: NULLs, JSON, tabs, newlines and backslashes; a failing row fails the transaction", async () => {
    const db = createDb({ url: database.url, schema: "copied" });
    try {
      await db.raw('CREATE SCHEMA IF NOT EXISTS "copied"');
      await db.raw("CREATE TABLE rows (id int PRIMARY KEY, t text, j jsonb, at timestamptz, n numeric)");
      const odd = "tab\there\nnew line\r\\N back\\slash \u00e9";
      await inTransaction(db, (tx) =>
        copyRows(tx, "rows", ["id", "t", "j", "at", "n"], [
          [1, odd, { k: odd, list: [1, null] }, new Date("2026-03-01T00:00:00.000Z"), "10.50"],
          [2, null, null, null, null],
          [3, "\\N", [], "2026-03-01T01:00:00+01:00", "-0.001"],
        ]),
      );
      const got = await db("rows").orderBy("id").select("id", "t", "j", db.raw("at = '2026-03-01T00:00:00Z' AS midnight"), db.raw("n::text AS n"));
      expect(got).toEqual([
        { id: 1, t: odd, j: { k: odd, list: [1, null] }, midnight: true, n: "10.50" },
        { id: 2, t: null, j: null, midnight: null, n: null },
        { id: 3, t: "\\N", j: [], midnight: true, n: "-0.001" },
      ]);
      await expect(inTransaction(db, (tx) => copyRows(tx, "rows", ["id", "t"], [[4, "new"], [1, "taken"]]))).rejects.toMatchObject({ code: "23505" });
      expect(await db("rows").where({ id: 4 })).toEqual([]);
      // The COPY runs on the transaction's own connection: rows COPYed before the work fails
      // are rolled back with it.
      await expect(
        inTransaction(db, async (tx) => {
          await copyRows(tx, "rows", ["id", "t"], [[5, "rolled back"]]);
          throw new Error("later step failed");
        }),
      ).rejects.toThrow("later step failed");
      expect(await db("rows").where({ id: 5 })).toEqual([]);
      // Many rows go in pieces, each formed from its item as it is written: every row arrives,
      // once, whole, however the pieces fall (1,234 rows: 500, 500 and 234).
      const items = Array.from({ length: 1234 }, (_, n) => ({ n: 100 + n, text: `row ${n}\tend` }));
      await inTransaction(db, (tx) => copyRows(tx, "rows", ["id", "t", "n"], items, (i) => [i.n, i.text, i.n * 2]));
      const [many] = await db("rows").where("id", ">=", 100).select(db.raw("count(*)::int AS rows, count(DISTINCT id)::int AS ids, sum(n)::int AS total"), db.raw("bool_and(t = 'row ' || (id - 100) || E'\\tend') AS whole"));
      expect(many).toEqual({ rows: 1234, ids: 1234, total: items.reduce((s, i) => s + i.n * 2, 0), whole: true });
    } finally {
      await db.destroy();
    }
  });

  it("moves an account's version on with every statement that writes its rows (COPY and deletes too), in its transaction, and no other account's", async () => {
    const db = createDb({ url: database.url, schema: "versioned" });
    try {
      await migrate(db, "versioned", [
        { name: "001_things", up: async (k) => void (await k.raw("CREATE TABLE things (id int PRIMARY KEY, account_id uuid NOT NULL, note text)")) },
        { name: "002_versions", up: (k) => createAccountVersions(k, ["things"]) },
      ]);
      const [a, b, c] = ["00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b", "00000000-0000-4000-8000-00000000000c"];
      const versions = () => Promise.all([a, b, c].map((id) => accountVersion(db, id)));
      expect(await versions()).toEqual([0n, 0n, 0n]);
      const moved = async (write: () => Promise<unknown>) => {
        const before = await versions();
        await write();
        return (await versions()).map((v, i) => v > before[i]);
      };
      expect(await moved(() => db("things").insert([{ id: 1, account_id: a }, { id: 2, account_id: a }, { id: 3, account_id: b }]))).toEqual([true, true, false]);
      expect(await moved(() => inTransaction(db, (tx) => copyRows(tx, "things", ["id", "account_id"], [[4, c]])))).toEqual([false, false, true]);
      expect(await moved(() => db("things").where({ id: 1 }).update({ note: "x" }))).toEqual([true, false, false]);
      expect(await moved(() => db("things").where({ id: 99 }).update({ note: "x" }))).toEqual([false, false, false]);
      expect(await moved(() => db("things").where({ id: 3 }).delete())).toEqual([false, true, false]);
      // A rolled-back write leaves the version as it was.
      const rolledBack = () =>
        inTransaction(db, async (tx) => {
          await tx("things").insert({ id: 5, account_id: c });
          throw new Error("rolled back");
        }).catch(() => undefined);
      expect(await moved(rolledBack)).toEqual([false, false, false]);
      // A session with another search path (an operator's psql) writes too.
      const elsewhere = createDb({ url: database.url, schema: "public" });
      try {
        expect(await moved(() => elsewhere.raw("INSERT INTO versioned.things (id, account_id) VALUES (6, ?)", [a]))).toEqual([true, false, false]);
      } finally {
        await elsewhere.destroy();
      }
    } finally {
      await db.destroy();
    }
  });

  it("rolls a transaction back when the work throws", async () => {
    const db = createDb({ url: database.url, schema: "sample" });
    try {
      await expect(
        inTransaction(db, async (tx) => {
          await tx("things").insert({ note: "kept?" });
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await db("things").where({ note: "kept?" })).toHaveLength(0);
    } finally {
      await db.destroy();
    }
  });

  it("refuses a schema name that is not a plain identifier", () => {
    expect(() => createDb({ url: database.url, schema: 'x"; drop' })).toThrow(/schema name/);
  });

  it("tells UUIDs and computes page windows", () => {
    expect(isUuid("0b8f5c2e-7d3c-4a57-9d5e-1f2a3b4c5d6e")).toBe(true);
    expect(isUuid("42")).toBe(false);
    expect(pageWindow({ page: 3, pageSize: 10 })).toEqual({ limit: 10, offset: 20 });
  });

  it("lets a migration run longer than the statement timeout that bounds every request", async () => {
    const db = createDb({ url: database.url, schema: "slow", statementTimeoutMs: 200 });
    try {
      const slow = { name: "001_slow", up: async (k: import("knex").Knex) => void (await k.raw("SELECT pg_sleep(0.5)")) };
      expect(await migrate(db, "slow", [slow])).toEqual(["001_slow"]);
      await expect(db.raw("SELECT pg_sleep(0.5)")).rejects.toThrow(/statement timeout/);
    } finally {
      await db.destroy();
    }
  });
});
