import { create } from "@bufbuild/protobuf";
import pino from "pino";
import { accountsMessagesV1, PageRequestSchema, topics } from "@analytics/contracts";
import type { Tx } from "@analytics/db";
import { invalid, type DomainError } from "@analytics/errors";
import type { OutboxRelay } from "@analytics/outbox";
import { databaseForFile } from "@analytics/testing";
import { atRevision, batchResponse, batchResult, commit, dispatch, itemOutcome, notWritten, on, pageOf, refuseDuplicates, type Delivery } from "../src";

const page = (p: number, pageSize: number) => create(PageRequestSchema, { page: p, pageSize });
/** What a thrown error says: its message and field problems. */
function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    return { kind: (error as DomainError).kind, message: (error as Error).message, violations: (error as DomainError).details };
  }
  throw new Error("not refused");
}

describe("pageOf", () => {
  it("defaults to page 1 of 10 and keeps what is in range", () => {
    expect(pageOf(undefined)).toEqual({ page: 1, pageSize: 10 });
    expect(pageOf(page(3, 1000))).toEqual({ page: 3, pageSize: 1000 });
  });
  it("refuses a page below 1 and a size outside 1..max, never clamping", () => {
    expect(refusal(() => pageOf(page(-1, 10)))).toEqual({ kind: "invalid", message: "page must be at least 1", violations: [{ path: "page", message: "must be at least 1" }] });
    expect(refusal(() => pageOf(page(1, 1001)))).toEqual({ kind: "invalid", message: "pageSize must be 1..1000", violations: [{ path: "pageSize", message: "must be 1..1000" }] });
    expect(refusal(() => pageOf(page(1, -5)))).toMatchObject({ message: "pageSize must be 1..1000" });
    expect(pageOf(page(1, 10_000), 10_000)).toEqual({ page: 1, pageSize: 10_000 });
    expect(refusal(() => pageOf(page(1, 10_001), 10_000))).toMatchObject({ message: "pageSize must be 1..10000" });
  });
});

describe("batch outcomes", () => {
  const outcome = { ...itemOutcome(400, "K1", "key", "key: is required", [{ path: "key", message: "is required" }]), value: { id: "p1" } };
  it("answer the contract's BatchResponse, the field problems and the value under its name", () => {
    expect(batchResponse(outcome)).toEqual({ statusCode: 400, message: "key: is required", reference: "K1", referenceField: "key" });
    expect(batchResult(outcome, "product")).toEqual({ result: batchResponse(outcome), violations: outcome.violations, product: { id: "p1" } });
    expect(batchResult(outcome)).toEqual({ result: batchResponse(outcome), violations: outcome.violations });
  });
});

describe("refuseDuplicates", () => {
  const refused = (_: unknown, i: number, earlier: number) => `${i} repeats ${earlier}`;
  it("refuses each item after the first that names a reference, naming that first", () => {
    const answers: (string | undefined)[] = [];
    refuseDuplicates(["A", "B", "A", "C", "B", "A"], answers, (r) => r, refused);
    expect(answers).toEqual([undefined, undefined, "2 repeats 0", undefined, "4 repeats 1", "5 repeats 0"]);
  });
  it("lets an item answered already name nothing, and keeps its answer", () => {
    const answers: (string | undefined)[] = ["invalid", undefined, undefined, "not found"];
    refuseDuplicates(["A", "A", "A", "A"], answers, (r) => r, refused);
    expect(answers).toEqual(["invalid", undefined, "2 repeats 1", "not found"]);
  });
  it("takes several references an item names, each once per request; a refused repeat's references count too", () => {
    const answers: (string | undefined)[] = [];
    const rows = [["k1", "id1"], ["k1", "id2"], ["k2", "id2"], ["k3", "id3"], []];
    refuseDuplicates(rows, answers, (r) => r, refused);
    expect(answers).toEqual([undefined, "1 repeats 0", "2 repeats 1", undefined, undefined]);
  });
  it("refuses the whole request when the refusal throws: at the first repeat, in order", () => {
    const run = () =>
      refuseDuplicates(["A", "B", "B", "A"], [], (r) => r, (_, i, earlier) => {
        throw invalid(`[${i}].id: repeats item ${earlier}`);
      });
    expect(refusal(run)).toMatchObject({ kind: "invalid", message: "[2].id: repeats item 1" });
  });
});

