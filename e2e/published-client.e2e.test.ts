import { eventually } from "@analytics/testing";
import { client, E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";
import { Go, decoded, goField } from "./go-client";

/**
 * Every call of the published Go client (maddenutils), with the body exactly as Go marshals its
 * structs (fields without omitempty are always sent, zero or null), and every answer decoded as
 * its json.Unmarshal decodes it into its structs (e2e/go-client.ts). CONTRACT.md, "Compatibility".
 */
describe("the published client, unchanged", () => {
  const platform = platformForFile();
  let api: ReturnType<typeof client>;
  let accountID: string;
  let apiKey: string;
  const ok = (status: number) => expect([200, 201]).toContain(status);
  const allOk = (body: { statusCode: number }[]) => expect(body.map((r) => r.statusCode).filter((s) => s >= 300)).toEqual([]);

  beforeAll(async () => {
    ({ api, accountID, apiKey } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN));
    ok((await api("POST", "/v2/api/warehouses", [{ externalId: "WH-1", name: "Main" }, { externalId: "WH-2", name: "Store" }])).status);
    ok((await api("POST", "/v2/api/price-lists", { externalPriceListId: "PL-SEK", name: "Sweden", currency: "SEK" })).status);
  });

  // Its CostCalculationValue has no omitempty: every field is sent, fxRate too, zero or "" where unused.
  const costCalculationValues = [
    { key: "freight", sort: 1, type: 1, fxRate: 11.2345, currency: "EUR", monetaryValue: 1.5, percentageValue: 0, externalReference: "FR-1" },
    { key: "duty", sort: 2, type: 2, fxRate: 0, currency: "", monetaryValue: 0, percentageValue: 12, externalReference: "" },
  ];
  // A product as an integration fills the client's Product (every field is omitempty).
  const product = (key: string) => ({
    productName: "Crew neck", variantName: "Black", sku: key, vendorSKU: `V-${key}`, ean: "7350000000017", brandName: "Acme", categoryName: "Tops",
    subCategory: "Tees", collection: "Basics", season: "SS26", year: "2026", size: "M", color: "Black", ageGroup: "Adult", gender: "Unisex",
    department: "Men", productGroupID: "PG-1", variantGroupID: "VG-1", variantExternalID: "VX-1", key, productType: 1, productID: 12, variantID: 34,
    info: { origin: "PT" }, costPrice: 12.5, costPriceCurrency: "EUR", supplierPrice: 10, supplierPriceCurrency: "EUR", price: 30, priceCurrency: "SEK",
    prices: [{ customPrice1: 28, listExternalID: "PL-SEK", price: 30, vat: 25 }],
    priceIncludingVat: true, wholesalePrice: 15, wholesalePriceCurrency: "EUR", vatValue: 25, status: 2, activePlanning: true, leadTime: 30, supplier: "Porto mill",
    customFields: { fit: "regular" },
    additionalSuppliers: [{ supplier: "Braga mill", supplierPrice: 11, supplierPriceCurrency: "EUR", vatValue: 0, externalProductNumber: "B-1", externalSupplierID: "S-2", info: null }],
    unitVolume: 0.002, packSize: 6, weight: 0.2, moq: 12, costCalculationPrice: 14.25, costCalculationValues,
  });

  it("POST /auth with its APIKey answers its Bearer", async () => {
    const res = await client(platform.baseUrl)("POST", "/v2/api/auth", { accountID, apiKey });
    ok(res.status);
    expect(decoded(Go.Bearer, res.body).accessToken).toEqual(expect.any(String));
  });

  it("POST /products/batch with its Products", async () => {
    const res = await api("POST", "/v2/api/products/batch", [product("GO-1"), product("GO-2")]);
    expect(res.body).toEqual([[expect.objectContaining({ statusCode: 201 })], [expect.objectContaining({ statusCode: 201 })]]);
  });

  it("POST /products with its Product", async () => {
    const res = await api("POST", "/v2/api/products", product("GO-3"));
    ok(res.status);
    decoded([Go.Product], res.body);
  });

  it("PUT /products with its Products", async () => {
    const res = await api("PUT", "/v2/api/products", [{ ...product("GO-2"), productName: "Crew neck II" }]);
    ok(res.status);
    allOk(decoded([Go.BatchResponse], res.body));
  });

  it("GET /products (GetProductsMap) decodes into its Product, with its fields read back", async () => {
    const res = await api("GET", "/v2/api/products?pageSize=10000&page=1");
    expect(res.status).toBe(200);
    const products = decoded<Record<string, any>[]>([Go.Product], res.body);
    const p = products.find((x) => x.key === "GO-1")!;
    expect(Number.isInteger(p.id)).toBe(true);
    expect(p).toMatchObject({ year: "2026", productType: 1, costPrice: 12.5, price: 30, leadTime: 30, variantExternalID: "VX-1", info: { origin: "PT" } });
    // What it read, sent back whole (its ids and null fields included), changes nothing.
    const resent = await api("PUT", "/v2/api/products", [p]);
    expect(resent.body.map((r: { message: string }) => r.message)).toEqual(["unchanged"]);
    expect((await api("GET", "/v2/api/products?pageSize=10000&page=2")).body).toEqual([]);
  });

  it("reads back the cost values it sent (fxRate and all), by GET /products and in the update_sku queue entry", async () => {
    const [p] = decoded<Record<string, any>[]>([Go.Product], (await api("GET", "/v2/api/products?key=GO-1")).body);
    expect([p.costCalculationPrice, p.costCalculationValues]).toEqual([14.25, costCalculationValues]);
    const queued = await eventually(async () => {
      const events = (await api("GET", "/v2/api/events?pageSize=100&event_type=update_sku")).body as { payload: Record<string, any> }[];
      return events.find((e) => e.payload.key === "GO-1");
    });
    expect(decoded<Record<string, any>>(Go.Product, queued.payload).costCalculationValues).toEqual(costCalculationValues);
  });

  it("GET /skus (GetSkusMap) decodes into its SKU, paged until empty", async () => {
    const first = await api("GET", "/v2/api/skus?pageSize=1000&page=1");
    expect(first.status).toBe(200);
    const skus = decoded<Record<string, any>[]>([Go.SKU], first.body);
    expect(skus.map((s) => s.key).sort()).toEqual(["GO-1", "GO-2", "GO-3"]);
    const s = skus.find((x) => x.key === "GO-1")!;
    expect(Number.isInteger(s.id)).toBe(true);
    expect(s).toMatchObject({ sku: "GO-1", year: "2026", productType: 1, brand: { name: "Acme" }, category: { name: "Tops" }, leadTime: 30, moq: 12 });
    expect((await api("GET", "/v2/api/skus?pageSize=1000&page=2")).body).toEqual([]);
  });

  it("GET /brands and /brands/{ID}, /categories and /categories/{ID} decode into its Brand and Category", async () => {
    const brands = decoded<{ id: number }[]>([Go.Brand], (await api("GET", "/v2/api/brands")).body);
    expect(Number.isInteger(brands[0].id)).toBe(true);
    expect(decoded<{ id: number }[]>([Go.Brand], (await api("GET", `/v2/api/brands/${brands[0].id}`)).body)[0].id).toBe(brands[0].id);
    expect((await api("GET", `/v2/api/brands?id=${brands[0].id}`)).body).toEqual(brands.slice(0, 1));
    const categories = decoded<{ id: number }[]>([Go.Category], (await api("GET", "/v2/api/categories")).body);
    expect(Number.isInteger(categories[0].id)).toBe(true);
    decoded(Go.Category, (await api("GET", `/v2/api/categories/${categories[0].id}`)).body);
  });

  it("POST /warehouses/stock with its Stock rows", async () => {
    const res = await api("POST", "/v2/api/warehouses/stock", [
      { sku: "GO-1", ean: "7350000000017", key: "GO-1", availableQuantity: 5, physicalQuantity: 6, externalWarehouseID: "WH-1", date: "2026-03-01T00:00:00Z" },
    ]);
    ok(res.status);
  });

  const po = {
    orderDate: "2026-02-01T00:00:00Z",
    deliveryStatus: 0,
    completedDate: "2026-05-01T00:00:00Z",
    externalPurchaseNo: "GO-PO-1",
    label: "spring",
    externalComment: "first",
    orderType: "purchase",
    deliveryWindow: "W18",
    factory: "Porto mill",
    transportMethod: "sea",
    items: [{
      deliveryDate: "2026-04-01T00:00:00Z", externalWarehouseId: "WH-1", productName: "Crew neck", sku: "GO-1", ean: "7350000000017", key: "GO-1", brandName: "Acme",
      quantity: 10, totalPriceNet: 125, totalPriceVat: 31.25, totalPriceCurrency: "EUR", supplier: null, externalRowID: "1", deliveries: null,
      revisedDeliveryDate: "2026-04-05T00:00:00Z",
    }],
  };
  it("POST /purchaseorders/batch with its PurchaseOrders", async () => {
    const res = await api("POST", "/v2/api/purchaseorders/batch", [po]);
    ok(res.status);
    allOk(res.body);
  });
  it("POST /purchaseorders with its PurchaseOrders", async () => {
    const res = await api("POST", "/v2/api/purchaseorders", [{ ...po, externalPurchaseNo: "GO-PO-2" }]);
    ok(res.status);
    decoded([Go.PurchaseOrder], res.body);
  });
  it("GET /purchaseorders and /purchaseorders/{externalPurchaseNo} decode into its PurchaseOrder, read back under its names", async () => {
    const list = decoded<Record<string, any>[]>([Go.PurchaseOrder], (await api("GET", "/v2/api/purchaseorders?pageSize=100")).body);
    expect(list.map((o) => o.externalPurchaseNo).sort()).toEqual(["GO-PO-1", "GO-PO-2"]);
    const one = decoded<Record<string, any>>(Go.PurchaseOrder, (await api("GET", "/v2/api/purchaseorders/GO-PO-1")).body);
    expect(Number.isInteger(one.id)).toBe(true);
    expect(one).toMatchObject({ externalPurchaseNo: "GO-PO-1", factory: "Porto mill", transportMethod: "sea", deliveryWindow: "W18", label: "spring", orderType: "purchase" });
    expect(one.items[0]).toMatchObject({ brandName: "Acme", revisedDeliveryDate: "2026-04-05T00:00:00Z" });
    expect(goField(one.items[0], "externalWarehouseId")).toBe("WH-1");
  });
  it("PUT /purchaseorders/ with its PurchaseOrders (its integer id)", async () => {
    const one = (await api("GET", "/v2/api/purchaseorders/GO-PO-2")).body;
    const res = await api("PUT", "/v2/api/purchaseorders/", [{ ...po, id: one.id, externalPurchaseNo: "GO-PO-2", externalComment: "changed" }]);
    ok(res.status);
    decoded([Go.PurchaseOrder], res.body);
  });

  const row = {
    externalDistributionOrderId: "GO-DO-1", externalRowId: "1", key: "GO-1", orderDate: "2026-02-01T00:00:00Z", shippedAt: null, deliveryDate: null,
    fromWarehouseExternalId: "WH-1", toWarehouseExternalId: "WH-2", quantity: 2, deliveredQuantity: 0, orderType: "transfer", label: "spring",
  };
  it("POST /distributionorders/batch with its DistributionOrders", async () => {
    const res = await api("POST", "/v2/api/distributionorders/batch", [row]);
    ok(res.status);
    allOk(res.body);
  });
  it("POST /distributionorders with its DistributionOrders", async () => {
    const res = await api("POST", "/v2/api/distributionorders", [{ ...row, externalDistributionOrderId: "GO-DO-2" }]);
    ok(res.status);
    decoded([Go.DistributionOrder], res.body);
  });
  it("GET /distributionorders and /distributionorders/{id} decode into its DistributionOrder, read back under its names", async () => {
    decoded([Go.DistributionOrder], (await api("GET", "/v2/api/distributionorders?pageSize=100")).body);
    const rows = decoded<Record<string, any>[]>([Go.DistributionOrder], (await api("GET", "/v2/api/distributionorders/GO-DO-1")).body);
    expect(Number.isInteger(rows[0].id)).toBe(true);
    expect(rows[0]).toMatchObject({ externalDistributionOrderId: "GO-DO-1", status: "PROCESSING", label: "spring", orderType: "transfer" });
  });
  it("PUT /distributionorders with its DistributionOrders (its integer id)", async () => {
    const [stored] = (await api("GET", "/v2/api/distributionorders/GO-DO-2")).body;
    const res = await api("PUT", "/v2/api/distributionorders", [{ ...row, id: stored.id, externalDistributionOrderId: "GO-DO-2", quantity: 3 }]);
    ok(res.status);
    decoded([Go.DistributionOrder], res.body);
  });

  const tx = {
    createdDate: "2026-03-01T10:00:00Z", completedDate: null, cancelledDate: null, externalStoreID: "ST-1", externalTransactionID: "GO-T-1", externalParentID: null,
    currencyCode: "SEK", externalRowId: "", market: "SE", type: 1, channel: 1, customerName: "", externalCustomerID: "", deliveryDate: null,
    externalInfo: { source: "shop", register: 3 }, statements: [{ name: "shipping", type: 3, priceNet: 49, priceVat: 12.25, customFields: null }],
    items: [{
      productName: "Crew neck", variantName: "Black", sku: "GO-1", ean: "7350000000017", key: "GO-1", vendorSKU: "V-GO-1", brandName: "Acme", category: "Tops",
      collection: "Basics", season: "SS26", year: "2026", size: "M", color: "Black", ageGroup: "Adult", gender: "Unisex", productGroupID: "PG-1", variantGroupID: "VG-1",
      quantity: 1, vatValue: 25, moneyItemTotalNet: 24, moneyItemTotalVat: 6, costPrice: 12.5, costPriceCurrency: "EUR", moneyDiscount: 0, externalID: "1",
      productType: 1, fulfillmentType: 0, shipments: null, deliveryWindow: null, customFields: null, primaryWarehouseExternalID: null, invoicedDate: null, type: null,
    }],
    orderType: null,
    invoicedDate: null,
  };
  it("POST /transactions with its Transactions", async () => {
    const res = await api("POST", "/v2/api/transactions", [tx]);
    ok(res.status);
  });
  it("POST /transactions/batch with its Transactions", async () => {
    const res = await api("POST", "/v2/api/transactions/batch", [{ ...tx, externalTransactionID: "GO-T-2" }]);
    ok(res.status);
    allOk(res.body);
  });
  it("GET /transactions and /transactions/{id} decode into its Transaction, read back under its names", async () => {
    decoded([Go.Transaction], (await api("GET", "/v2/api/transactions?pageSize=100")).body);
    const t = decoded<Record<string, any>>(Go.Transaction, (await api("GET", "/v2/api/transactions/GO-T-1")).body);
    expect(Number.isInteger(t.id)).toBe(true);
    // Answered as the contract's text, which its datatypes.JSON holds as a JSON string.
    expect(JSON.parse(t.externalInfo)).toEqual({ source: "shop", register: 3 });
    expect(t.items[0]).toMatchObject({ externalID: "1", year: "2026", productType: 1, costPrice: 12.5 });
  });

  it("PUT /transactions/ with its Transactions (its integer id)", async () => {
    const stored = (await api("GET", "/v2/api/transactions/GO-T-2")).body;
    const res = await api("PUT", "/v2/api/transactions/", [{ ...tx, id: stored.id, externalTransactionID: "GO-T-2", market: "NO" }]);
    ok(res.status);
    expect(decoded<Record<string, any>[]>([Go.Transaction], res.body)[0]).toMatchObject({ id: stored.id, market: "NO" });
  });

  const store = {
    name: "Stockholm", externalStoreId: "ST-1", channelType: 1, adress: "Drottninggatan 1", adress2: "", zip: "11151", city: "Stockholm", state: "",
    countryCode: "SE", currencyCode: "SEK", warehouses: [{ name: "Store", externalId: "WH-2" }],
  };
  it("POST /stores with its Store", async () => {
    const res = await api("POST", "/v2/api/stores", [store, { ...store, externalStoreId: "ST-2", warehouses: null }]);
    ok(res.status);
    decoded([Go.Store], res.body);
  });
  it("PUT /stores/{externalStoreID} with its Store", async () => {
    const res = await api("PUT", "/v2/api/stores/ST-2", { ...store, externalStoreId: "ST-2", city: "Uppsala", warehouses: null });
    ok(res.status);
    expect(decoded<Record<string, any>>(Go.Store, res.body)).toMatchObject({ city: "Uppsala", warehouses: [] });
  });
  it("GET /stores and /stores/{externalStoreID} decode into its Store, read back under its names", async () => {
    decoded([Go.Store], (await api("GET", "/v2/api/stores")).body);
    const s = decoded<Record<string, any>>(Go.Store, (await api("GET", "/v2/api/stores/ST-1")).body);
    expect(s).toMatchObject({ adress: "Drottninggatan 1", channelType: 1, warehouses: [{ name: "Store", externalId: "WH-2" }] });
  });

  it("POST /storetrafficevents with its StoreTrafficEvents; GET decodes", async () => {
    ok((await api("POST", "/v2/api/storetrafficevents", [{ eventTime: "2026-03-01T10:00:00Z", name: "door", storeID: "ST-1", storeTrafficCounterID: "C-1", incomingTraffic: 4, outgoingTraffic: 3 }])).status);
    decoded([Go.StoreTrafficEvent], (await api("GET", "/v2/api/storetrafficevents")).body);
  });

  it("POST /mappingtables/{field} with its MappingTableUpsertRequest; GET decodes", async () => {
    ok((await api("POST", "/v2/api/mappingtables/color", { mappingType: "products", mappingValues: { Svart: "Black" } })).status);
    decoded([Go.MappingTableResponse], (await api("GET", "/v2/api/mappingtables")).body);
    decoded(Go.MappingTableResponse, (await api("GET", "/v2/api/mappingtables/color?mappingType=products")).body);
  });

  it("POST /price-lists and PUT /price-lists/{id} with its PriceList; GET decodes with externalId", async () => {
    ok((await api("POST", "/v2/api/price-lists", { currency: "EUR", defaultPriceList: false, externalId: "PL-EUR", name: "Euro" })).status);
    ok((await api("PUT", "/v2/api/price-lists/PL-EUR", { currency: "EUR", defaultPriceList: false, externalId: "PL-EUR", name: "Euro zone" })).status);
    const lists = decoded<Record<string, any>[]>([Go.PriceList], (await api("GET", "/v2/api/price-lists")).body);
    expect(lists.map((l) => l.externalId).sort()).toEqual(["PL-EUR", "PL-SEK"]);
    expect(decoded<Record<string, any>>(Go.PriceList, (await api("GET", "/v2/api/price-lists/PL-EUR")).body)).toMatchObject({ externalId: "PL-EUR", name: "Euro zone" });
  });

  it("POST /prices/batch with its Prices (customPrice1..4); GET /prices decodes", async () => {
    const admin = client(platform.baseUrl, E2E_ADMIN_TOKEN);
    ok((await admin("PUT", `/admin/v1/accounts/${accountID}/settings`, { customPriceFields: ["outlet", "staff", "b2b"] })).status);
    const price = { currency: "EUR", customPrice1: 25, customPrice2: 20, listExternalID: "PL-EUR", key: "GO-1", price: 29.9, vat: 25 };
    // The settings reach pricing through the bus.
    const res = await eventually(async () => {
      const r = await api("POST", "/v2/api/prices/batch", [price]);
      return r.body[0].statusCode < 300 && r;
    });
    allOk(res.body);
    const fourth = await api("POST", "/v2/api/prices/batch", [{ ...price, customPrice4: 1 }]);
    expect([fourth.body[0].statusCode, fourth.body[0].message]).toEqual([400, expect.stringContaining("customPrice4")]);
    const prices = decoded<Record<string, any>[]>([Go.Price], (await api("GET", "/v2/api/prices")).body);
    expect(prices.find((p) => p.listExternalID === "PL-EUR")).toMatchObject({ key: "GO-1", price: 29.9, customPrice1: 25, customPrice2: 20, customPrice3: null, customPrices: { outlet: 25, staff: 20 } });
    const paged = decoded<Record<string, any>[]>([Go.Price], (await api("GET", "/v2/api/prices?page=1&pageSize=10")).body);
    expect(paged.find((p) => p.listExternalID === "PL-EUR")).toMatchObject({ customPrice1: 25, customPrice2: 20 });
  });

  it("POST /pricats/products/batch with its PricatBatchRequest", async () => {
    const res = await api("POST", "/v2/api/pricats/products/batch", {
      pricat: { externalId: "PC-1", name: "SS26", supplierName: "Porto mill", supplierGLN: "7300000000001" },
      items: [{
        pricatExternalId: "PC-1", sku: "GO-1", season: "SS26", productName: "Crew neck", productGroupId: "PG-1", variantName: "Black", variantGroupId: "VG-1",
        ean: "7350000000017", imageUrl: "", color: "Black", size: "M", category: "Tops", brand: "Acme", gender: "Unisex", supplier: "Porto mill",
        supplierGLN: "7300000000001", price: 30, priceCurrency: "SEK", costPrice: 12.5, costPriceCurrency: "EUR", info: { fabric: "cotton" }, vat: 25,
      }],
    });
    ok(res.status);
    allOk(res.body);
    const rows = (await api("GET", "/v2/api/pricats/products")).body;
    expect(rows[0]).toMatchObject({ supplier: "Porto mill", supplierGLN: "7300000000001", price: 30, costPrice: 12.5, info: { fabric: "cotton" } });
  });

  it("POST /stocktriggers/batch with its Stocktrigger; GET /stocktriggers and /stocktriggers/{ID} decode into it", async () => {
    // Its Stocktrigger has no omitempty: it sends id and skuID 0, and warehouseID "" when it names the warehouse by warehouseExternalId.
    const res = await api("POST", "/v2/api/stocktriggers/batch", [{
      id: 0, warehouseID: "", warehouseExternalId: "WH-1", skuID: 0, sku: "GO-1", key: "GO-1", season: "SS26", startDate: "2026-03-01", lastRestockDate: "", preventRestock: false,
      lowerLimit: null, min: 2, max: 8, upperLimit: null, allowMinAuto: false, allowMaxAuto: false, minMaxSource: "manual", minMaxUpdatedAt: "2026-03-01T00:00:00Z",
    }]);
    ok(res.status);
    allOk(res.body);
    const triggers = decoded<Record<string, any>[]>([Go.Stocktrigger], (await api("GET", "/v2/api/stocktriggers")).body);
    const products = (await api("GET", "/v2/api/products?key=GO-1")).body;
    expect(triggers[0]).toMatchObject({ key: "GO-1", startDate: "2026-03-01", lastRestockDate: null });
    expect(goField(triggers[0], "skuID")).toBe(products[0].id);
    const id = goField(triggers[0], "id");
    expect(Number.isInteger(id)).toBe(true);
    expect(goField(decoded(Go.Stocktrigger, (await api("GET", `/v2/api/stocktriggers/${id}`)).body), "skuID")).toBe(products[0].id);
    // Its skuID names the product wherever a product id is accepted.
    expect((await api("GET", `/v2/api/stocktriggers?sku_id=${products[0].id}`)).body.map((t: Record<string, unknown>) => goField(t, "id"))).toEqual([id]);
    expect((await api("GET", `/v2/api/products?sku_id=${products[0].id}`)).body.map((p: { key: string }) => p.key)).toEqual(["GO-1"]);
  });

  it("GET /events decodes into its ExternalEvent; PATCH /events completes one", async () => {
    const events = decoded<Record<string, any>[]>([Go.ExternalEvent], (await api("GET", "/v2/api/events?pageSize=100")).body);
    expect(events.length).toBeGreaterThan(0);
    ok((await api("PATCH", "/v2/api/events", { id: events[0].id, status: "completed" })).status);
  });
});

