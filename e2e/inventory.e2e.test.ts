import { E2E_ADMIN_TOKEN as ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";

/** The inventory over HTTP on real Postgres and JetStream. */
describe("inventory over HTTP", () => {
  let platform: PlatformOnTestServices;
  beforeAll(async () => {
    platform = await startOnTestServices();
  });
  afterAll(async () => {
    await platform?.close();
  });

  it("warehouse -> stock -> older snapshot ignored; unknowns are 404; another account sees nothing", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await acme.api("POST", "/v2/api/products", { key: "SKU-1", sku: "1001", ean: "7312345678901" })).status).toBe(201);

    const created = await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main", centralWarehouse: true, ID: "ignored" }]);
    expect(created.status).toBe(201);
    const [wh] = created.body;
    expect(Object.keys(wh).sort()).toEqual(["ID", "centralWarehouse", "createdAt", "externalId", "name", "updatedAt"]);
    expect(wh).toMatchObject({ externalId: "W1", name: "Main", centralWarehouse: true });
    expect((await acme.api("GET", "/v2/api/warehouses/W1")).body).toEqual(wh);
    const listed = await acme.api("GET", `/v2/api/warehouses?warehouse_id=${wh.ID}`);
    expect(listed.body).toEqual([wh]);
    expect(listed.headers.get("x-total-count")).toBe("1");
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", bogus: 1 }])).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/warehouses?pageSize=1001")).status).toBe(400);

    const stock = await acme.api("POST", "/v2/api/warehouses/stock", [
      { key: "SKU-1", availableQuantity: 10, physicalQuantity: 12, date: "2026-03-02T00:00:00Z", externalWarehouseId: "W1" },
      { ean: "7312345678901", availableQuantity: 1, date: "2026-03-01T00:00:00Z", externalWarehouseID: "W1" },
      { key: "NOPE", availableQuantity: 1, date: "2026-03-01T00:00:00Z", externalWarehouseID: "W1" },
      { key: "SKU-1", availableQuantity: 1, date: "2026-03-01T00:00:00Z", externalWarehouseID: "W9" },
      { key: "SKU-1", availableQuantity: 1.5, date: "2026-03-01T00:00:00Z", externalWarehouseID: "W1" },
    ]);
    expect(stock.status).toBe(200);
    expect(stock.body.map((r: any) => r.statusCode)).toEqual([200, 200, 404, 404, 400]);
    expect(stock.body[1].message).toMatch(/ignored/);
    expect(stock.body[4].message).toMatch(/availableQuantity/);

    const older = await acme.api("POST", "/v2/api/warehouses/W1/stock", [{ key: "SKU-1", availableQuantity: 3, date: "2026-03-01T12:00:00Z" }]);
    expect(older.body[0]).toMatchObject({ statusCode: 200, reference: "SKU-1", referenceField: "key", message: "ignored: older than the stored snapshot" });
    const rows = (await acme.api("GET", "/v2/api/warehouses/W1/stock?keys=SKU-1")).body;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ key: "SKU-1", sku: "1001", ean: "7312345678901", availableQuantity: 10, physicalQuantity: 12, date: "2026-03-02T00:00:00.000Z", externalWarehouseID: "W1", warehouseId: wh.ID });
    expect((await acme.api("GET", "/v2/api/warehouses/stock?eans=7312345678901")).body).toEqual(rows);

    expect((await acme.api("DELETE", "/v2/api/warehouses/W1")).status).toBe(409);

    // Another account: nothing of Acme's exists.
    expect((await other.api("GET", "/v2/api/warehouses/W1")).status).toBe(404);
    expect((await other.api("GET", "/v2/api/warehouses/W1/stock")).status).toBe(404);
    expect((await other.api("DELETE", "/v2/api/warehouses/W1")).status).toBe(404);
    expect((await other.api("PUT", "/v2/api/warehouses/W1", { name: "x" })).status).toBe(404);
    expect((await other.api("GET", "/v2/api/warehouses")).body).toEqual([]);
    expect((await other.api("GET", "/v2/api/warehouses/stock")).body).toEqual([]);
    const foreign = await other.api("POST", "/v2/api/warehouses/stock", [{ key: "SKU-1", availableQuantity: 1, date: "2026-04-01T00:00:00Z", externalWarehouseID: "W1" }]);
    expect(foreign.body[0].statusCode).toBe(404);

    const put = await acme.api("PUT", "/v2/api/warehouses/W1", { name: "Main DC" });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ ID: wh.ID, name: "Main DC", centralWarehouse: false });
    await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W2" }]);
    expect((await acme.api("DELETE", "/v2/api/warehouses/W2")).body).toEqual({ statusCode: 200, error: "", message: "deleted" });
    expect((await acme.api("GET", "/v2/api/warehouses/W2")).status).toBe(404);
  });
});