describe("atRevision and notWritten (If-Match)", () => {
  const row = { id: "r1", revision: "7" };
  it("passes the row at the revision named, or any revision when none is named", () => {
    expect(atRevision("store S1", row, "7")).toBe(row);
    expect(atRevision("store S1", row, undefined)).toBe(row);
  });
  it("is changed (the gateway's 412) at another revision, and for a row gone when a revision is named", () => {
    const changed = { kind: "changed", message: "store S1 changed since the revision the request named", violations: [] };
    expect(refusal(() => atRevision("store S1", row, "6"))).toEqual(changed);
    expect(refusal(() => atRevision("store S1", undefined, "7"))).toEqual(changed);
    expect(refusal(() => { throw notWritten("store S1", "7"); })).toEqual(changed);
  });
  it("is not found for no row when no revision is named", () => {
    const missing = { kind: "not_found", message: "store S1 not found", violations: [] };
    expect(refusal(() => atRevision("store S1", undefined, undefined))).toEqual(missing);
    expect(refusal(() => { throw notWritten("store S1", undefined); })).toEqual(missing);
  });
});

describe("commit (real Postgres)", () => {
  const database = databaseForFile();
  const db = database.openDb("kit");
  let kicks = 0;
  const ctx = () => ({ db, relay: { kick: () => void kicks++ } as unknown as OutboxRelay, logger: pino({ level: "silent" }) });
  beforeAll(async () => {
    await db.raw('CREATE SCHEMA IF NOT EXISTS "kit"');
    await db.raw("CREATE TABLE written (n int)");
  });
  beforeEach(() => void (kicks = 0));

  it("wakes the relay once the work has committed", async () => {
    let transaction: Tx | undefined;
    const completedAtKick: boolean[] = [];
    const relay = { kick: () => void completedAtKick.push(transaction!.isCompleted()) } as unknown as OutboxRelay;
    const result = await commit({ ...ctx(), relay }, async (tx) => {
      transaction = tx;
      await tx("written").insert({ n: 1 });
      return "done";
    });
    expect(result).toBe("done");
    expect(completedAtKick).toEqual([true]);
  });
  it("does not wake it when the result announced nothing, nor when the work fails", async () => {
    expect(await commit(ctx(), async () => [], (written) => written.length > 0)).toEqual([]);
    await expect(commit(ctx(), async () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(kicks).toBe(0);
    await commit(ctx(), async () => [1], (written) => written.length > 0);
    expect(kicks).toBe(1);
  });
});

describe("dispatch", () => {
  const delivery = (topic: (typeof topics)["accountSettingsChanged"] | (typeof topics)["catalogueBrandCreated"], message: object): Delivery =>
    ({ id: "m1", subject: topic.subject, accountId: "a1", occurredAt: "", topic, message }) as unknown as Delivery;
  const settings = create(accountsMessagesV1.AccountSettingsChangedSchema, { accountId: "a1", timezone: "Europe/Oslo" });
  const route = dispatch(
    on(topics.accountSettingsChanged, (d) => `timezone ${d.message.timezone}`),
    on([topics.catalogueSkuCreated, topics.catalogueSkuUpdated], (d) => `sku ${d.message.skuId}`),
  );

  it("hands each delivery to the route of its subject, as its topic's message", () => {
    expect(route(delivery(topics.accountSettingsChanged, settings))).toBe("timezone Europe/Oslo");
    expect(route(delivery(topics.catalogueBrandCreated, {}))).toBeUndefined();
    expect(route.topics.map((t) => t.subject)).toEqual([topics.accountSettingsChanged.subject, topics.catalogueSkuCreated.subject, topics.catalogueSkuUpdated.subject]);
  });
  it("passes the caller's context, and refuses two routes for one subject", () => {
    const seen: string[] = [];
    const collect = dispatch<void, string[]>(on(topics.accountSettingsChanged, (d, into) => void into.push(d.message.accountId)));
    collect(delivery(topics.accountSettingsChanged, settings), seen);
    expect(seen).toEqual(["a1"]);
    expect(() => dispatch(on(topics.accountSettingsChanged, () => 1), on([topics.accountSettingsChanged], () => 2))).toThrow(/two routes for analytics.accounts.settings.changed/);
  });
});
