import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary, toJson, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import pino from "pino";
import { ordersMessagesV1, ordersV1, topics } from "@analytics/contracts";
import { inTransaction } from "@analytics/db";
import { importRuns, type ServiceContext } from "@analytics/rpc";
import { serviceUnderTest } from "@analytics/testing";
import { orderImports } from "../src/imports";
import { spliceable, splicedTransactionChanged, transactionChanged } from "../src/transaction-changed";
import { startOrdersService } from "../src/service";

type TxInit = MessageInitShape<typeof ordersV1.TransactionSchema>;

/**
 * The staged write an import chunk of transactions goes through (transaction-staging.ts) against
 * POST /transactions/batch: the same lines in one account through the import's apply and in
 * another through the batch call answer the same, store the same rows and shipments, and put the
 * same messages on the outbox.
 */
describe("orders service: transactions staged for an import are written as the batch writes them", () => {
  const orders = serviceUnderTest(ordersV1.OrdersService, startOrdersService, { schema: "orders" });
  const { client, as, db } = orders;
  const logger = pino({ level: "silent" });

  const sale = (id: string, extra: Record<string, unknown> = {}): TxInit =>
    ({
      externalTransactionId: id,
      channel: 1,
      type: 1,
      currencyCode: "SEK",
      createdDate: { seconds: 1793527200n },
      items: [
        { externalItemId: "i1", key: "K1", quantity: 5, moneyItemTotalNet: { value: "100.10" }, type: 1, customFields: { gift: true, note: "a\tb\\c\nd", n: 1.5 } },
        { externalItemId: "i2", key: "K2", quantity: 1, type: 2 },
      ],
      statements: [{ name: "shipping", type: 3, priceNet: { value: "49.00" } }],
      attributes: { loyalty: "gold" },
      ...extra,
    }) as TxInit;

  /** The lines as an import applies them: one chunk, in the worker's transaction. */
  const imported = async (account: string, lines: TxInit[]) => {
    const chunk = toBinary(ordersV1.WriteTransactionsRequestSchema, create(ordersV1.WriteTransactionsRequestSchema, { transactions: lines }));
    return inTransaction(db, (tx) => orderImports.resources.transactions.apply({ db: tx, relay: { kick: () => undefined }, logger } as unknown as ServiceContext, { accountId: account, apiKeyId: randomUUID() }, chunk));
  };
  /** The lines through the batch call, a run of distinct keys a call (as an import splits a chunk), answered as an import's results are. */
  const batched = async (account: string, lines: TxInit[]) => {
    const outcomes = [];
    for (const [from, to] of importRuns(lines.map((l) => l.externalTransactionId!))) {
      const { results } = await client.writeTransactions({ transactions: lines.slice(from, to), mode: ordersV1.WriteMode.UPSERT }, as(account));
      outcomes.push(...results.map((r) => ({ ...r.result!, message: r.violations.map((v) => `${v.path}: ${v.message}`).join("; ") || r.result!.message })));
    }
    return outcomes.map(({ statusCode, reference, referenceField, message }) => ({ statusCode, reference, referenceField, message }));
  };
  const ship = (account: string, externalTransactionId: string, externalItemId: string, quantity: number) =>
    client.addShipments({ externalTransactionId, externalItemId, shipments: [{ quantity, shipmentId: `s-${externalItemId}-${quantity}` }] }, as(account));

  /** The account's transactions, shipments and messages, without what differs between accounts (ids, times); each message's ids and times checked against its row. */
  const stateOf = async (account: string) => {
    const rows = await db("transactions").where({ account_id: account }).orderBy("seq").select("id", "seq", "external_transaction_id", "body", "version", "created_at", "updated_at");
    const byId = new Map(rows.map((r) => [r.id, r]));
    const shipments = await db("shipments as s").join("transactions as t", "t.id", "s.transaction_id").where("s.account_id", account).orderBy("s.seq").select("t.external_transaction_id", "s.external_item_id", "s.body", "s.quantity");
    const outbox = await db("outbox").where({ account_id: account }).orderBy("seq").select("subject", "aggregate", "payload");
    const messages = outbox.map((m) => {
      const { accountId, transactionId, version, transaction } = fromBinary(ordersMessagesV1.TransactionChangedSchema, m.payload);
      const row = byId.get(transactionId)!;
      const { id, seq, createdAt, updatedAt, ...sent } = transaction!;
      expect([accountId, m.aggregate, id, seq, createdAt]).toEqual([account, `transaction:${transactionId}`, transactionId, BigInt(row.seq), timestampFromDate(row.created_at)]);
      // The row's latest message has its times.
      if (version === BigInt(row.version)) expect(updatedAt).toEqual(timestampFromDate(row.updated_at));
      return { subject: m.subject, version, ext: row.external_transaction_id, updatedAtIsCreatedAt: version === 1n ? Number(updatedAt!.seconds) === Number(createdAt!.seconds) : undefined, sent };
    });
    return { rows: rows.map(({ external_transaction_id, body, version }) => ({ external_transaction_id, body, version })), shipments, messages, payloads: outbox.map((m) => m.payload as Buffer) };
  };

  /**
   * Each import message's bytes against the batch's message for the same line: the batch's, with
   * the ids and times the import's rows got, encoded as the batch encodes it, byte for byte.
   */
  const expectSameBytes = (viaBatch: Buffer[], viaImport: Buffer[]) => {
    expect(viaImport.length).toBe(viaBatch.length);
    viaImport.forEach((payload, i) => {
      const batch = fromBinary(ordersMessagesV1.TransactionChangedSchema, viaBatch[i]);
      const { accountId, transactionId, transaction } = fromBinary(ordersMessagesV1.TransactionChangedSchema, payload);
      Object.assign(batch, { accountId, transactionId });
      Object.assign(batch.transaction!, { id: transaction!.id, seq: transaction!.seq, createdAt: transaction!.createdAt, updatedAt: transaction!.updatedAt });
      expect(payload.toString("hex")).toBe(Buffer.from(toBinary(ordersMessagesV1.TransactionChangedSchema, batch)).toString("hex"));
    });
  };

  it("answers, stores and announces every line as the batch does: created, refused, unchanged, updated, below shipped, shipments kept and dropped, later line wins", async () => {
    const [viaBatch, viaImport] = [randomUUID(), randomUUID()];
    const rounds: TxInit[][] = [
      [sale("T1"), sale("T2"), sale("BAD", { channel: 3 }), sale("T3", { currencyCode: "XXXX" }), sale("T5"), sale("T6", { items: [{ externalItemId: "i1", quantity: 2 }] })],
      // T1 as stored; T2 without the item that shipped; T3 now valid; T5 below what it shipped; T6 changed, keeping its shipped item.
      [sale("T1"), sale("T2", { items: [{ externalItemId: "i2", quantity: 1 }] }), sale("T3"), sale("T5", { items: [{ externalItemId: "i1", quantity: 1 }] }), sale("T6", { market: "SE", items: [{ externalItemId: "i1", quantity: 2 }] })],
      // A key twice in one chunk: the later line wins; an identical re-send between them is unchanged;
      // a line refused in one run of the chunk stays refused in the next.
      [sale("T5", { items: [{ externalItemId: "i1", quantity: 1 }] }), sale("T7"), sale("T1", { market: "NO" }), sale("T7"), sale("T7", { market: "DK" }), sale("", { channel: 1 })],
    ];
    const answers: Record<string, unknown[]> = { [viaBatch]: [], [viaImport]: [] };
    for (const [round, lines] of rounds.entries()) {
      answers[viaBatch].push(await batched(viaBatch, lines));
      answers[viaImport].push(await imported(viaImport, lines));
      if (round === 0) {
        for (const account of [viaBatch, viaImport]) {
          await ship(account, "T2", "i1", 2);
          await ship(account, "T5", "i1", 3);
          await ship(account, "T6", "i1", 1);
        }
      }
    }
    expect(answers[viaImport]).toEqual(answers[viaBatch]);
    expect((answers[viaImport] as { statusCode: number; message: string }[][]).map((r) => r.map((o) => `${o.statusCode} ${o.message.split(" ")[0]}`))).toEqual([
      ["201 created", "201 created", "400 channel:", "400 currencyCode:", "201 created", "201 created"],
      ["200 unchanged", "200 updated", "201 created", "400 items[0].quantity:", "200 updated"],
      ["400 items[0].quantity:", "201 created", "200 updated", "200 unchanged", "200 updated", "400 externalTransactionID:"],
    ]);
    const [{ payloads: batchPayloads, ...batchState }, { payloads: importPayloads, ...importState }] = [await stateOf(viaBatch), await stateOf(viaImport)];
    expect(importState).toEqual(batchState);
    expectSameBytes(batchPayloads, importPayloads);
    // What the scenario is about is there: shipments kept (T6), dropped with their item (T2), and announced.
    expect(importState.shipments.map((s) => `${s.external_transaction_id}/${s.external_item_id}`)).toEqual(["T5/i1", "T6/i1"]);
    expect(importState.messages.find((m) => m.ext === "T6" && m.sent.market === "SE")?.sent.items[0].shipments.map((s) => s.quantity)).toEqual([1]);
  });

  it("splices the messages of transactions without Structs from the bytes they came in, byte for byte the batch's", async () => {
    const [viaBatch, viaImport] = [randomUUID(), randomUUID()];
    // No Struct: spliced. Defaults set explicitly, nanos, several items and statements, no items at all.
    const plain = (id: string, extra: Record<string, unknown> = {}): TxInit =>
      ({
        externalTransactionId: id,
        channel: 2,
        externalInfo: "",
        createdDate: { seconds: 1793527200n, nanos: 5000 },
        completedDate: { seconds: 1793527260n },
        items: [
          { externalItemId: "i1", key: "K1", quantity: 0, moneyItemTotalNet: { value: "-0.5" }, vatValue: { value: "0" } },
          { externalItemId: "i2", sku: "S2", ean: "é ✓", quantity: 3, deliveryDate: { seconds: 1793527200n } },
        ],
        statements: [{ type: 2, priceNet: { value: "1" } }, {}],
        ...extra,
      }) as TxInit;
    const rounds: TxInit[][] = [
      [plain("P1"), plain("P2", { items: [] }), plain("P3"), sale("S1"), plain("P4")],
      // P4 keeps the shipment of its item i2: its message carries it.
      [plain("P1"), plain("P2", { market: "SE" }), plain("P3", { externalInfo: "x" }), plain("P3", { externalInfo: "y" }), plain("P4", { market: "NO" })],
    ];
    for (const [round, lines] of rounds.entries()) {
      expect(await imported(viaImport, lines)).toEqual(await batched(viaBatch, lines));
      if (round === 0) for (const account of [viaBatch, viaImport]) await ship(account, "P4", "i2", 1);
    }
    const [{ payloads: batchPayloads, ...batchState }, { payloads: importPayloads, ...importState }] = [await stateOf(viaBatch), await stateOf(viaImport)];
    expect(importState).toEqual(batchState);
    expect(importState.messages.map((m) => `${m.subject.split(".").pop()} ${m.ext}`)).toEqual([
      "created P1", "created P2", "created P3", "created S1", "created P4", "updated P4", "updated P2", "updated P3", "updated P3", "updated P4",
    ]);
    expect(importState.messages.at(-1)?.sent.items[1].shipments.map((s) => s.quantity)).toEqual([1]);
    expectSameBytes(batchPayloads, importPayloads);
  });

  it("splices only bytes that are the stored body: none with a Struct, a read-only field or a field it does not know", () => {
    const bytes = (t: TxInit) => toBinary(ordersV1.TransactionSchema, create(ordersV1.TransactionSchema, t));
    const plain: TxInit = { externalTransactionId: "P", items: [{ externalItemId: "i1", quantity: 1 }] };
    expect(spliceable(bytes(plain))).toBe(true);
    expect(spliceable(bytes({ ...plain, attributes: { a: 1 } }))).toBe(false);
    expect(spliceable(bytes({ ...plain, items: [{ externalItemId: "i1", customFields: {} }] }))).toBe(false);
    expect(spliceable(bytes({ ...plain, id: randomUUID() }))).toBe(false);
    expect(spliceable(bytes({ ...plain, seq: 3n }))).toBe(false);
    expect(spliceable(bytes({ ...plain, items: [{ externalItemId: "i1", shipments: [{ quantity: 1 }] }] }))).toBe(false);
    // A field of a newer proto (99), at the top and in an item: the stored body drops it.
    expect(spliceable(new Uint8Array([...bytes(plain), 0x98, 0x06, 0x01]))).toBe(false);
    const item = toBinary(ordersV1.TransactionItemSchema, create(ordersV1.TransactionItemSchema, { externalItemId: "i1" }));
    expect(spliceable(new Uint8Array([0x8a, 0x01, item.length + 3, ...item, 0x98, 0x06, 0x01]))).toBe(false);
    // Fields out of their order.
    expect(spliceable(new Uint8Array([...bytes({ market: "SE" }), ...bytes({ externalTransactionId: "P" })]))).toBe(false);
  });

  it("splices what toBinary writes, whatever the sizes of the numbers and the transaction", () => {
    const t = create(ordersV1.TransactionSchema, { externalTransactionId: "x".repeat(300), items: [{ externalItemId: "i1", quantity: 2 }] });
    const [account, id] = [randomUUID(), randomUUID()];
    for (const [seq, version, created, updated] of [
      ["1", 1, new Date(1000), new Date(1000)],
      ["1099511627776", 300, new Date("2026-11-29T10:00:00.123Z"), new Date("2027-01-01T00:00:00Z")],
    ] as const) {
      const assigned = { id, seq, version, created_at: created, updated_at: updated };
      const stored = { ...assigned, external_transaction_id: t.externalTransactionId, body: toJson(ordersV1.TransactionSchema, t) };
      const expected = toBinary(ordersMessagesV1.TransactionChangedSchema, create(ordersMessagesV1.TransactionChangedSchema, transactionChanged(topics.ordersTransactionCreated, account, stored, []).message));
      expect(Buffer.from(splicedTransactionChanged(account, assigned, toBinary(ordersV1.TransactionSchema, t))).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
    }
  });

  it("refuses a transaction too large to announce as the batch does, the chunk it came in being larger still", async () => {
    const [viaBatch, viaImport] = [randomUUID(), randomUUID()];
    const lines = [sale("BIG", { statements: Array.from({ length: 60 }, (_, i) => ({ name: "x".repeat(400), customFields: { [`c${i}`]: "y".repeat(9000) } })) }), sale("SMALL")];
    const answer = await batched(viaBatch, lines);
    expect(answer.map((o) => o.message)).toEqual([expect.stringMatching(/too large to announce/), "created"]);
    expect(await imported(viaImport, lines)).toEqual(answer);
  });
});
