import { create } from "@bufbuild/protobuf";
import { inventoryV1 } from "@analytics/contracts";
import { fieldViolations } from "@analytics/db";
import { storeWriteSchema, triggerWriteSchema, warehouseWriteSchema } from "../src/routes/inventory-schemas";

const { StockTriggerSchema, StoreSchema, WarehouseSchema } = inventoryV1;

/**
 * An inventory field's rules are declared once, on the proto field: the gateway's request schema
 * and the inventory service's check (libs/db fieldViolations, what its table specs run) both read
 * them, so they refuse the same values.
 */
describe("inventory field rules drive both the REST schema and the service check", () => {
  it("Warehouse.name: at most 500 characters", () => {
    expect(warehouseWriteSchema.safeParse({ externalId: "W1", name: "n".repeat(500) }).success).toBe(true);
    const tooLong = warehouseWriteSchema.safeParse({ externalId: "W1", name: "n".repeat(501) });
    expect(tooLong.success).toBe(false);
    expect(tooLong.error?.issues[0].path).toEqual(["name"]);
    expect(fieldViolations(WarehouseSchema, create(WarehouseSchema, { externalId: "W1", name: "n".repeat(500) }))).toEqual([]);
    expect(fieldViolations(WarehouseSchema, create(WarehouseSchema, { externalId: "W1", name: "n".repeat(501) }))).toEqual([{ path: "name", message: "must be at most 500 characters" }]);
  });

  it("Store.externalStoreId: required", () => {
    expect(storeWriteSchema.safeParse({ name: "S" }).success).toBe(false);
    expect(storeWriteSchema.safeParse({ externalStoreId: "" }).success).toBe(false);
    expect(fieldViolations(StoreSchema, create(StoreSchema, { name: "S" }), "[0]")).toEqual([{ path: "[0].externalStoreId", message: "is required" }]);
  });

  it("StockTrigger.min: not negative", () => {
    const trigger = { warehouseExternalId: "W1", key: "K" };
    expect(triggerWriteSchema.safeParse({ ...trigger, min: 0 }).success).toBe(true);
    expect(triggerWriteSchema.safeParse({ ...trigger, min: -1 }).success).toBe(false);
    expect(fieldViolations(StockTriggerSchema, create(StockTriggerSchema, { ...trigger, min: -1 }))).toEqual([{ path: "min", message: "must be at least 0" }]);
  });

  it("fields without presence take their default when left out; null stays refused", () => {
    expect(warehouseWriteSchema.parse({ externalId: "W1" })).toMatchObject({ name: "", centralWarehouse: false });
    expect(warehouseWriteSchema.safeParse({ externalId: "W1", name: null }).success).toBe(false);
    expect(triggerWriteSchema.safeParse({ warehouseExternalId: "W1", key: "K", preventRestock: null }).success).toBe(false);
  });
});
