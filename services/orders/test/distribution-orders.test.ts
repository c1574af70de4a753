import { randomUUID } from "node:crypto";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { ordersMessagesV1, ordersV1, topics } from "@analytics/contracts";
import { codeOf, eventually, serviceUnderTest } from "@analytics/testing";
import { startOrdersService } from "../src/service";

const { OrdersService, WriteMode } = ordersV1;
type RowInit = MessageInitShape<typeof ordersV1.DistributionOrderSchema>;
const at = (iso: string) => timestampFromDate(new Date(iso));

describe("orders service: distribution orders (real Postgres and JetStream)", () => {
  const orders = serviceUnderTest(OrdersService, startOrdersService, {
    schema: "orders",
    probe: [topics.ordersDistributionOrderCreated.subject, topics.ordersDistributionOrderUpdated.subject],
  });
  const { client, as, published } = orders;

  const write = async (account: string, rows: RowInit[], mode = WriteMode.UPSERT) => (await client.writeDistributionOrders({ distributionOrders: rows, mode }, as(account))).results;

  it("derives the status through all five states, never from input, and announces every change", async () => {
    const account = randomUUID();
    const row = (extra: Partial<RowInit>): RowInit => ({ externalDoid: "DO-1", externalRowId: "1", key: "K1", quantity: 10, ...extra }) as RowInit;
    const steps: [Partial<RowInit>, string][] = [
      [{ status: "COMPLETED" }, "PROCESSING"],
      [{ allocatedQuantity: 10 }, "ALLOCATED"],
      [{ allocatedQuantity: 10, shippedAt: at("2026-03-02T00:00:00Z") }, "IN TRANSIT"],
      [{ allocatedQuantity: 10, shippedAt: at("2026-03-02T00:00:00Z"), deliveredQuantity: 10 }, "COMPLETED"],
      [{ deliveredQuantity: 10, cancelledDate: at("2026-03-03T00:00:00Z") }, "CANCELLED"],
    ];
    const seen: [number, string | undefined][] = [];
    for (const [extra] of steps) {
      const [r] = await write(account, [row(extra)]);
      seen.push([r.result!.statusCode, r.distributionOrder?.status]);
    }
    expect(seen).toEqual([[201, "PROCESSING"], ...steps.slice(1).map(([, s]) => [200, s])]);
    const messages = await eventually(async () => {
      const ms = published.filter((m) => m.accountId === account);
      return ms.length === 5 && ms.map((m) => fromBinary(ordersMessagesV1.DistributionOrderChangedSchema, m.payload));
    });
    expect(messages.map((m) => [m.version, m.distributionOrder?.status])).toEqual(steps.map(([, s], i) => [BigInt(i + 1), s]));
  });

  it("a row too large to announce is its own 400 naming its size; the rest of the batch is written", async () => {
    const account = randomUUID();
    const row = (no: string, extra: Partial<RowInit> = {}): RowInit => ({ externalDoid: "DO-L", externalRowId: no, key: "K1", quantity: 1, ...extra }) as RowInit;
    const results = await write(account, [row("1"), row("2", { attributes: { note: "x".repeat(600_000) } } as Partial<RowInit>)]);
    expect(results.map((r) => [r.result?.statusCode, r.result?.message.replace(/\d+ bytes/, "N bytes")])).toEqual([
      [201, expect.any(String)],
      [400, "the distribution order is too large to announce (N bytes encoded, at most 524288)"],
    ]);
  });

  it("upserts by (externalDOID, externalRowID); lists by status; processing ids; one order's rows; PUT by id; isolation", async () => {
    const [account, other] = [randomUUID(), randomUUID()];
    const results = await write(account, [
      { externalDoid: "A", externalRowId: "1", quantity: 5 },
      { externalDoid: "A", externalRowId: "2", quantity: 5, deliveredQuantity: 5 },
      { externalDoid: "B", externalRowId: "1", quantity: 5, deliveredQuantity: 5 },
      { externalDoid: "C", externalRowId: "1", quantity: 5, allocatedQuantity: 5 },
      { externalDoid: "", externalRowId: "1", quantity: 5 },
      { externalDoid: "C", externalRowId: "2", quantity: -1 },
    ]);
    expect(results.map((r) => r.result?.statusCode)).toEqual([201, 201, 201, 201, 400, 400]);
    expect(results[4].result).toMatchObject({ referenceField: "externalDOID/externalRowID", message: "externalDOID: is required" });
    const processing = await client.listProcessingDistributionOrders({ page: { page: 1, pageSize: 10 } }, as(account));
    expect([processing.externalDoids, processing.totalCount]).toEqual([["A", "C"], 2]);
    const completed = await client.listDistributionOrders({ status: "COMPLETED", page: { page: 1, pageSize: 10 } }, as(account));
    expect(completed.distributionOrders.map((d) => `${d.externalDoid}/${d.externalRowId}`)).toEqual(["A/2", "B/1"]);
    expect(await codeOf(client.listDistributionOrders({ status: "DONE" }, as(account)))).toBe(Code.InvalidArgument);
    expect((await client.getDistributionOrder({ externalDoid: "A" }, as(account))).distributionOrders.map((d) => d.externalRowId)).toEqual(["1", "2"]);
    expect(await codeOf(client.getDistributionOrder({ externalDoid: "A" }, as(other)))).toBe(Code.NotFound);
    expect((await client.listDistributionOrders({}, as(other))).totalCount).toBe(0);

    const id = results[0].distributionOrder!.id;
    const [put] = await write(account, [{ id, externalDoid: "A", externalRowId: "1", quantity: 5, cancelledDate: at("2026-01-01T00:00:00Z") }], WriteMode.REPLACE);
    expect([put.result?.statusCode, put.distributionOrder?.status, put.distributionOrder?.id]).toEqual([200, "CANCELLED", id]);
    const [noId] = await write(account, [{ externalDoid: "A", externalRowId: "1" }], WriteMode.REPLACE);
    expect(noId.result?.statusCode).toBe(400);
    const [foreign] = await write(other, [{ id, externalDoid: "A", externalRowId: "1" }], WriteMode.REPLACE);
    expect(foreign.result?.statusCode).toBe(404);
    const [clash] = await write(account, [{ id, externalDoid: "A", externalRowId: "2", quantity: 1 }], WriteMode.REPLACE);
    expect(clash.result?.statusCode).toBe(404);
    // Two rows given one free key in one replace: the second is its 409, the first is written.
    const other1 = results[1].distributionOrder!.id;
    const both = await write(account, [
      { id, externalDoid: "Z", externalRowId: "9", quantity: 1 },
      { id: other1, externalDoid: "Z", externalRowId: "9", quantity: 2 },
    ], WriteMode.REPLACE);
    expect(both.map((r) => r.result?.statusCode)).toEqual([200, 409]);
    // A refused repeat still names its id: a later row of that id is refused too.
    const claimed = await write(account, [
      { id, externalDoid: "Y", externalRowId: "1", quantity: 1 },
      { id: other1, externalDoid: "Y", externalRowId: "1", quantity: 2 },
      { id: other1, externalDoid: "Y", externalRowId: "2", quantity: 3 },
    ], WriteMode.REPLACE);
    expect(claimed.map((r) => [r.result?.statusCode, r.result?.message])).toEqual([
      [200, "updated"],
      [409, "the row appears more than once in the request"],
      [409, "the row appears more than once in the request"],
    ]);
  });
});
