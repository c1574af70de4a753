import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** Orders naming a warehouse that does not exist are refused as stock and triggers are: that item's 404. */
describe("warehouses orders name must exist", () => {
  const platform = platformForFile();

  it("purchase orders (on the order or a line) and distribution orders (source or destination) naming an unknown warehouse are 404", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    expect((await api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }])).status).toBe(201);
    expect((await api("POST", "/v2/api/products/batch", [{ key: "K1", sku: "K1" }])).status).toBe(201);
    const po = (no: string, warehouse?: string, lineWarehouse?: string) => ({
      externalPONo: no,
      orderDate: "2026-11-01",
      ...(warehouse ? { externalWarehouseID: warehouse } : {}),
      items: [
        { externalRowID: "1", key: "K1", quantity: 5, deliveryDate: "2026-12-01" },
        { externalRowID: "2", key: "K1", quantity: 5, deliveryDate: "2026-12-01", ...(lineWarehouse ? { externalWarehouseID: lineWarehouse } : {}) },
      ],
    });
    const batch = await api("POST", "/v2/api/purchaseorders/batch", [po("PO-1", "W1"), po("PO-2", "NOPE"), po("PO-3", "W1", "GONE"), po("PO-4")]);
    expect(batch.body.map((r: { statusCode: number }) => r.statusCode)).toEqual([201, 404, 404, 201]);
    expect(batch.body[1].message).toMatch(/externalWarehouseID: no warehouse NOPE/);
    expect(batch.body[2].message).toMatch(/items\[1\] \(externalRowID 2\): no warehouse GONE/);
    expect((await api("GET", "/v2/api/purchaseorders/PO-2")).status).toBe(404);
    const single = await api("POST", "/v2/api/purchaseorders", [po("PO-5", "NOPE")]);
    expect(single.status).toBe(404);
    expect(single.body.details).toEqual([{ path: "[0].externalWarehouseID", message: "externalWarehouseID: no warehouse NOPE" }]);

    const row = (doid: string, from: string, to: string) => ({ externalDOID: doid, externalRowID: "1", key: "K1", quantity: 2, fromWarehouseExternalId: from, toWarehouseExternalId: to, orderDate: "2026-11-01" });
    const dos = await api("POST", "/v2/api/distributionorders/batch", [row("DO-1", "W1", "W1"), row("DO-2", "NOPE", "W1"), row("DO-3", "W1", "GONE")]);
    expect(dos.body.map((r: { statusCode: number; message: string }) => [r.statusCode, r.message])).toEqual([
      [201, "created"],
      [404, "fromWarehouseExternalId: no warehouse NOPE"],
      [404, "toWarehouseExternalId: no warehouse GONE"],
    ]);
  });
});
