import { randomUUID } from "node:crypto";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import pg from "pg";
import { Code, type ConnectError } from "@connectrpc/connect";
import { ordersMessagesV1, ordersV1, topics } from "@analytics/contracts";
import { codeOf, eventually, serviceUnderTest } from "@analytics/testing";
import { startOrdersService } from "../src/service";

const { OrdersService, WriteMode } = ordersV1;
type TxInit = MessageInitShape<typeof ordersV1.TransactionSchema>;

describe("orders service: transactions and shipments (real Postgres and JetStream)", () => {
  const orders = serviceUnderTest(OrdersService, startOrdersService, {
    schema: "orders",
    probe: [topics.ordersTransactionCreated.subject, topics.ordersTransactionUpdated.subject],
  });
  const { client, as, published } = orders;

  const sale = (id: string, extra: Record<string, unknown> = {}): TxInit =>
    ({
      externalTransactionId: id,
      channel: 1,
      type: 1,
      currencyCode: "SEK",
      items: [
        { externalItemId: "i1", key: "K1", quantity: 5, moneyItemTotalNet: { value: "100.10" }, type: 1, customFields: { gift: true } },
        { externalItemId: "i2", key: "K2", quantity: 1, type: 2 },
      ],
      statements: [{ name: "shipping", type: 3, priceNet: { value: "49.00" } }],
      ...extra,
    }) as TxInit;
  const write = async (account: string, txs: TxInit[], mode = WriteMode.UPSERT) => (await client.writeTransactions({ transactions: txs, mode }, as(account))).results;

  it("creates, replaces by id and upserts by externalTransactionID with exact money and the contract's enums; isolation; announced", async () => {
    const [account, other] = [randomUUID(), randomUUID()];
    const [created] = await write(account, [sale("T1")], WriteMode.CREATE);
    expect(created.result).toMatchObject({ statusCode: 201, reference: "T1", referenceField: "externalTransactionID" });
    expect(created.transaction?.items[0].moneyItemTotalNet?.value).toBe("100.10");
    expect(created.transaction?.statements[0].priceNet?.value).toBe("49.00");
    expect((await write(account, [sale("T1")], WriteMode.CREATE))[0].result?.statusCode).toBe(409);
    const bad = await write(account, [sale("T2", { channel: 3 }), sale("T3", { statements: [{ type: 6 }] }), sale(""), sale("T4", { currencyCode: "XXXX" })]);
    expect(bad.map((r) => [r.result?.statusCode, r.violations[0]?.path])).toEqual([
      [400, "channel"],
      [400, "statements[0].type"],
      [400, "externalTransactionID"],
      [400, "currencyCode"],
    ]);
    const [replaced] = await write(account, [{ ...sale("T1", { market: "SE" }), id: created.transaction!.id }], WriteMode.REPLACE);
    expect([replaced.result?.statusCode, replaced.transaction?.market]).toEqual([200, "SE"]);
    expect((await write(account, [sale("T1")], WriteMode.REPLACE))[0].result?.statusCode).toBe(400);
    expect((await write(other, [{ ...sale("T1"), id: created.transaction!.id }], WriteMode.REPLACE))[0].result?.statusCode).toBe(404);
    expect((await write(account, [sale("T1", { market: "NO" })]))[0].result?.statusCode).toBe(200);
    expect((await client.getTransaction({ externalTransactionId: "T1" }, as(account))).transaction?.market).toBe("NO");
    expect((await client.getTransaction({}, as(account))).transaction?.externalTransactionId).toBe("T1");
    expect(await codeOf(client.getTransaction({ externalTransactionId: "T1" }, as(other)))).toBe(Code.NotFound);
    expect((await client.listTransactions({}, as(other))).totalCount).toBe(0);
    expect((await client.listTransactions({}, as(account))).transactions.map((x) => x.externalTransactionId)).toEqual(["T1"]);
    const versions = await eventually(async () => {
      const ms = published.filter((m) => m.accountId === account);
      return ms.length === 3 && ms.map((m) => fromBinary(ordersMessagesV1.TransactionChangedSchema, m.payload).version);
    });
    expect(versions).toEqual([1n, 2n, 3n]);
  });

  it("a transaction too large to announce is its own 400 naming its size; the rest of the batch is written", async () => {
    const account = randomUUID();
    const results = await write(account, [sale("T-OK"), sale("T-HUGE", { attributes: { note: "x".repeat(600_000) } })]);
    expect(results.map((r) => [r.result?.reference, r.result?.statusCode])).toEqual([
      ["T-OK", 201],
      ["T-HUGE", 400],
    ]);
    expect(results[1].result?.message).toMatch(/^the transaction is too large to announce \(\d+ bytes encoded, at most 524288\)/);
    expect(await codeOf(client.getTransaction({ externalTransactionId: "T-HUGE" }, as(account)))).toBe(Code.NotFound);
  });

  it("caps an item's shipped total at its quantity, also under 20 concurrent posts", async () => {
    const account = randomUUID();
    await write(account, [sale("S1")]);
    const ship = (quantity: number, item = "i1") => client.addShipments({ externalTransactionId: "S1", externalItemId: item, shipments: [{ quantity, shipmentId: randomUUID() }] }, as(account));
    expect((await ship(2)).transaction?.items[0].shipments.map((s) => s.quantity)).toEqual([2]);
    expect(await codeOf(ship(4))).toBe(Code.InvalidArgument);
    expect(await codeOf(ship(1, "nope"))).toBe(Code.NotFound);
    expect(await codeOf(client.addShipments({ externalTransactionId: "S1", externalItemId: "i1", shipments: [{ quantity: 1 }] }, as(randomUUID())))).toBe(Code.NotFound);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => codeOf(ship(1))));
    expect(outcomes.filter((c) => c === undefined).length).toBe(3);
    expect(outcomes.filter((c) => c === Code.InvalidArgument).length).toBe(17);
    const stored = (await client.getTransaction({ externalTransactionId: "S1" }, as(account))).transaction!;
    expect(stored.items[0].shipments.reduce((s, x) => s + x.quantity, 0)).toBe(5);
    // A replace keeps the shipments of items that stay.
    await write(account, [sale("S1", { market: "DK" })]);
    expect((await client.getTransaction({ externalTransactionId: "S1" }, as(account))).transaction!.items[0].shipments.length).toBe(4);
  });

  const withQuantity = (id: string, quantity: number, extra: Record<string, unknown> = {}) => sale(id, { items: [{ externalItemId: "i1", key: "K1", quantity }, { externalItemId: "i2", key: "K2", quantity: 1 }], ...extra });
  const shipmentsOfItem = async (account: string, id: string, item = "i1") =>
    (await client.getTransaction({ externalTransactionId: id }, as(account))).transaction!.items.find((i) => i.externalItemId === item)?.shipments.map((s) => s.quantity);

  it("a write never leaves an item below what it has shipped (400 naming the item), and an item it removes loses its shipments", async () => {
    const account = randomUUID();
    const [created] = await write(account, [withQuantity("Q1", 5)]);
    await client.addShipments({ externalTransactionId: "Q1", externalItemId: "i1", shipments: [{ quantity: 4 }] }, as(account));
    const [lowered] = await write(account, [withQuantity("Q1", 3)]);
    expect([lowered.result?.statusCode, lowered.violations.map((v) => v.path)]).toEqual([400, ["items[0].quantity"]]);
    expect(lowered.result?.message).toContain("4 already shipped");
    const [replaced] = await write(account, [{ ...withQuantity("Q1", 2), id: created.transaction!.id }], WriteMode.REPLACE);
    expect(replaced.result?.statusCode).toBe(400);
    expect((await write(account, [withQuantity("Q1", 4)]))[0].result?.statusCode).toBe(200);
    expect(await shipmentsOfItem(account, "Q1")).toEqual([4]);
    // i1 removed, then sent again: it starts with nothing shipped.
    expect((await write(account, [sale("Q1", { items: [{ externalItemId: "i2", key: "K2", quantity: 1 }] })]))[0].result?.statusCode).toBe(200);
    expect((await write(account, [withQuantity("Q1", 1)]))[0].result?.statusCode).toBe(200);
    expect(await shipmentsOfItem(account, "Q1")).toEqual([]);
  });

  it("a write that races a shipment post waits for the post's row lock and counts its shipments", async () => {
    const account = randomUUID();
    await write(account, [withQuantity("Q2", 10)]);
    // Another post holds the transaction's row and has shipped 9, not yet committed.
    const db = new pg.Client({ connectionString: orders.url });
    await db.connect();
    try {
      await db.query("BEGIN");
      const { rows } = await db.query("SELECT id FROM orders.transactions WHERE account_id = $1 AND external_transaction_id = 'Q2' FOR UPDATE", [account]);
      await db.query("INSERT INTO orders.shipments (account_id, transaction_id, external_item_id, body, quantity) VALUES ($1, $2, 'i1', '{\"quantity\": 9}', 9)", [account, rows[0].id]);
      const lowering = write(account, [withQuantity("Q2", 3)]);
      await eventually(async () => (await db.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n > 0, 10_000, "the write waiting for the row lock");
      await db.query("COMMIT");
      const [answer] = await lowering;
      expect([answer.result?.statusCode, answer.violations.map((v) => v.path)]).toEqual([400, ["items[0].quantity"]]);
    } finally {
      await db.end();
    }
    expect((await client.getTransaction({ externalTransactionId: "Q2" }, as(account))).transaction!.items[0].quantity).toBe(10);
  });

  it("refuses an externalTransactionID repeated in one request (409 after the first), and a repeated shipmentID before the shipments after it", async () => {
    const account = randomUUID();
    const results = await write(account, [sale("D1", { channel: 3 }), sale("D1"), sale("D2"), sale("D1")]);
    expect(results.map((r) => [r.result?.statusCode, r.result?.reference, r.result?.message])).toEqual([
      [400, "D1", expect.stringContaining("channel")],
      [201, "D1", "created"],
      [201, "D2", "created"],
      [409, "D1", "externalTransactionID appears more than once in the request"],
    ]);
    const post = (shipments: MessageInitShape<typeof ordersV1.ShipmentSchema>[]) => client.addShipments({ externalTransactionId: "D1", externalItemId: "i1", shipments }, as(account));
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: ConnectError) => [Code[e.code], e.rawMessage]);
    expect(await refusal(post([{ shipmentId: "P", quantity: 1 }, { quantity: 1 }, { shipmentId: "P", quantity: 1 }, { shipmentId: "Q", quantity: -1 }]))).toEqual([
      "InvalidArgument",
      "[2].shipmentID appears more than once in the request",
    ]);
    expect(await refusal(post([{ shipmentId: "P", quantity: -1 }, { shipmentId: "P", quantity: 1 }]))).toEqual(["InvalidArgument", expect.stringMatching(/^\[0\]\.quantity /)]);
  });

  it("a shipment re-posted with its shipmentID and the same values is not added again; with other values it is a 409", async () => {
    const account = randomUUID();
    await write(account, [withQuantity("Q3", 5)]);
    const post = (shipments: MessageInitShape<typeof ordersV1.ShipmentSchema>[]) => client.addShipments({ externalTransactionId: "Q3", externalItemId: "i1", shipments }, as(account));
    const shipment = { shipmentId: "P-1", quantity: 2, shipmentDate: { seconds: 1_780_000_000n, nanos: 0 } };
    const first = await post([shipment]);
    expect(first.added).toBe(1);
    const again = await post([shipment]);
    expect([again.added, again.transaction?.updatedAt]).toEqual([0, first.transaction?.updatedAt]);
    expect((await post([shipment, { shipmentId: "P-2", quantity: 1 }])).added).toBe(1);
    expect(await shipmentsOfItem(account, "Q3")).toEqual([2, 1]);
    expect(await codeOf(post([{ ...shipment, quantity: 3 }]))).toBe(Code.AlreadyExists);
    expect(await codeOf(post([{ shipmentId: "P-3", quantity: 1 }, { shipmentId: "P-3", quantity: 1 }]))).toBe(Code.InvalidArgument);
    // Without a shipmentID every post is a new shipment.
    await post([{ quantity: 1 }]);
    await post([{ quantity: 1 }]);
    expect(await shipmentsOfItem(account, "Q3")).toEqual([2, 1, 1, 1]);
  });
});