describe("the published client's names in the OpenAPI document", () => {
  const platform = platformForFile();

  it("shows each alias and client field as a deprecated property, and GET /skus as a deprecated operation", async () => {
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as Record<string, any>;
    const resolve = (s: Record<string, any>): Record<string, any> => (s.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s);
    const body = (path: string, method: string) => {
      const s = resolve(doc.paths[path][method].requestBody.content["application/json"].schema);
      return resolve(s.type === "array" ? s.items : s).properties;
    };
    const answer = (path: string, method: string, status = "200") => {
      const s = resolve(doc.paths[path][method].responses[status].content["application/json"].schema);
      return resolve(s.type === "array" ? s.items : s).properties;
    };
    const deprecated = (props: Record<string, any>, names: string[]) => expect(names.filter((n) => props[n]?.deprecated !== true)).toEqual([]);
    deprecated(body("/v2/api/purchaseorders/batch", "post"), ["externalPurchaseNo", "factory", "deliveryWindow"]);
    deprecated(body("/v2/api/distributionorders/batch", "post"), ["externalDistributionOrderId", "label"]);
    deprecated(body("/v2/api/prices/batch", "post"), ["customPrice1", "customPrice4"]);
    deprecated(answer("/v2/api/purchaseorders/{externalPurchaseNo}", "get"), ["externalPurchaseNo", "factory"]);
    deprecated(answer("/v2/api/distributionorders/{id}", "get"), ["externalDistributionOrderId", "label"]);
    deprecated(answer("/v2/api/prices", "get"), ["customPrice1"]);
    deprecated(answer("/v2/api/price-lists", "get"), ["externalId"]);
    deprecated(answer("/v2/api/stores", "get"), ["adress", "adress2"]);
    deprecated(answer("/v2/api/products", "get"), ["costPrice", "price", "leadTime"]);
    expect(answer("/v2/api/products", "get").id.type).toBe("integer");
    expect(doc.paths["/v2/api/skus"].get).toMatchObject({ deprecated: true });
    expect(answer("/v2/api/skus", "get").id.type).toBe("integer");
  });
});
