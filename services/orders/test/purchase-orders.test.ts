import { randomUUID } from "node:crypto";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { ordersMessagesV1, ordersV1, topics } from "@analytics/contracts";
import { codeOf, eventually, serviceUnderTest } from "@analytics/testing";
import { startOrdersService } from "../src/service";

const { OrdersService, WriteMode } = ordersV1;
type OrderInit = MessageInitShape<typeof ordersV1.PurchaseOrderSchema>;
type ListInit = Partial<Omit<ordersV1.ListPurchaseOrdersRequest, "$typeName" | "$unknown">>;
const at = (iso: string) => timestampFromDate(new Date(iso));

describe("orders service: purchase orders (real Postgres and JetStream)", () => {
  const orders = serviceUnderTest(OrdersService, startOrdersService, {
    schema: "orders",
    probe: [topics.ordersPurchaseOrderCreated.subject, topics.ordersPurchaseOrderUpdated.subject],
  });
  const { client, db, as, published } = orders;

  const order = (no: string, extra: Record<string, unknown> = {}): OrderInit => ({
    externalPoNo: no,
    orderDate: at("2026-03-01T10:00:00Z"),
    deliveryDate: at("2026-04-01T00:00:00Z"),
    externalWarehouseId: "WH1",
    supplier: "Acme",
    items: [
      { externalRowId: "1", key: "K1", skuId: "sku-1", quantity: 10, totalPriceNet: { value: "19.90" }, deliveries: [{ deliveryId: "d1", quantity: 3 }, { quantity: 2 }] },
      { externalRowId: "2", key: "K2", skuId: "sku-2", quantity: 5, deliveryDate: at("2026-05-01T00:00:00Z"), externalWarehouseId: "WH2" },
    ],
    ...extra,
  }) as OrderInit;
  const write = async (account: string, key: string, orders: OrderInit[], mode = WriteMode.UPSERT, global = false) =>
    (await client.writePurchaseOrders({ purchaseOrders: orders, mode, global }, as(account, key))).results;
  const messagesOf = (account: string) =>
    published
      .filter((m) => m.accountId === account)
      .map((m) => fromBinary(ordersMessagesV1.PurchaseOrderChangedSchema, m.payload));

  it("creates an order with items (201), derives deliveredQuantity, keeps exact decimals, and announces its lines", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const [r] = await write(account, key, [order("PO-1")], WriteMode.CREATE);
    expect(r.result).toMatchObject({ statusCode: 201, reference: "PO-1", referenceField: "externalPONo" });
    const po = r.purchaseOrder!;
    expect(po.apiKeyId).toBe(key);
    expect(po.items.map((i) => i.deliveredQuantity)).toEqual([5, 0]);
    expect(po.items[0].totalPriceNet?.value).toBe("19.90");
    const [m] = await eventually(async () => messagesOf(account).length === 1 && messagesOf(account));
    expect(m).toMatchObject({ externalPoNo: "PO-1", purchaseOrderId: po.id, version: 1n, isDraft: false, wasDraft: false });
    expect(m.lines.map((l) => [l.skuId, l.externalWarehouseId, l.deliveryDate, l.quantity, l.openQuantity])).toEqual([
      ["sku-1", "WH1", "2026-04-01", 10, 5],
      ["sku-2", "WH2", "2026-05-01", 5, 5],
    ]);
    // Not a draft, never was one: no queue payload travels.
    expect(m.purchaseOrder).toBeUndefined();
    // A second create of the same number is that order's 409.
    const [again] = await write(account, key, [order("PO-1")], WriteMode.CREATE);
    expect(again.result?.statusCode).toBe(409);
    // A number repeated in one request: each item after the first is its 409; an invalid one names nothing.
    const repeated = await write(account, key, [order("PO-2", { externalWarehouseId: "x".repeat(501) }), order("PO-2"), order("PO-2")]);
    expect(repeated.map((r) => [r.result?.statusCode, r.result?.message])).toEqual([
      [400, expect.stringContaining("externalWarehouseID")],
      [201, "created"],
      [409, "externalPONo appears more than once in the request"],
    ]);
  });

  it("answers and announces a written order exactly as GET then reads it (built from the write, not read back)", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const odd = order("PO-W", {
      deliveryStatus: 4,
      orderDate: { seconds: 1772359200n, nanos: 123_456_789 },
      attributes: { factory: "Porto", nested: { b: 1, a: [true, null, "x"] } },
      items: [
        { externalRowId: "1", key: "K1", skuId: "sku-1", quantity: 10, totalPriceNet: { value: "0019.90" }, totalPriceVat: { value: "-0.00" }, deliveries: [{ deliveryId: "d1", quantity: 3, deliveryDate: at("2026-04-02T00:00:00Z") }] },
        { externalRowId: "2", key: "K2", skuId: "sku-2", quantity: 5, totalPriceNet: { value: "-007" }, attributes: { brandName: "Go" } },
        { key: "K3", skuId: "sku-3", quantity: 0 },
      ],
    });
    for (const mode of [WriteMode.CREATE, WriteMode.UPSERT]) {
      const [r] = await write(account, key, [mode === WriteMode.CREATE ? odd : { ...odd, supplier: "Other" }], mode);
      const got = (await client.getPurchaseOrder({ externalPoNo: "PO-W" }, as(account, key))).purchaseOrder!;
      expect(r.purchaseOrder).toEqual(got);
      expect(got.items.map((i) => [i.totalPriceNet?.value, i.totalPriceVat?.value])).toEqual([
        ["19.90", "0.00"],
        ["-7", undefined],
        [undefined, undefined],
      ]);
    }
    const ms = await eventually(async () => messagesOf(account).length === 2 && messagesOf(account));
    const got = (await client.getPurchaseOrder({ externalPoNo: "PO-W" }, as(account, key))).purchaseOrder!;
    expect(ms[1].purchaseOrder).toEqual(got);
    expect(ms[1].lines.map((l) => l.itemId)).toEqual(got.items.map((i) => i.id));
  });

  it("re-sending a batch changes nothing: 200 unchanged, same item ids, updatedAt kept, no message", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const batch = [order("A"), order("B", { deliveryStatus: 4 })];
    const first = await write(account, key, batch);
    expect(first.map((r) => r.result?.statusCode)).toEqual([201, 201]);
    await eventually(async () => messagesOf(account).length === 2);
    const second = await write(account, key, batch);
    expect(second.map((r) => [r.result?.statusCode, r.result?.message])).toEqual([
      [200, "unchanged"],
      [200, "unchanged"],
    ]);
    expect(second.map((r) => r.purchaseOrder?.updatedAt)).toEqual(first.map((r) => r.purchaseOrder?.updatedAt));
    expect(second[0].purchaseOrder?.items.map((i) => i.id)).toEqual(first[0].purchaseOrder?.items.map((i) => i.id));
    const [{ count }] = await db("purchase_order_items").where({ account_id: account }).count({ count: "*" });
    expect(Number(count)).toBe(4);
    // A changed order is replaced (items too), keeps the id of a row that stays, and is announced once.
    const changed = await write(account, key, [order("A", { items: [{ externalRowId: "1", key: "K1", skuId: "sku-1", quantity: 7 }] }), order("B")]);
    expect(changed.map((r) => r.result?.statusCode)).toEqual([200, 200]);
    expect(changed[0].purchaseOrder?.items.map((i) => i.id)).toEqual([first[0].purchaseOrder?.items[0].id]);
    const ms = await eventually(async () => messagesOf(account).length === 4 && messagesOf(account));
    const b = ms.filter((m) => m.externalPoNo === "B");
    expect(b.map((m) => [m.version, m.wasDraft, m.isDraft])).toEqual([
      [1n, false, true],
      [2n, true, false],
    ]);
    expect(b.map((m) => m.purchaseOrder?.deliveryStatus)).toEqual([4, 0]);
    // Nothing more came for the unchanged re-send.
    expect(ms.filter((m) => m.externalPoNo === "A").map((m) => m.version)).toEqual([1n, 2n]);
  });

  it("an order too large to announce is its own 400 in a batch, checked before anything is written; the others are written and announced", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    // A draft's message carries the whole order: 1.2 MB of attributes is over what the bus takes.
    const hugeDraft = order("HUGE-DRAFT", { deliveryStatus: 4, attributes: { note: "x".repeat(1_200_000) } });
    // Any order's message carries a line per item with its warehouse.
    const manyLines = order("MANY-LINES", {
      items: Array.from({ length: 5000 }, (_, i) => ({ externalRowId: String(i), key: "K1", skuId: "sku-1", quantity: 1, externalWarehouseId: `WH-${"w".repeat(200)}` })),
    });
    // Large, but announceable: the bound sends it to the exact check, which lets it through.
    const largeDraft = order("LARGE-DRAFT", { deliveryStatus: 4, attributes: { note: "y".repeat(300_000) } });
    // 300 kB of JSON, but 1.6 MB encoded: a Struct's list of small numbers takes 5.5 bytes per JSON character.
    const numbers = order("NUMBERS", { deliveryStatus: 4, attributes: { list: Array.from({ length: 150_000 }, () => 0) } });
    const batch = [...Array.from({ length: 120 }, (_, i) => order(`N${i}`)), hugeDraft, manyLines, largeDraft, numbers];
    const results = await write(account, key, batch);
    expect(results.slice(120).map((r) => [r.result?.reference, r.result?.statusCode, r.result?.message.replace(/\d+ bytes/, "N bytes")])).toEqual([
      ["HUGE-DRAFT", 400, expect.stringMatching(/^the purchase order is too large to announce \(N bytes encoded, at most \d+\)/)],
      ["MANY-LINES", 400, expect.stringContaining("too large to announce")],
      ["LARGE-DRAFT", 201, "created"],
      ["NUMBERS", 400, expect.stringContaining("too large to announce")],
    ]);
    expect(results.slice(0, 120).every((r) => r.result?.statusCode === 201)).toBe(true);
    const stored = await db("purchase_orders").where({ account_id: account }).pluck("external_po_no");
    expect(stored).not.toContain("HUGE-DRAFT");
    expect(stored).not.toContain("MANY-LINES");
    expect(stored).toHaveLength(121);
    await eventually(async () => messagesOf(account).length === 121);
    // All or nothing (POST): one such order fails the request and nothing is written.
    await expect(client.writePurchaseOrders({ purchaseOrders: [order("ATOMIC-1"), hugeDraft], mode: WriteMode.CREATE, atomic: true }, as(account, key))).resolves.toMatchObject({
      results: [{ result: { statusCode: 0 } }, { result: { statusCode: 400 } }],
    });
    expect(await db("purchase_orders").where({ account_id: account, external_po_no: "ATOMIC-1" }).first()).toBeUndefined();
  });

  it("API-key origin: another key's order in a batch is that item's 409 until global; lists and gets follow the key", async () => {
    const [account, key1, key2] = [randomUUID(), randomUUID(), randomUUID()];
    await write(account, key1, [order("K1-PO")]);
    const [denied, mine] = await write(account, key2, [order("K1-PO", { label: "x" }), order("K2-PO")]);
    expect(denied.result?.statusCode).toBe(409);
    expect(mine.result?.statusCode).toBe(201);
    const [allowed] = await write(account, key2, [order("K1-PO", { label: "x" })], WriteMode.UPSERT, true);
    expect(allowed.result?.statusCode).toBe(200);
    expect(allowed.purchaseOrder?.apiKeyId).toBe(key1);
    const own = await client.listPurchaseOrders({ page: { page: 1, pageSize: 10 } }, as(account, key2));
    expect(own.purchaseOrders.map((p) => p.externalPoNo)).toEqual(["K2-PO"]);
    const all = await client.listPurchaseOrders({ page: { page: 1, pageSize: 10 }, global: true }, as(account, key2));
    expect(all.purchaseOrders.map((p) => p.externalPoNo)).toEqual(["K1-PO", "K2-PO"]);
    expect(all.totalCount).toBe(2);
    expect(await codeOf(client.getPurchaseOrder({ externalPoNo: "K1-PO" }, as(account, key2)))).toBe(Code.NotFound);
    expect((await client.getPurchaseOrder({ externalPoNo: "K1-PO", global: true }, as(account, key2))).purchaseOrder?.label).toBe("x");
    expect((await client.getPurchaseOrder({}, as(account, key1))).purchaseOrder?.externalPoNo).toBe("K1-PO");
  });

  it("account isolation: another account's order is 404 and never listed or changed", async () => {
    const [a, b, key] = [randomUUID(), randomUUID(), randomUUID()];
    const [r] = await write(a, key, [order("ISO")]);
    expect(await codeOf(client.getPurchaseOrder({ externalPoNo: "ISO", global: true }, as(b, key)))).toBe(Code.NotFound);
    expect((await client.listPurchaseOrders({ global: true }, as(b, key))).totalCount).toBe(0);
    const [replace] = await write(b, key, [{ ...order("ISO"), id: r.purchaseOrder!.id }], WriteMode.REPLACE, true);
    expect(replace.result?.statusCode).toBe(404);
    // The same number in another account is another order.
    const [other] = await write(b, key, [order("ISO")]);
    expect(other.result?.statusCode).toBe(201);
    expect(other.purchaseOrder?.id).not.toBe(r.purchaseOrder?.id);
  });

  it("PUT replaces by id (items too); without id it is 400; atomic writes nothing when one order fails", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const [r] = await write(account, key, [order("R1")], WriteMode.CREATE);
    const [noId] = await write(account, key, [order("R1")], WriteMode.REPLACE);
    expect(noId.result?.statusCode).toBe(400);
    expect(noId.violations.map((v) => v.path)).toContain("id");
    const [replaced] = await write(account, key, [{ externalPoNo: "R1-NEW", id: r.purchaseOrder!.id, items: [] }], WriteMode.REPLACE);
    expect(replaced.result?.statusCode).toBe(200);
    expect(replaced.purchaseOrder).toMatchObject({ externalPoNo: "R1-NEW", items: [] });
    expect(replaced.purchaseOrder?.supplier).toBeUndefined();
    const res = await client.writePurchaseOrders({ purchaseOrders: [order("OK"), order("BAD", { deliveryStatus: 9 })], mode: WriteMode.CREATE, atomic: true }, as(account, key));
    expect(res.results.map((x) => x.result?.statusCode)).toEqual([0, 400]);
    expect(await codeOf(client.getPurchaseOrder({ externalPoNo: "OK" }, as(account, key)))).toBe(Code.NotFound);
  });

  it("bad orders are their own 400 naming the field: dates out of range, duplicate externalRowID, missing number", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    const results = await write(account, key, [
      order("D1", { orderDate: at("1969-12-31T23:59:59Z") }),
      order("D2", { deliveryDate: at("2106-01-01T00:00:00Z") }),
      order("D3", { items: [{ externalRowId: "1", quantity: 1 }, { externalRowId: "1", quantity: 2 }] }),
      order(""),
      order("D5", { orderDate: at("2105-12-31T23:59:59Z") }),
      order("D6", { supplier: "a\u0000b", items: [{ quantity: 1 }, { key: "k\u0000", totalPriceNet: { value: "1e5" }, quantity: 1, deliveries: [{ quantity: -1 }] }] }),
    ]);
    expect(results.map((r) => r.result?.statusCode)).toEqual([400, 400, 400, 400, 201, 400]);
    expect(results.slice(0, 4).map((r) => r.violations[0]?.path)).toEqual(["orderDate", "deliveryDate", "items[1].externalRowID", "externalPONo"]);
    expect(results[5].violations.map((v) => v.path)).toEqual(["supplier", "items[1].key", "items[1].totalPriceNet", "items[1].deliveries[0].quantity"]);
    expect(await codeOf(client.writePurchaseOrders({ purchaseOrders: Array.from({ length: 501 }, (_, i) => order(`X${i}`)) }, as(account, key)))).toBe(Code.InvalidArgument);
    expect((await client.listPurchaseOrders({ global: true }, as(account, key))).totalCount).toBe(1);
  });

  it("lists with the processing filter and the date bounds (lower inclusive, upper exclusive)", async () => {
    const [account, key] = [randomUUID(), randomUUID()];
    await write(account, key, [
      order("S0", { deliveryStatus: 0, orderDate: at("2026-01-01T00:00:00Z") }),
      order("S2", { deliveryStatus: 2, orderDate: at("2026-02-01T00:00:00Z") }),
      order("S5", { deliveryStatus: 5, orderDate: at("2026-03-01T00:00:00Z") }),
    ]);
    const list = async (req: ListInit) =>
      (await client.listPurchaseOrders({ page: { page: 1, pageSize: 10 }, ...req }, as(account, key))).purchaseOrders.map((p) => p.externalPoNo);
    expect(await list({ processing: true })).toEqual(["S0", "S5"]);
    expect(await list({ orderDateFrom: at("2026-02-01T00:00:00Z"), orderDateTo: at("2026-03-01T00:00:00Z") })).toEqual(["S2"]);
    expect(await list({ createdTo: at("2000-01-01T00:00:00Z") })).toEqual([]);
    expect(await list({ updatedFrom: at("2000-01-01T00:00:00Z") })).toEqual(["S0", "S2", "S5"]);
    const page2 = await client.listPurchaseOrders({ page: { page: 2, pageSize: 2 } }, as(account, key));
    expect([page2.purchaseOrders.map((p) => p.externalPoNo), page2.totalCount]).toEqual([["S5"], 3]);
    expect(await codeOf(client.listPurchaseOrders({ page: { page: 1, pageSize: 1001 } }, as(account, key)))).toBe(Code.InvalidArgument);
  });
});
