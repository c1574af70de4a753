import pino from "pino";
import { Code, type Client, type ConnectError } from "@connectrpc/connect";
import { callerHeaders } from "@analytics/auth";
import { InProcessBus } from "@analytics/bus";
import { planningV1 } from "@analytics/contracts";
import { httpErrorOf } from "@analytics/errors";
import { outboxMigrations } from "@analytics/outbox";
import { databaseForFile, eventually } from "@analytics/testing";
import { commit, createServiceClient, startService, type RunningService, type ServiceDefinition } from "../src";

const { PlanningService } = planningV1;

/**
 * A write slower than its call's deadline (it waits for a row lock the test holds): the caller
 * answers 503 only when nothing was written, and 504 with `outcome_unknown` when it gave up
 * without the service's answer.
 */
describe("a write past its call's deadline (real Postgres)", () => {
  const database = databaseForFile();
  const admin = database.openDb("probe", { applicationName: "probe-test" });
  let service: RunningService;
  let client: Client<typeof PlanningService>;

  // The write: waits for the gate's row lock, then inserts a row.
  const definition: ServiceDefinition = {
    name: "probe",
    migrations: [
      ...outboxMigrations,
      {
        name: "900_writes",
        up: async (db) => {
          await db.raw("CREATE TABLE gate (id int PRIMARY KEY)");
          await db.raw("INSERT INTO gate VALUES (1)");
          await db.raw("CREATE TABLE writes (id serial PRIMARY KEY)");
        },
      },
    ],
    routes: (router, context) =>
      router.rpc(PlanningService.method.getAccountVersion, async (_request, call) => {
        await commit(context, async (tx) => {
          await tx.raw("SELECT id FROM gate WHERE id = 1 FOR UPDATE");
          await tx("writes").insert({});
          await beforeCommit?.(call.signal);
        });
        return { version: 1n };
      }),
  };
  /** The test's hook: the write's work ends when it resolves. */
  let beforeCommit: ((signal: AbortSignal) => Promise<void>) | undefined;
  afterEach(() => (beforeCommit = undefined));
  const aborted = (signal: AbortSignal) => new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve())));

  beforeAll(async () => {
    // A statement timeout longer than any test: only the call's deadline ends a statement early.
    const dbTimeouts = { acquireTimeoutMs: 5_000, statementTimeoutMs: 600_000 };
    service = await startService(definition, { databaseUrl: database.url, bus: new InProcessBus(), logger: pino({ level: "silent" }), internalToken: "x".repeat(40), port: 0, dbTimeouts });
    database.atClose(() => service.close());
    client = createServiceClient(PlanningService, service.url);
  });
  beforeEach(() => admin("writes").delete());

  const headers = callerHeaders("x".repeat(40), { accountId: "00000000-0000-4000-8000-000000000001", apiKeyId: "00000000-0000-4000-8000-000000000002" });
  const writes = async () => (await admin("writes").count<{ n: number }[]>({ n: "*" }))[0].n;
  /** The service's write has ended, committed or rolled back: none of its sessions is in a transaction. */
  const writeEnded = () =>
    eventually(async () => (await admin.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'probe' AND state <> 'idle' AND (query ILIKE '%gate%' OR query ILIKE '%writes%')")).rows[0].n === 0, 10_000, "the write ended");

  /** Runs `during` while the test holds the gate's lock; releases it after. */
  async function withGateHeld<T>(during: () => Promise<T>): Promise<T> {
    const holder = await admin.transaction();
    try {
      await holder.raw("SELECT id FROM gate WHERE id = 1 FOR UPDATE");
      return await during();
    } finally {
      await holder.rollback();
    }
  }

  it("rolls the write back when its deadline passed before COMMIT: the 503 that answers it is true", async () => {
    // The work is done when the call's deadline passes (Connect-Timeout-Ms reached the service).
    beforeCommit = aborted;
    const error = await client.getAccountVersion({}, { headers: { ...headers, "connect-timeout-ms": "300" } }).then(
      () => undefined,
      (e: ConnectError) => e,
    );
    expect(error?.code).toBe(Code.Unavailable);
    expect(httpErrorOf(error).statusCode).toBe(503);
    await writeEnded();
    expect(await writes()).toBe(0);
  });

  it("cancels a statement still waiting when the call's deadline passes, and answers 503 then", async () => {
    // The caller waits for the service's answer, which comes while the test still holds the lock
    // (or the write is found still waiting for it, by the server's clock, long after).
    const outcome = await withGateHeld(async () => {
      let answered = false;
      const call = client.getAccountVersion({}, { headers: { ...headers, "connect-timeout-ms": "300" } }).then(
        () => "committed",
        (e: ConnectError) => Code[e.code],
      );
      const stillWaiting = eventually(
        async () =>
          answered ||
          (await admin.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'probe' AND wait_event_type = 'Lock' AND now() - query_start > interval '10 s'")).rows[0].n === 1,
        60_000,
        "an answer, or the write still waiting for the lock",
      ).then(() => "still waiting for the lock");
      const first = await Promise.race([call, stillWaiting]);
      answered = true;
      await stillWaiting;
      return first;
    });
    expect(outcome).toBe(Code[Code.Unavailable]);
    await writeEnded();
    expect(await writes()).toBe(0);
  });

  it("answers a write whose deadline passed at the caller with 504 outcome_unknown (a read's with 503), and the service writes nothing after it", async () => {
    // The service is stuck past the caller's deadline (and its own): only the caller's timer ends the call.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    beforeCommit = () => released;
    const error = await client.getAccountVersion({}, { headers, timeoutMs: 400 }).then(
      () => undefined,
      (e: ConnectError) => e,
    );
    release();
    expect(error?.code).toBe(Code.DeadlineExceeded);
    expect(httpErrorOf(error, true)).toMatchObject({ statusCode: 504, code: "outcome_unknown" });
    expect(httpErrorOf(error, false).statusCode).toBe(503);
    await writeEnded();
    expect(await writes()).toBe(0);
  });

  it("commits a write within its deadline", async () => {
    await client.getAccountVersion({}, { headers, timeoutMs: 5_000 });
    expect(await writes()).toBe(1);
  });
});
