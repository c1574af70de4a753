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

/** A test database's name and URL, known before it exists: `create` makes it. */
export function namedTestDatabase(): TestDatabase & { create(): Promise<void> } {
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
