import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * Integer ids (the published client's) count up across accounts, so another account's are easy
 * to guess: every route that takes one finds only the caller's own resources, and a write naming
 * another account's id changes nothing of it.
 */
describe("integer ids name only the caller's own resources", () => {
  const platform = platformForFile();

  it("reads and writes by another account's integer ids find nothing of it and change nothing", async () => {
    const a = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "owner");
    const b = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "prober");
    for (const { api } of [a, b]) {
      expect((await api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }])).status).toBe(201);
      expect((await api("POST", "/v2/api/products/batch", [{ key: "K1", sku: "K1", brandName: "Brand", categoryName: "Cat" }])).status).toBe(201);
    }
    const po = { externalPONo: "PO-1", orderDate: "2026-11-01", externalWarehouseID: "W1", items: [{ externalRowID: "1", key: "K1", quantity: 5, deliveryDate: "2026-12-01" }] };
    expect((await a.api("POST", "/v2/api/purchaseorders", [po])).status).toBe(201);
    const dorder = { externalDOID: "DO-1", externalRowID: "1", key: "K1", quantity: 2, fromWarehouseExternalId: "W1", toWarehouseExternalId: "W1", orderDate: "2026-11-01" };
    expect((await a.api("POST", "/v2/api/distributionorders", [dorder])).status).toBe(201);
    const tx = { externalTransactionID: "T-1", createdDate: "2026-11-01T10:00:00Z", currencyCode: "SEK", items: [{ externalItemID: "1", key: "K1", quantity: 1 }] };
    expect((await a.api("POST", "/v2/api/transactions", [tx])).status).toBe(201);
    const trigger = await a.api("POST", "/v2/api/stocktriggers/batch", [{ key: "K1", warehouseExternalId: "W1", min: 1, max: 9 }]);
    expect(trigger.body.map((r: { statusCode: number }) => r.statusCode)).toEqual([201]);

    const [product] = (await a.api("GET", "/v2/api/products?key=K1")).body;
    const [brand] = (await a.api("GET", "/v2/api/brands")).body;
    const [category] = (await a.api("GET", "/v2/api/categories")).body;
    const order = (await a.api("GET", "/v2/api/purchaseorders/PO-1")).body;
    const [distribution] = (await a.api("GET", "/v2/api/distributionorders/DO-1")).body;
    const transaction = (await a.api("GET", "/v2/api/transactions/T-1")).body;
    for (const id of [product.id, brand.id, category.id, order.id, distribution.id, transaction.id]) expect(Number.isInteger(id)).toBe(true);

    // Reads: nothing of the owner's.
    expect((await b.api("GET", `/v2/api/brands/${brand.id}`)).status).toBe(404);
    expect((await b.api("GET", `/v2/api/categories/${category.id}`)).status).toBe(404);
    expect((await b.api("GET", `/v2/api/brands?id=${brand.id}`)).body).toEqual([]);
    expect((await b.api("GET", `/v2/api/products?sku_id=${product.id}`)).body).toEqual([]);
    expect((await b.api("GET", `/v2/api/stocktriggers?sku_id=${product.id}`)).body).toEqual([]);

    // Writes naming the owner's ids: that id is not found (it names none of the prober's).
    const writes = [
      await b.api("PUT", "/v2/api/products", [{ id: product.id, key: "K1", productName: "taken" }]),
      await b.api("PUT", "/v2/api/purchaseorders/", [{ ...po, id: order.id, externalComment: "taken" }]),
      await b.api("PUT", "/v2/api/distributionorders", [{ ...dorder, id: distribution.id, quantity: 99 }]),
      await b.api("PUT", "/v2/api/transactions/", [{ ...tx, id: transaction.id, market: "XX" }]),
    ];
    expect(writes[0].body.map((r: { statusCode: number }) => r.statusCode)).toEqual([404]);
    expect(writes.slice(1).map((w) => w.status)).toEqual([404, 404, 404]);

    // The owner's resources are as they were.
    expect((await a.api("GET", "/v2/api/products?key=K1")).body[0].productName).not.toBe("taken");
    expect((await a.api("GET", "/v2/api/purchaseorders/PO-1")).body.externalComment).not.toBe("taken");
    expect((await a.api("GET", "/v2/api/distributionorders/DO-1")).body[0].quantity).toBe(2);
    expect((await a.api("GET", "/v2/api/transactions/T-1")).body.market).not.toBe("XX");
  });
});
