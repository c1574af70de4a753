import { create } from "@bufbuild/protobuf";
import { ordersV1, planningV1, toRestJson } from "@analytics/contracts";
import { restAnswerOf } from "../src/http/proto-schema";

describe("restAnswerOf", () => {
  it("answers what toRestJson does, in its order, for messages of scalars and any other", () => {
    const row = create(planningV1.PlannedVolumeWarehouseRowSchema, { groupKey: "SS26", warehouseId: "", stockVolume: 9_007_199_254_740_991n, poVolume: -3n });
    expect(JSON.stringify(restAnswerOf(planningV1.PlannedVolumeWarehouseRowSchema)(row))).toBe(JSON.stringify(toRestJson(planningV1.PlannedVolumeWarehouseRowSchema, row)));
    expect(restAnswerOf(planningV1.PlannedVolumeWarehouseRowSchema, { draftPoVolume: "draftPOVolume" })(row)).toEqual({ groupKey: "SS26", warehouseId: "", warehouseName: "", stockVolume: 9_007_199_254_740_991, poVolume: -3, draftPOVolume: 0 });
    const item = create(ordersV1.PurchaseOrderItemSchema, { key: "K", quantity: 2, totalPriceNet: { value: "1.50" } });
    expect(JSON.stringify(restAnswerOf(ordersV1.PurchaseOrderItemSchema)(item))).toBe(JSON.stringify(toRestJson(ordersV1.PurchaseOrderItemSchema, item)));
    const delivery = create(ordersV1.DeliverySchema, { quantity: 1 });
    expect(restAnswerOf(ordersV1.DeliverySchema)(delivery)).toEqual(toRestJson(ordersV1.DeliverySchema, delivery));
    expect(Object.keys(restAnswerOf(ordersV1.DeliverySchema, { deliveryID: "id" })(delivery))).toEqual(["id", "quantity", "deliveryDate"]);
  });
});
