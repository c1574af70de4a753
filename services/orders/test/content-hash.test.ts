import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ordersV1 } from "@analytics/contracts";
import { contentHash, orderColumns } from "../src/resources";

/**
 * Stored orders keep the content hash they were written with: an identical re-send is recognised
 * by it. Pinned here to the value the hand-written columns gave; a change would make every stored
 * order "changed" (a version and a queue entry) on its next identical re-send. A column added
 * later counts only when set, so adding a field to the message changes no stored hash.
 */
it("an order's content hash is the one stored orders were written with", () => {
  const po = create(ordersV1.PurchaseOrderSchema, {
    externalPoNo: "X1",
    orderDate: timestampFromDate(new Date("2026-01-02T03:04:05.678Z")),
    deliveryStatus: 4,
    supplier: "s",
    label: "l",
    attributes: { b: 1, a: { d: 2, c: [1, "x"] } },
    items: [
      {
        externalRowId: "1", key: "K", quantity: 5, skuId: "sku-1", totalPriceNet: { value: "0010.500" }, totalPriceVat: { value: "-0.0" },
        deliveries: [{ deliveryId: "d", quantity: 2, deliveryDate: timestampFromDate(new Date("2026-02-02T00:00:00Z")) }, { quantity: 1 }],
        attributes: { z: 1, y: 2 },
      },
      { sku: "S", quantity: 0, skuId: "sku-2", deliveryDate: timestampFromDate(new Date("2026-02-02T00:00:00Z")) },
    ],
  });
  const columns = orderColumns("11111111-1111-1111-1111-111111111111", "key", po);
  expect(columns.order.content_hash).toBe("hl9bxiahHhcpvxsa8hbLP6KTfu+1PLlUqQGM+q4xROk=");
  const other = orderColumns("11111111-1111-1111-1111-111111111111", "key", { ...po, label: "other" });
  expect(other.order.content_hash).not.toBe(columns.order.content_hash);
  // A column the message gains later: unset, it leaves the hash as it was; set, it changes it.
  const { content_hash: _, ...order } = columns.order;
  const { items } = columns;
  expect(contentHash({ ...order, buyer: null }, items.map((i) => ({ ...i, origin: null }))).hash).toBe(columns.order.content_hash);
  expect(contentHash({ ...order, buyer: "Ada" }, items).hash).not.toBe(columns.order.content_hash);
});
