import pg from "pg";
import { createdAt, createTestBus, createTestDatabase, eventually, uniqueName } from "../src";

describe("testing", () => {
  it("makes a fresh database and drops it", async () => {
    const database = await createTestDatabase();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    expect((await client.query("select current_database() as name")).rows[0].name).toBe(database.name);
    await client.end();
    await database.drop();
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres" });
    await admin.connect();
    expect((await admin.query("select 1 from pg_database where datname = $1", [database.name])).rowCount).toBe(0);
    await admin.end();
  });

  it("gives each bus its own stream and subject prefix", async () => {
    const a = await createTestBus();
    const b = await createTestBus();
    expect(a.stream).not.toBe(b.stream);
    expect(a.subjectPrefix).not.toBe(b.subjectPrefix);
    await a.bus.ping();
    await a.close();
    await b.close();
  });

  it("waits until a condition holds, or says what it waited for", async () => {
    let n = 0;
    expect(await eventually(async () => (++n >= 3 ? n : undefined))).toBe(3);
    await expect(eventually(async () => false, 100, "never")).rejects.toThrow(/never/);
    expect(uniqueName("x")).toMatch(/^x_/);
    const before = Date.now();
    expect(createdAt(uniqueName("t"))).toBeGreaterThanOrEqual(before - 1);
    expect(createdAt(uniqueName("E2E").toUpperCase())).toBeGreaterThanOrEqual(before - 1);
    expect(createdAt("analytics")).toBeUndefined();
  });
});
