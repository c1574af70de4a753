import { E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * What is written can be read back, and what is read can be written: a resource as GET answers
 * it can be sent back as it is (CONTRACT: read-only fields are ignored on input), and an order
 * number that its GET path already means (`latest`, `example`, `processing`) is refused.
 */
describe("writes and reads meet", () => {
  const platform = platformForFile();

  it("a purchase order, a stock row and a price round-trip unchanged", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    expect((await acme.api("POST", "/v2/api/products", { key: "SKU-1", sku: "1001" })).status).toBe(201);

    const created = await acme.api("POST", "/v2/api/purchaseorders", [{ externalPONo: "PO-R", items: [{ externalRowID: "1", key: "SKU-1", quantity: 4, deliveries: [{ deliveryID: "D1", quantity: 1 }] }] }]);
    expect(created.status).toBe(201);
    const order = (await acme.api("GET", "/v2/api/purchaseorders/PO-R")).body;
    expect(order.items[0]).toMatchObject({ skuId: expect.any(Number), skuUuid: expect.any(String) });
    const put = await acme.api("PUT", "/v2/api/purchaseorders/", [order]);
    expect(put.status).toBe(200);
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [order])).body[0]).toMatchObject({ statusCode: 200, message: "unchanged" });

    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }])).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses/stock", [{ externalWarehouseID: "W1", key: "SKU-1", availableQuantity: 3, date: "2026-03-01T12:00:00Z" }])).body[0].statusCode).toBe(200);
    const [row] = (await acme.api("GET", "/v2/api/warehouses/stock")).body;
    expect(row).toMatchObject({ supplier: null, ean: null, skuId: expect.any(String), warehouseId: expect.any(String), updatedAt: expect.any(String) });
    const again = await acme.api("POST", "/v2/api/warehouses/stock", [row]);
    expect(again.body[0].statusCode).toBe(200);

    expect((await acme.api("POST", "/v2/api/price-lists", { externalId: "RETAIL", name: "Retail", currency: "EUR" })).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/prices/batch", [{ listExternalID: "RETAIL", key: "SKU-1", price: 9.95 }])).body[0].statusCode).toBe(201);
    const [price] = (await acme.api("GET", "/v2/api/prices")).body;
    expect(price).toMatchObject({ sku: "1001", currency: "EUR", updatedAt: expect.any(String) });
    const resent = await acme.api("POST", "/v2/api/prices/batch", [price]);
    expect(resent.body[0].statusCode).toBe(200);
    expect((await acme.api("GET", "/v2/api/prices")).body[0].price).toBe(9.95);
  });

  it("an order number that its GET path already means is a 400 naming the field; a padded id is trimmed when written and when a path names it", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const refused = async (path: string, body: unknown, field: string) => {
      const res = await acme.api("POST", path, body);
      const said = Array.isArray(res.body) ? res.body[0].message : res.body.message;
      return [res.status, Array.isArray(res.body) ? res.body[0].statusCode : undefined, said.includes(`${field}: must not be`)];
    };
    expect(await refused("/v2/api/purchaseorders", [{ externalPONo: "latest" }], "externalPONo")).toEqual([400, undefined, true]);
    expect(await refused("/v2/api/purchaseorders/batch", [{ externalPONo: " example " }], "externalPONo")).toEqual([200, 400, true]);
    expect(await refused("/v2/api/transactions/batch", [{ externalTransactionID: "latest" }], "externalTransactionID")).toEqual([200, 400, true]);
    expect(await refused("/v2/api/distributionorders/batch", [{ externalDOID: "processing", externalRowID: "1", key: "K", quantity: 1 }], "externalDOID")).toEqual([400, 400, true]);
    // An id is trimmed when written, and so when a path names it.
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [{ externalPONo: " PO-T " }])).body[0].statusCode).toBe(201);
    expect((await acme.api("GET", "/v2/api/purchaseorders/%20PO-T%20")).body.externalPONo).toBe("PO-T");
    expect((await acme.api("POST", "/v2/api/price-lists", { externalId: " PL-T ", name: "Trimmed", currency: "EUR" })).status).toBe(201);
    expect((await acme.api("GET", "/v2/api/price-lists/%20PL-T%20")).status).toBe(200);
    // Names that only look alike are orders like any other.
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [{ externalPONo: "Latest" }])).body[0].statusCode).toBe(201);
    expect((await acme.api("GET", "/v2/api/purchaseorders/Latest")).status).toBe(200);
  });
});
