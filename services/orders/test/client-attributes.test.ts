import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ordersV1 } from "@analytics/contracts";
import { serviceUnderTest } from "@analytics/testing";
import { startOrdersService } from "../src/service";

const { OrdersService, WriteMode } = ordersV1;
type OrderInit = MessageInitShape<typeof ordersV1.PurchaseOrderSchema>;
type RowInit = MessageInitShape<typeof ordersV1.DistributionOrderSchema>;
type TxInit = MessageInitShape<typeof ordersV1.TransactionSchema>;

/**
 * The published client's additional fields (CONTRACT.md, "Compatibility") travel in each
 * resource's `attributes`: kept and answered, part of the unchanged check of every resource (an
 * identical re-send is no update and no message; a changed field is a change).
 */
describe("orders service: the published client's additional fields (real Postgres and JetStream)", () => {
  const orders = serviceUnderTest(OrdersService, startOrdersService, { schema: "orders" });
  const { client, db } = orders;
  const apiKeyId = randomUUID();
  const as = (accountId: string) => orders.as(accountId, apiKeyId);

  /** The messages an account's writes announced (the outbox keeps published rows for days). */
  const messagesOf = async (account: string) => Number((await db("outbox").where("account_id", account).count({ n: "*" }))[0].n);

  it("purchase orders and their items: kept, answered, unchanged when re-sent (keys in any order), changed when one changes", async () => {
    const account = randomUUID();
    const po = (itemBrand: string, orderAttributes: Record<string, string>): OrderInit => ({
      externalPoNo: "PO-A",
      attributes: orderAttributes,
      items: [{ externalRowId: "1", key: "K1", skuId: "sku-1", quantity: 3, attributes: { productName: "Crew", brandName: itemBrand, revisedDeliveryDate: "2026-04-20" } }],
    });
    const [created] = (await client.writePurchaseOrders({ purchaseOrders: [po("Go", { factory: "Porto", deliveryWindow: "W18" })], mode: WriteMode.UPSERT }, as(account))).results;
    expect(created.result?.statusCode).toBe(201);
    const read = (await client.getPurchaseOrder({ externalPoNo: "PO-A" }, as(account))).purchaseOrder!;
    expect(read.attributes).toEqual({ factory: "Porto", deliveryWindow: "W18" });
    expect(read.items[0].attributes).toEqual({ productName: "Crew", brandName: "Go", revisedDeliveryDate: "2026-04-20" });

    const [same] = (await client.writePurchaseOrders({ purchaseOrders: [po("Go", { deliveryWindow: "W18", factory: "Porto" })], mode: WriteMode.UPSERT }, as(account))).results;
    expect([same.result?.statusCode, same.result?.message]).toEqual([200, "unchanged"]);
    const after = (await client.getPurchaseOrder({ externalPoNo: "PO-A" }, as(account))).purchaseOrder!;
    expect(after.updatedAt).toEqual(read.updatedAt);

    const [orderChanged] = (await client.writePurchaseOrders({ purchaseOrders: [po("Go", { factory: "Braga", deliveryWindow: "W18" })], mode: WriteMode.UPSERT }, as(account))).results;
    const [itemChanged] = (await client.writePurchaseOrders({ purchaseOrders: [po("Go!", { factory: "Braga", deliveryWindow: "W18" })], mode: WriteMode.UPSERT }, as(account))).results;
    expect([orderChanged.result?.message, itemChanged.result?.message]).toEqual(["updated", "updated"]);
    const last = (await client.getPurchaseOrder({ externalPoNo: "PO-A" }, as(account))).purchaseOrder!;
    expect([last.attributes?.factory, last.items[0].attributes?.brandName]).toEqual(["Braga", "Go!"]);
    expect(await messagesOf(account)).toBe(3);
  });

  it("distribution orders: kept, answered, unchanged when re-sent (no version, no message), changed when one changes; also by id", async () => {
    const account = randomUUID();
    const row = (label: string): RowInit => ({ externalDoid: "DO-A", externalRowId: "1", key: "K1", quantity: 2, attributes: { orderType: "transfer", deliveryWindow: "W19", label } });
    const write = async (rows: RowInit[], mode = WriteMode.UPSERT) => (await client.writeDistributionOrders({ distributionOrders: rows, mode }, as(account))).results;
    const [created] = await write([row("spring")]);
    expect(created.result?.statusCode).toBe(201);
    expect(created.distributionOrder?.attributes).toEqual({ orderType: "transfer", deliveryWindow: "W19", label: "spring" });
    const [same] = await write([{ ...row("spring"), attributes: { label: "spring", deliveryWindow: "W19", orderType: "transfer" } }]);
    expect([same.result?.statusCode, same.result?.message]).toEqual([200, "unchanged"]);
    expect(same.distributionOrder?.updatedAt).toEqual(created.distributionOrder?.updatedAt);
    const [stored] = (await client.getDistributionOrder({ externalDoid: "DO-A" }, as(account))).distributionOrders;
    expect(stored.updatedAt).toEqual(created.distributionOrder?.updatedAt);
    const id = created.distributionOrder!.id;
    const [sameById] = await write([{ ...row("spring"), id }], WriteMode.REPLACE);
    expect([sameById.result?.statusCode, sameById.result?.message, sameById.distributionOrder?.id]).toEqual([200, "unchanged", id]);
    const [changed] = await write([row("summer")]);
    expect([changed.result?.message, changed.distributionOrder?.attributes?.label]).toEqual(["updated", "summer"]);
    const [changedById] = await write([{ ...row("autumn"), id }], WriteMode.REPLACE);
    expect([changedById.result?.message, changedById.distributionOrder?.attributes?.label]).toEqual(["updated", "autumn"]);
    // An unknown id is still a 404 (not taken for an unchanged row).
    expect((await write([{ ...row("autumn"), id: randomUUID() }], WriteMode.REPLACE))[0].result?.statusCode).toBe(404);
    expect(await messagesOf(account)).toBe(3);
  });

  it("transactions and their items: kept, answered, unchanged when re-sent (no version, no message), changed when one changes", async () => {
    const account = randomUUID();
    const tx = (size: string): TxInit => ({
      externalTransactionId: "T-A",
      attributes: { orderType: "web", invoicedDate: "2026-03-02T00:00:00Z" },
      items: [{ externalItemId: "1", key: "K1", quantity: 1, attributes: { vendorSKU: "V-1", size, costPrice: 12.5 } }],
    });
    const write = async (txs: TxInit[], mode = WriteMode.UPSERT) => (await client.writeTransactions({ transactions: txs, mode }, as(account))).results;
    const [created] = await write([tx("M")]);
    expect(created.result?.statusCode).toBe(201);
    expect(created.transaction?.attributes).toEqual({ orderType: "web", invoicedDate: "2026-03-02T00:00:00Z" });
    expect(created.transaction?.items[0].attributes).toEqual({ vendorSKU: "V-1", size: "M", costPrice: 12.5 });
    const [same] = await write([tx("M")]);
    expect([same.result?.statusCode, same.result?.message]).toEqual([200, "unchanged"]);
    const stored = (await client.getTransaction({ externalTransactionId: "T-A" }, as(account))).transaction!;
    expect(stored.updatedAt).toEqual(created.transaction?.updatedAt);
    const [sameById] = await write([{ ...tx("M"), id: created.transaction!.id }], WriteMode.REPLACE);
    expect(sameById.result?.message).toBe("unchanged");
    const [changed] = await write([tx("L")]);
    expect([changed.result?.message, changed.transaction?.items[0].attributes?.size]).toEqual(["updated", "L"]);
    expect(await messagesOf(account)).toBe(2);
  });

  it("attributes and custom fields Postgres cannot store (NUL in a value or a key, at any depth) are that item's 400 naming the path; the rest of the batch is written", async () => {
    // The gateway refuses them too; the service must not depend on it (a raw jsonb error would
    // fail the whole batch).
    const account = randomUUID();
    const pos = (await client.writePurchaseOrders({
      purchaseOrders: [
        { externalPoNo: "PO-N1", attributes: { factory: "Por\u0000to" }, items: [{ key: "K1", skuId: "sku-1", quantity: 1 }] },
        { externalPoNo: "PO-N2", items: [{ key: "K1", skuId: "sku-1", quantity: 1, attributes: { nested: { list: ["ok", "a\u0000"] } } }] },
        { externalPoNo: "PO-N3", attributes: { "fac\u0000tory": "Porto" }, items: [] },
        { externalPoNo: "PO-OK", attributes: { factory: "Porto" }, items: [{ key: "K1", skuId: "sku-1", quantity: 1 }] },
      ],
      mode: WriteMode.UPSERT,
    }, as(account))).results;
    expect(pos.map((r) => r.result?.statusCode)).toEqual([400, 400, 400, 201]);
    expect(pos.slice(0, 3).map((r) => r.violations.map((v) => v.path))).toEqual([["attributes.factory"], ["items[0].attributes.nested.list[1]"], ["attributes.fac\u0000tory"]]);
    const rows = (await client.writeDistributionOrders({
      distributionOrders: [
        { externalDoid: "DO-N", externalRowId: "1", key: "K1", quantity: 1, attributes: { label: "\u0000" } },
        { externalDoid: "DO-N", externalRowId: "2", key: "K1", quantity: 1, attributes: { label: "fine" } },
      ],
      mode: WriteMode.UPSERT,
    }, as(account))).results;
    expect(rows.map((r) => r.result?.statusCode)).toEqual([400, 201]);
    expect(rows[0].result?.message).toContain("attributes.label");
    const txs = (await client.writeTransactions({
      transactions: [
        { externalTransactionId: "T-N1", items: [{ externalItemId: "1", key: "K1", quantity: 1, attributes: { size: "\u0000" } }] },
        { externalTransactionId: "T-N2", attributes: { orderType: "\u0000" } },
        { externalTransactionId: "T-N3", statements: [{ name: "fee", customFields: { "\u0000": 1 } }] },
        { externalTransactionId: "T-N4", items: [{ externalItemId: "1", key: "K1", quantity: 1, customFields: { color: ["\u0000"] } }] },
        { externalTransactionId: "T-OK", attributes: { orderType: "web" } },
      ],
      mode: WriteMode.UPSERT,
    }, as(account))).results;
    expect(txs.map((r) => r.result?.statusCode)).toEqual([400, 400, 400, 400, 201]);
    expect(txs.slice(0, 4).map((r) => r.result?.message)).toEqual([
      expect.stringContaining("items[0].attributes.size"),
      expect.stringContaining("attributes.orderType"),
      expect.stringContaining("statements[0].customFields."),
      expect.stringContaining("items[0].customFields.color[0]"),
    ]);
  });
});
