import pg from "pg";
import { E2E_ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";

/**
 * A client that retries sends the same bytes again: on every write route, the second send changes
 * nothing stored and queues nothing (no outbox row in any service, so no bus message and no
 * queue entry), and answers 2xx; a route that answers BatchResponses says so (`unchanged`).
 */
describe("an identical re-send changes nothing and queues nothing, on every write route", () => {
  let platform: PlatformOnTestServices;
  let db: pg.Client;
  beforeAll(async () => {
    platform = await startOnTestServices();
    db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await platform?.close();
  });

  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
  const writes: [method: "POST" | "PUT", path: string, body: unknown][] = [
    ["POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }]],
    ["PUT", "/v2/api/warehouses/W1", { name: "Main", centralWarehouse: true }],
    ["POST", "/v2/api/products", { key: "K1", sku: "K1", productName: "Crew", brandName: "Acme", categoryName: "Tops", season: "AW26" }],
    ["POST", "/v2/api/products/batch", [{ key: "K2", sku: "K2", season: "AW26" }]],
    ["PUT", "/v2/api/products", [{ key: "K2", productName: "Two" }]],
    ["POST", "/v2/api/products/imageupload", { key: "K1", filename: "a.png", imageData: png.toString("base64") }],
    ["POST", "/v2/api/products/imageupload/batch", [{ key: "K2", filename: "b.png", imageData: png.toString("base64") }]],
    ["POST", "/v2/api/products/keyswitch", [{ oldKey: "K2", key: "K2-NEW", sku: "K2-NEW" }]],
    ["POST", "/v2/api/price-lists", { externalPriceListId: "PL", name: "Retail", currency: "EUR" }],
    ["PUT", "/v2/api/price-lists/PL", { name: "Retail EU", currency: "EUR" }],
    ["POST", "/v2/api/prices/batch", [{ listExternalID: "PL", key: "K1", price: 10 }]],
    ["POST", "/v2/api/fxrates", [{ externalReference: "ECB", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.2, fromDate: "2026-01-01" }]],
    ["POST", "/v2/api/pricats/products/batch", { pricat: { externalId: "P1", name: "Spring" }, items: [{ sku: "S1", prices: { retail: 10 } }] }],
    ["POST", "/v2/api/mappingtables/colour", { mappingType: "products", mappingValues: { red: "Red" } }],
    ["PUT", "/v2/api/mappingtables/colour?mappingType=products", { mappingValues: { red: "Red" } }],
    ["POST", "/v2/api/warehouses/W1/stock", [{ key: "K1", availableQuantity: 5, physicalQuantity: 5, date: "2026-11-01T00:00:00Z" }]],
    ["POST", "/v2/api/warehouses/stock", [{ key: "K2", externalWarehouseID: "W1", availableQuantity: 5, physicalQuantity: 5, date: "2026-11-01T00:00:00Z" }]],
    ["POST", "/v2/api/stocktriggers/batch", [{ warehouseExternalId: "W1", key: "K1", min: 1, max: 5 }]],
    ["POST", "/v2/api/stores", [{ externalStoreId: "S1", name: "Store", currencyCode: "EUR", warehouses: ["W1"] }]],
    ["PUT", "/v2/api/stores/S1", { name: "Store 1", currencyCode: "EUR", warehouses: ["W1"] }],
    ["POST", "/v2/api/storetrafficevents", [{ storeTrafficCounterID: "C1", eventTime: "2026-11-01T10:00:00Z", incomingTraffic: 3, outgoingTraffic: 2 }]],
    ["POST", "/v2/api/purchaseorders/batch", [{ externalPONo: "PO1", orderDate: "2026-11-01", items: [{ externalRowID: "1", key: "K1", quantity: 5, deliveryDate: "2026-12-01" }] }]],
    ["POST", "/v2/api/purchaseorders/batch", [{ externalPONo: "PO2", deliveryStatus: 4, orderDate: "2026-11-01", items: [{ externalRowID: "1", key: "K1", quantity: 5, deliveryDate: "2026-12-01" }] }]],
    ["POST", "/v2/api/distributionorders/batch", [{ externalDOID: "DO1", externalRowID: "1", key: "K1", quantity: 2, fromWarehouseExternalId: "W1", toWarehouseExternalId: "W1", orderDate: "2026-11-01" }]],
    [
      "POST",
      "/v2/api/transactions/batch",
      [{ externalTransactionID: "T1", externalStoreID: "S1", type: 1, channel: 1, currencyCode: "EUR", createdDate: "2026-11-01T10:00:00Z", items: [{ externalItemID: "1", key: "K1", quantity: 2, moneyItemTotalNet: 10, moneyItemTotalVat: 2.5 }] }],
    ],
    ["POST", "/v2/api/transactions/T1/items/1/shipments", { shipmentID: "SH1", quantity: 1, shipmentDate: "2026-11-02T00:00:00Z" }],
  ];

  /** The messages of the BatchResponses in an answer (a product batch answers them in arrays of their own). */
  const batchMessages = (body: unknown): unknown[] =>
    Array.isArray(body) ? body.flatMap((r) => (Array.isArray(r) ? batchMessages(r) : r && typeof r === "object" && "statusCode" in r && "referenceField" in r ? [r.message] : [])) : [];

  it("answers 2xx both times, says unchanged, and writes no outbox row the second time", async () => {
    const { api, accountID } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const outboxRows = async () => {
      const schemas = (await db.query("SELECT table_schema FROM information_schema.tables WHERE table_name = 'outbox' ORDER BY 1")).rows.map((r) => r.table_schema as string);
      const counts = await Promise.all(schemas.map(async (s) => Number((await db.query(`SELECT count(*) FROM "${s}".outbox WHERE account_id = $1`, [accountID])).rows[0].count)));
      return counts.reduce((a, b) => a + b, 0);
    };
    const failures: string[] = [];
    for (const [method, path, body] of writes) {
      const first = await api(method, path, body);
      if (first.status >= 300) {
        failures.push(`${method} ${path}: first send answered ${first.status} ${JSON.stringify(first.body)}`);
        continue;
      }
      const before = await outboxRows();
      const second = await api(method, path, body);
      const after = await outboxRows();
      if (second.status >= 300) failures.push(`${method} ${path}: re-send answered ${second.status} ${JSON.stringify(second.body)}`);
      if (after !== before) failures.push(`${method} ${path}: re-send wrote ${after - before} outbox row(s)`);
      const said = batchMessages(second.body).filter((m) => typeof m !== "string" || !m.startsWith("unchanged"));
      if (said.length) failures.push(`${method} ${path}: re-send answered ${JSON.stringify(said)}`);
    }
    expect(failures).toEqual([]);
  });
});
