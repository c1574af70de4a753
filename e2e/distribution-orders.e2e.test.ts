import { E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** Distribution orders over HTTP on real Postgres and JetStream. */
describe("distribution orders over HTTP", () => {
  const platform = platformForFile();

  it("status derived through all five states (never from input); batch 400 with the valid rows applied; processing; by id; isolation", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    expect((await acme.api("POST", "/v2/api/products", { key: "SKU-1", sku: "1001" })).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "STORE-1", name: "Store 1" }])).status).toBe(201);
    const row = { externalDistributionOrderId: "DO-1", externalRowId: "1", key: "SKU-1", quantity: 10, toWarehouseExternalId: "STORE-1" };
    const created = await acme.api("POST", "/v2/api/distributionorders", [{ ...row, status: "COMPLETED" }]);
    expect(created.status).toBe(201);
    expect(created.body[0]).toMatchObject({ externalDOID: "DO-1", externalRowID: "1", status: "PROCESSING" });
    const id = created.body[0].id;
    const states: [Record<string, unknown>, string][] = [
      [{ allocatedQuantity: 10 }, "ALLOCATED"],
      [{ allocatedQuantity: 10, shippedAt: "2026-03-02T00:00:00Z" }, "IN TRANSIT"],
      [{ allocatedQuantity: 10, shippedAt: "2026-03-02T00:00:00Z", deliveredQuantity: 10 }, "COMPLETED"],
      [{ deliveredQuantity: 3, cancelledDate: "2026-03-03T00:00:00+01:00" }, "CANCELLED"],
    ];
    for (const [extra, status] of states) {
      const put = await acme.api("PUT", "/v2/api/distributionorders", [{ ...row, ...extra, id }]);
      expect([put.status, put.body[0]?.status, put.body[0]?.id]).toEqual([200, status, id]);
    }
    expect((await acme.api("PUT", "/v2/api/distributionorders", [row])).status).toBe(400);

    const batch = await acme.api("POST", "/v2/api/distributionorders/batch", [
      { externalDOID: "DO-2", externalRowID: "1", key: "SKU-1", quantity: 4 },
      { externalDOID: "DO-2", externalRowID: "2", sku: "1001", quantity: 4, deliveredQuantity: 4 },
      { externalDOID: "DO-3", externalRowID: "1", key: "SKU-1", quantity: -4 },
      { externalDOID: "DO-3", externalRowID: "2", key: "SKU-1", quantity: 1, bogus: 1 },
      { externalDOID: "DO-3", externalRowID: "3", key: "NO-SUCH-SKU", quantity: 1 },
      { externalDOID: "DO-3", externalRowID: "4", quantity: 1 },
    ]);
    expect(batch.status).toBe(400);
    expect(batch.body.map((r: any) => r.statusCode)).toEqual([201, 201, 400, 400, 404, 400]);
    expect(batch.body[4]).toMatchObject({ reference: "DO-3/3", message: "no SKU with key NO-SUCH-SKU" });
    expect(batch.body[5].message).toBe("key or sku is required");
    expect((await acme.api("POST", "/v2/api/distributionorders", [{ ...row, externalRowId: "9", key: "NO-SUCH-SKU" }])).status).toBe(404);
    expect((await acme.api("GET", "/v2/api/distributionorders/DO-2")).body.map((r: any) => [r.externalRowID, r.status])).toEqual([
      ["1", "PROCESSING"],
      ["2", "COMPLETED"],
    ]);
    expect((await acme.api("GET", "/v2/api/distributionorders/DO-3")).status).toBe(404);
    expect((await acme.api("GET", "/v2/api/distributionorders/processing")).body).toEqual(["DO-2"]);
    const cancelled = await acme.api("GET", "/v2/api/distributionorders?status=cancelled");
    expect([cancelled.body.map((r: any) => r.externalDOID), cancelled.headers.get("x-total-count")]).toEqual([["DO-1"], "1"]);
    expect((await acme.api("GET", "/v2/api/distributionorders?status=DONE")).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/distributionorders?pageSize=1001")).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/distributionorders/example?status=IN_TRANSIT")).body.status).toBe("IN TRANSIT");

    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("GET", "/v2/api/distributionorders/DO-2")).status).toBe(404);
    expect((await other.api("GET", "/v2/api/distributionorders")).body).toEqual([]);
    expect((await other.api("PUT", "/v2/api/distributionorders", [{ ...row, id }])).status).toBe(404);
  });
});
