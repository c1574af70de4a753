import { randomUUID } from "node:crypto";
import { fromBinary, toJson } from "@bufbuild/protobuf";
import { ordersMessagesV1, ordersV1, topics } from "@analytics/contracts";
import { eventually, serviceUnderTest } from "@analytics/testing";
import { announceStoredDistributionOrders } from "../src/distribution-orders";
import { startOrdersService } from "../src/service";
import { announceStoredTransactions } from "../src/transactions";

const { OrdersService, WriteMode } = ordersV1;

/**
 * The re-announcement planning's backfill is made of (migration 007): every stored transaction
 * and distribution order, of every account, page by page, reaches the bus through the real relay
 * on its backfilled subject, carrying what GET answers (shipments included) and its version.
 */
describe("orders service: re-announcing what is stored for planning (real Postgres and JetStream)", () => {
  const orders = serviceUnderTest(OrdersService, startOrdersService, {
    schema: "orders",
    probe: [topics.ordersTransactionBackfilled.subject, topics.ordersDistributionOrderBackfilled.subject],
  });
  const { client, as, published, db } = orders;

  it("every transaction and distribution order of every account, in pages smaller than an account", async () => {
    const accounts = [randomUUID(), randomUUID()];
    for (const account of accounts) {
      await client.writeTransactions(
        { transactions: ["T1", "T2", "T3"].map((ext) => ({ externalTransactionId: ext, channel: 1, type: 1, items: [{ externalItemId: "i1", key: "K1", quantity: 4 }] })), mode: WriteMode.UPSERT },
        as(account),
      );
      await client.addShipments({ externalTransactionId: "T2", externalItemId: "i1", shipments: [{ quantity: 3, externalWarehouseId: "WN" }] }, as(account));
      await client.writeDistributionOrders({ distributionOrders: ["1", "2", "3"].map((row) => ({ externalDoid: "DO-1", externalRowId: row, key: "K1", quantity: 5 })), mode: WriteMode.UPSERT }, as(account));
    }
    expect(await announceStoredTransactions(db, 2)).toBe(6);
    expect(await announceStoredDistributionOrders(db, 2)).toBe(6);

    const messages = await eventually(async () => (published.length === 12 ? published : undefined));
    for (const account of accounts) {
      const transactions = messages
        .filter((m) => m.accountId === account && m.subject.endsWith(topics.ordersTransactionBackfilled.subject))
        .map((m) => fromBinary(ordersMessagesV1.TransactionChangedSchema, m.payload))
        // Rows of other aggregates may leave the relay in one wave: compared in the source's order.
        .sort((x, y) => x.transaction!.externalTransactionId.localeCompare(y.transaction!.externalTransactionId));
      const stored = (await client.listTransactions({}, as(account))).transactions;
      expect(transactions.map((t) => toJson(ordersV1.TransactionSchema, t.transaction!))).toEqual(stored.map((t) => toJson(ordersV1.TransactionSchema, t)));
      // T2 was written, then shipped: version 2, with its shipment.
      expect(transactions.map((t) => [t.transaction?.externalTransactionId, t.version, t.transaction?.items[0].shipments.length])).toEqual([
        ["T1", 1n, 0],
        ["T2", 2n, 1],
        ["T3", 1n, 0],
      ]);
      const rows = messages
        .filter((m) => m.accountId === account && m.subject.endsWith(topics.ordersDistributionOrderBackfilled.subject))
        .map((m) => fromBinary(ordersMessagesV1.DistributionOrderChangedSchema, m.payload))
        .sort((x, y) => x.distributionOrder!.externalRowId.localeCompare(y.distributionOrder!.externalRowId));
      const storedRows = (await client.getDistributionOrder({ externalDoid: "DO-1" }, as(account))).distributionOrders;
      expect(rows.map((r) => toJson(ordersV1.DistributionOrderSchema, r.distributionOrder!))).toEqual(storedRows.map((r) => toJson(ordersV1.DistributionOrderSchema, r)));
      expect(rows.map((r) => r.version)).toEqual([1n, 1n, 1n]);
    }
  });
});
