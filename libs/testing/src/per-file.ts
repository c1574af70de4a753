import { randomUUID } from "node:crypto";
import type { DescService } from "@bufbuild/protobuf";
import type { Client, ConnectError } from "@connectrpc/connect";
import pino from "pino";
import { callerHeaders } from "@analytics/auth";
import type { BusMessage } from "@analytics/bus";
import { topics } from "@analytics/contracts";
import { createDb, type Db, type DbOptions } from "@analytics/db";
import { createServiceClient, type RunningService, type ServiceDeps } from "@analytics/rpc";
import { createTestBus, namedTestDatabase, type TestBus } from "./resources";

/**
 * A database of this test file's own, created in beforeAll and dropped in afterAll. Its name,
 * URL and pools are there from the start; pools open connections only when first used.
 */
export interface DatabaseForFile {
  url: string;
  name: string;
  /** A pool on the file's database, destroyed before the database is dropped. */
  openDb(schema: string, options?: Omit<DbOptions, "url" | "schema">): Db;
  /**
   * Work for afterAll that must run while the database (and stream) still exist, latest first.
   * A file's own afterAll would run too late: jest runs afterAll hooks in the order declared.
   */
  atClose(close: () => unknown): void;
}

export interface DatabaseAndStreamForFile extends DatabaseForFile {
  /** The file's own JetStream stream; set once beforeAll has run. */
  stream: TestBus;
}

/** Registers the jest hooks that make and remove the file's database. Call it in a describe block. */
export function databaseForFile(): DatabaseForFile {
  return forFile(undefined);
}

/** As databaseForFile, with a JetStream stream and subject prefix of the file's own. */
export function databaseAndStreamForFile(options: { ackWaitMs?: number } = {}): DatabaseAndStreamForFile {
  return forFile(options) as DatabaseAndStreamForFile;
}

function forFile(streamOptions: { ackWaitMs?: number } | undefined): DatabaseForFile & { stream?: TestBus } {
  const database = namedTestDatabase();
  const pools: Db[] = [];
  const closers: (() => unknown)[] = [];
  const handle: DatabaseForFile & { stream?: TestBus } = {
    url: database.url,
    name: database.name,
    openDb: (schema, options = {}) => {
      const db = createDb({ url: database.url, schema, ...options });
      pools.push(db);
      return db;
    },
    atClose: (close) => void closers.push(close),
  };
  beforeAll(async () => {
    await database.create();
    if (streamOptions) handle.stream = await createTestBus(streamOptions);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    for (const db of pools) await db.destroy();
    await handle.stream?.close();
    await database.drop();
  });
  return handle;
}

export interface ServiceUnderTest<S extends DescService> extends DatabaseAndStreamForFile {
  /** A client of the service; its calls work once beforeAll has run. */
  client: Client<S>;
  /** The running service; set once beforeAll has run. */
  service: RunningService;
  /** A pool on the service's own schema. */
  db: Db;
  internalToken: string;
  /** Call options that carry `accountId` (and a new API key id unless one is given), as the gateway sends them. */
  as(accountId: string, apiKeyId?: string): { headers: Record<string, string> };
  /** Every message published on the `probe` subjects since the service started. */
  published: BusMessage[];
}

/**
 * A service started in beforeAll on the file's own database and stream, with a client; closed in
 * afterAll, then the stream and the database. `schema` is the service's (its pool `db`); `probe`
 * names the subjects whose messages are collected in `published`.
 */
export function serviceUnderTest<S extends DescService>(
  descriptor: S,
  start: (deps: ServiceDeps) => Promise<RunningService>,
  options: { schema: string; probe?: string[]; internalToken?: string },
): ServiceUnderTest<S> {
  const internalToken = options.internalToken ?? "x".repeat(40);
  const files = databaseAndStreamForFile();
  let running: Client<S> | undefined;
  // Each method looks the real client up when called: the service's port is known only after beforeAll.
  const client = Object.fromEntries(
    descriptor.methods.map((method) => [method.localName, (...args: unknown[]) => (running as any)[method.localName](...args)]),
  ) as Client<S>;
  const handle: ServiceUnderTest<S> = Object.assign(files, {
    client,
    service: undefined as unknown as RunningService,
    db: files.openDb(options.schema),
    internalToken,
    as: (accountId: string, apiKeyId: string = randomUUID()) => ({ headers: callerHeaders(internalToken, { accountId, apiKeyId }) }),
    published: [] as BusMessage[],
  });
  beforeAll(async () => {
    handle.service = await start({ databaseUrl: handle.url, bus: handle.stream.bus, logger: pino({ level: process.env.TEST_LOG ?? "silent" }), internalToken, port: 0 });
    handle.atClose(() => handle.service.close());
    running = createServiceClient(descriptor, handle.service.url);
    if (options.probe) await handle.stream.bus.subscribe({ durable: "probe", subjects: options.probe, handle: async (ms) => void handle.published.push(...ms) });
  });
  return handle;
}

/** The subjects of every topic whose subject starts with `prefix`, e.g. "analytics.pricing.". */
export function subjectsUnder(prefix: string): string[] {
  return Object.values(topics).flatMap((topic) => ("subject" in topic && topic.subject.startsWith(prefix) ? [topic.subject] : []));
}

/** The Connect code a call fails with, or undefined when it succeeds. */
export async function codeOf(call: Promise<unknown>) {
  return ((await call.then(() => undefined, (e) => e)) as ConnectError | undefined)?.code;
}
