import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { planningV1 } from "@analytics/contracts";
import { codeOf, eventually } from "@analytics/testing";
import { Admission, admissionLimits } from "../src/admission";
import { planningUnderTest, sku, stock, warehouse } from "./fixtures";

const { GroupBy } = planningV1;

/**
 * Planning's streamed answers share its pool fairly and stop when their caller leaves
 * (docs/planning.md "Fair share and cancellation"). A statement is made slow deterministically:
 * another transaction holds `skus` locked, so every breakdown waits in its DECLARE until released.
 */
describe("planning answers: a share per account, cancelled with their call", () => {
  const p = planningUnderTest();
  const request = { query: { volumes: { fromDate: "2026-03-01", toDate: "2026-03-31", groupBy: GroupBy.SKUS } } };
  /** The service's breakdown statements in the database, by state. */
  const statements = async () =>
    (await p.db.raw(`SELECT state, wait_event_type FROM pg_stat_activity WHERE datname = current_database() AND (query LIKE 'DECLARE breakdown%' OR query LIKE '/* breakdown slice */%') AND state <> 'idle'`)).rows as {
      state: string;
      wait_event_type: string | null;
    }[];
  const waitingOnLock = async (n: number) => eventually(async () => (await statements()).filter((s) => s.wait_event_type === "Lock").length === n, 10_000, `${n} statements waiting`);
  const drain = async (chunks: AsyncIterable<{ rows: unknown[] }>) => {
    let rows = 0;
    for await (const chunk of chunks) rows += chunk.rows.length;
    return rows;
  };
  const lockSkus = async () => {
    const tx = await p.db.transaction();
    await tx.raw("LOCK TABLE skus IN ACCESS EXCLUSIVE MODE");
    return tx;
  };
  const accountWithSkus = async () => {
    const acc = randomUUID();
    const wh = randomUUID();
    const id = randomUUID();
    await p.apply([warehouse(acc, wh, 1, "W", "Main"), sku(acc, id, 1, { key: "K1", season: "S" }), stock(acc, wh, id, 1, 3)]);
    return acc;
  };

  it("a cancelled breakdown's statement is cancelled, its transaction ended, and its place given back", async () => {
    const acc = await accountWithSkus();
    const lock = await lockSkus();
    try {
      const abort = new AbortController();
      const call = drain(p.client.getBreakdownByWarehouse(request, { ...p.as(acc), signal: abort.signal }));
      call.catch(() => undefined);
      await waitingOnLock(1);
      abort.abort();
      expect(await codeOf(call)).toBe(Code.Canceled);
      // Gone while the lock is still held: the statement was cancelled, not finished.
      await eventually(async () => (await statements()).length === 0, 5_000, "the cancelled statement gone from pg_stat_activity");
      // and its transaction ended (the only one left open is the lock's).
      const open = async () => (await p.db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`)).rows[0].n;
      await eventually(async () => (await open()) === 1, 5_000, "only the lock's transaction open");
    } finally {
      await lock.rollback();
    }
    // The account's places were all given back: as many answers as its share run again.
    const { perAccount } = admissionLimits(10);
    expect(await Promise.all(Array.from({ length: perAccount }, () => drain(p.client.getBreakdown(request, p.as(acc)))))).toEqual(Array(perAccount).fill(1));
  });

  it("an account over its share is RESOURCE_EXHAUSTED at once while another account's answer runs", async () => {
    const [heavy, other] = [await accountWithSkus(), await accountWithSkus()];
    const { perAccount } = admissionLimits(10);
    const lock = await lockSkus();
    let running: Promise<number>[] = [];
    try {
      running = Array.from({ length: perAccount }, () => drain(p.client.getBreakdown(request, p.as(heavy))));
      running.forEach((r) => r.catch(() => undefined));
      await waitingOnLock(perAccount);
      const refused = await drain(p.client.getSalesPlans(request, p.as(heavy))).then(
        () => undefined,
        (e: unknown) => e as ConnectError,
      );
      expect(refused).toBeInstanceOf(ConnectError);
      expect(refused?.code).toBe(Code.ResourceExhausted);
      expect(refused?.rawMessage).toMatch(/already has as many planning answers running as it may at once \(4\)/);
      // The other account is admitted meanwhile: its statement runs beside the heavy account's.
      running.push(drain(p.client.getBreakdown(request, p.as(other))));
      await waitingOnLock(perAccount + 1);
    } finally {
      await lock.rollback();
    }
    expect(await Promise.all(running)).toEqual(Array(perAccount + 1).fill(1));
  });

  it("shares: half of the pool less its reserve per account, and the answers together leave the reserve free", () => {
    expect(admissionLimits(10)).toEqual({ total: 8, perAccount: 4 });
    expect(admissionLimits(3)).toEqual({ total: 2, perAccount: 1 });
    expect(admissionLimits(20)).toEqual({ total: 16, perAccount: 8 });
    expect(admissionLimits(10, 6)).toEqual({ total: 8, perAccount: 6 });
    expect(admissionLimits(10, 50)).toEqual({ total: 8, perAccount: 8 });
    expect(admissionLimits(1)).toEqual({ total: 1, perAccount: 1 });
    const admission = new Admission({ total: 3, perAccount: 2 });
    const a = [admission.enter("a"), admission.enter("a")];
    expect(() => admission.enter("a")).toThrow(expect.objectContaining({ code: Code.ResourceExhausted }));
    const b = admission.enter("b");
    expect(() => admission.enter("c")).toThrow(/as many answers as it may at once \(3\)/);
    b();
    b(); // given back once, however often called
    admission.enter("c");
    expect(() => admission.enter("c")).toThrow(/as many answers as it may at once \(3\)/);
    a[0]();
    admission.enter("a");
  });
});
