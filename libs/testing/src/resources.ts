import pg from "pg";
import { NatsBus } from "@analytics/bus";
import { testDatabaseUrl, testNatsUrl, uniqueName } from "./names";

/** The test services' own resources: a database and a JetStream stream, each unique to its user. */

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Whether the test Postgres has a database of that name. */
export async function databaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  try {
    return (await admin.query("select 1 from pg_database where datname = $1", [name])).rowCount === 1;
  } finally {
    await admin.end();
  }
}

/** A fresh database per test file, so tests running in parallel never see each other's rows. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const database = namedTestDatabase();
  await database.create();
  return database;
}

/**
 * A test database's name and URL, known before it exists: `create` makes it. `keep` renames it out
 * of the run (its name without the run's id, which the run's teardown and monitor drop) and
 * returns the new name: a failing test's data stays to be looked at, until the global setup's
 * sweep drops it once it is an hour old. Its connections must be closed first.
 */
export function namedTestDatabase(): TestDatabase & { create(): Promise<void>; keep(): Promise<string> } {
  const adminUrl = testDatabaseUrl();
  const name = uniqueName("t");
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const asAdmin = async (sql: string) => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };
  return {
    url: url.toString(),
    name,
    create: () => asAdmin(`CREATE DATABASE "${name}"`),
    drop: () => asAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
    keep: async () => {
      const run = process.env.TEST_RUN_ID;
      if (!run || !name.endsWith(`_${run}`)) return name;
      const kept = name.slice(0, -run.length - 1);
      await asAdmin(`ALTER DATABASE "${name}" RENAME TO "${kept}"`);
      return kept;
    },
  };
}

export interface TestBus {
  bus: NatsBus;
  url: string;
  stream: string;
  subjectPrefix: string;
  /** Closes the connection and deletes the test's stream. */
  close(): Promise<void>;
}

/** A real JetStream bus on its own stream and subject prefix, so parallel test files never meet. */
export async function createTestBus(options: { ackWaitMs?: number } = {}): Promise<TestBus> {
  const stream = uniqueName("T").toUpperCase();
  const subjectPrefix = `${stream.toLowerCase()}.`;
  const url = testNatsUrl();
  const bus = await NatsBus.connect({ url, stream, subjectPrefix, ...options });
  return {
    bus,
    url,
    stream,
    subjectPrefix,
    close: async () => {
      await bus.deleteStream();
      await bus.close();
    },
  };
}
