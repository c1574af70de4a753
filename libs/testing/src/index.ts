import pg from "pg";
import { NatsBus } from "@analytics/bus";
import { testDatabaseUrl, testNatsUrl, uniqueName } from "./names";

export { testDatabaseUrl, testNatsUrl, uniqueName, createdAt } from "./names";
export { sweepStaleTestResources } from "./sweep";

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
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

/**
 * Polls `count` until `done` holds; fails only when the count has not moved for `stallMs`. For
 * work whose pace depends on the machine's load (a backlog draining): a loaded machine gets the
 * time it needs, a stuck one fails as quickly as an idle one would.
 */
export async function whileProgressing(count: () => Promise<number>, done: (n: number) => boolean, stallMs = 15_000, what: string | (() => string) = "progress"): Promise<number> {
  let last = -1;
  let movedAt = Date.now();
  for (;;) {
    const n = await count();
    if (done(n)) return n;
    if (n !== last) [last, movedAt] = [n, Date.now()];
    else if (Date.now() - movedAt > stallMs) throw new Error(`stalled at ${n} for ${stallMs} ms waiting for ${typeof what === "function" ? what() : what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls until `check` returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000, what: string | (() => string) = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "function" ? what() : what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}


export { freezableProxy, type FreezableProxy } from "./proxy";
export { crossingTransactions } from "./deadlock";
export { startNatsCluster, type NatsCluster } from "./nats-cluster";
export { databaseForFile, databaseAndStreamForFile, serviceUnderTest, subjectsUnder, codeOf, type DatabaseForFile, type DatabaseAndStreamForFile, type ServiceUnderTest } from "./per-file";
export { accountSettingsChanged, busMessage, purchaseOrderChanged, skuUpdated, stockUpdated, warehouseChanged, type LineInit, type SkuInit } from "./factories";
