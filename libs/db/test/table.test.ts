import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogueV1, eventsV1, inventoryMessagesV1, ordersV1, pricingV1 } from "@analytics/contracts";
import { fieldViolations, tableSpec } from "../src";
import { numericText } from "../src/table";

/** A table spec is the PurchaseOrder message read as columns: names, types, rows and rules. */
describe("tableSpec", () => {
  const orders = tableSpec(ordersV1.PurchaseOrderSchema, "purchase_orders", { extra: { content_hash: "text" }, assigned: ["seq", "created_at", "updated_at"], timestampSeconds: [0n, 4291747199n] });

  it("has a column per stored field, typed by the field (rules' column_type first), Postgres-assigned ones only selected", () => {
    expect(orders.columns).toEqual([
      "content_hash", "id", "external_po_no", "order_date", "delivery_date", "delivery_status", "external_comment", "external_warehouse_id",
      "supplier", "label", "order_type", "api_key_id", "attributes",
    ]);
    expect(orders.recordType).toContain("id uuid, external_po_no text, order_date timestamptz");
    expect(orders.recordType).toContain("delivery_status smallint");
    expect(orders.recordType).toContain("attributes jsonb");
    expect(orders.select()).toContain("seq");
    expect(orders.updateSet).not.toMatch(/\bid = |api_key_id =/);
    expect(orders.updateSet).toContain("content_hash = EXCLUDED.content_hash");
  });

  it("turns a message into a row and back unchanged (decimals as Postgres prints them)", () => {
    const items = tableSpec(ordersV1.PurchaseOrderItemSchema, "purchase_order_items");
    const item = create(ordersV1.PurchaseOrderItemSchema, {
      id: "i", key: "K", quantity: 3, skuId: "s", totalPriceNet: { value: "012.50" },
      deliveries: [{ deliveryId: "D", quantity: 2, deliveryDate: timestampFromDate(new Date("2026-01-02T00:00:00.123Z")) }], attributes: { a: [1, "x"] },
    });
    const row = items.rowOf(item);
    expect(row).toMatchObject({ total_price_net: "012.50", deliveries: [{ deliveryID: "D", quantity: 2, deliveryDate: "2026-01-02T00:00:00.123Z" }], ean: null });
    const back = items.messageOf(JSON.parse(JSON.stringify(row)));
    expect(back).toEqual({ ...item, totalPriceNet: { ...item.totalPriceNet, value: "12.50" } });
  });

  it("checks the rules the proto declares", () => {
    const po = create(ordersV1.PurchaseOrderSchema, { externalPoNo: " ", deliveryStatus: 6, externalWarehouseId: "w".repeat(501), supplier: "a\u0000", orderDate: { seconds: -1n }, attributes: { ["k\u0000"]: 1 } });
    expect(orders.violations(po)).toEqual([
      { path: "externalPONo", message: "is required" },
      { path: "orderDate", message: "must lie between 1970-01-01 00:00:00 and 2105-12-31 23:59:59" },
      { path: "deliveryStatus", message: "must be 0..5" },
      { path: "externalWarehouseID", message: "must be at most 500 characters" },
      { path: "supplier", message: "must be text without NUL characters or broken surrogates" },
      { path: "attributes.k\u0000", message: "key must be text without NUL characters or broken surrogates" },
    ]);
    expect(fieldViolations(ordersV1.DeliverySchema, create(ordersV1.DeliverySchema, { quantity: -1 }), "items[0].deliveries[0]")).toEqual([{ path: "items[0].deliveries[0].quantity", message: "must be at least 0" }]);
  });

  it("keeps only the named fields of a message another service owns, with the column types it is given", () => {
    const warehouses = tableSpec(inventoryMessagesV1.WarehouseChangedSchema, "warehouses", {
      only: ["account_id", "warehouse_id", "version", "name", "deleted"],
      columnTypes: { account_id: "uuid", warehouse_id: "uuid" },
    });
    expect(warehouses.columns).toEqual(["account_id", "warehouse_id", "version", "name", "deleted"]);
    expect(warehouses.recordType).toBe("account_id uuid, warehouse_id uuid, version bigint, name text, deleted boolean");
    const message = create(inventoryMessagesV1.WarehouseChangedSchema, { accountId: "a", warehouseId: "w", version: 12n, externalId: "X", name: "Main", centralWarehouse: true });
    expect(warehouses.rowOf(message)).toEqual({ account_id: "a", warehouse_id: "w", version: "12", name: "Main", deleted: false });
    expect(() => tableSpec(inventoryMessagesV1.WarehouseChangedSchema, "warehouses", { only: ["nmae"] })).toThrow(/no field nmae/);
  });

  it("keeps a protoJson field as protobuf's JSON, and reads it back", () => {
    const products = tableSpec(catalogueV1.ProductSchema, "products", { protoJson: ["cost_calculation_values"] });
    const product = create(catalogueV1.ProductSchema, { key: "K", costCalculationValues: [{ key: "freight", type: 1, monetaryValue: { value: "1.50" } }] });
    const row = products.rowOf(product);
    expect(row.cost_calculation_values).toEqual([{ key: "freight", type: 1, monetaryValue: { value: "1.50" } }]);
    expect(products.messageOf(JSON.parse(JSON.stringify(row))).costCalculationValues).toEqual(product.costCalculationValues);
    expect(() => tableSpec(catalogueV1.ProductSchema, "products", { protoJson: ["key"] })).toThrow(/key hold no message/);
    expect(() => tableSpec(catalogueV1.ProductSchema, "products", { protoJson: ["cost_values"] })).toThrow(/no field cost_values/);
  });
});

/** What pricing's tables need besides: a column named otherwise, read expressions, dates, decimal bounds and maps of decimals. */
describe("tableSpec (pricing's messages)", () => {
  it("names a field's column as the options say, in every list and in the row", () => {
    const lists = tableSpec(pricingV1.PriceListSchema, "price_lists", { assigned: ["created_at", "updated_at"], columnNames: { external_price_list_id: "external_id" } });
    expect(lists.columns).toEqual(["external_id", "name", "currency", "default_price_list", "default_vat"]);
    expect(lists.recordType).toBe("external_id text, name text, currency text, default_price_list boolean, default_vat numeric");
    expect(lists.updated).toEqual(["external_id", "name", "currency", "default_price_list", "default_vat"]);
    const list = create(pricingV1.PriceListSchema, { externalPriceListId: "R", name: "Retail", currency: "EUR", defaultVat: { value: "25.0" } });
    expect(lists.rowOf(list)).toEqual({ external_id: "R", name: "Retail", currency: "EUR", default_price_list: false, default_vat: "25.0" });
    expect(lists.messageOf({ ...lists.rowOf(list), created_at: new Date(0), updated_at: new Date(0) }).externalPriceListId).toBe("R");
  });

  it("selects dates as YYYY-MM-DD and columns read by an expression; an empty date is no date", () => {
    const fx = tableSpec(pricingV1.FxRateSchema, "fx_rates", { assigned: ["id"] });
    expect(fx.select("f")).toBe(
      "f.id, f.external_reference, f.from_currency, f.to_currency, f.rate::text AS rate, to_char(f.from_date, 'YYYY-MM-DD') AS from_date, " +
        "to_char(f.to_date, 'YYYY-MM-DD') AS to_date, to_char(f.exchange_date, 'YYYY-MM-DD') AS exchange_date",
    );
    expect(fx.rowOf(create(pricingV1.FxRateSchema, { fromDate: "2026-01-01", toDate: "" }))).toMatchObject({ from_date: "2026-01-01", to_date: null, exchange_date: null });
    const prices = tableSpec(pricingV1.PriceSchema, "prices", { extra: { price_list_id: "uuid" } });
    expect(prices.select("p", { vat: "COALESCE(p.vat, l.default_vat)" })).toContain("COALESCE(p.vat, l.default_vat)::text AS vat");
  });

  it("checks decimal bounds, maps of decimals, required decimals and dates", () => {
    const price = create(pricingV1.PriceSchema, { listExternalId: "L", key: "K", vat: { value: "100.5" }, customPrices: { outlet: { value: "-1" }, "": { value: "1" }, ok: { value: "x" } } });
    expect(fieldViolations(pricingV1.PriceSchema, price)).toEqual([
      { path: "price", message: "is required" },
      { path: "vat", message: "must be 0..100" },
      { path: "customPrices.outlet", message: "must be at least 0" },
      { path: "customPrices.", message: "key must not be empty" },
      { path: "customPrices.ok", message: "must be a decimal number" },
    ]);
    const rate = create(pricingV1.FxRateSchema, { fromCurrency: "EUR", toCurrency: "SEK", rate: { value: "1" }, fromDate: "2026-02-30", exchangeDate: "" });
    expect(fieldViolations(pricingV1.FxRateSchema, rate)).toEqual([{ path: "fromDate", message: "must be a date YYYY-MM-DD" }]);
  });

  it("checks text, and each text of a list, against the REST names of the enum its rules name (values_of)", () => {
    const delivery = create(eventsV1.WebhookDeliverySchema, { eventType: "update_sku", status: "sent" });
    expect(fieldViolations(eventsV1.WebhookDeliverySchema, delivery)).toEqual([{ path: "status", message: "must be one of pending, delivered, failed" }]);
    const endpoint = create(eventsV1.WebhookEndpointSchema, { url: "https://h.example.com", eventTypes: ["update_sku", "nope"] });
    expect(fieldViolations(eventsV1.WebhookEndpointSchema, endpoint)).toEqual([
      { path: "eventTypes[1]", message: "must be one of update_sku, draft_po_change, sku_warehouse_settings_change, import.finished" },
    ]);
    expect(tableSpec(eventsV1.WebhookEndpointSchema, "webhook_endpoints").recordType).toContain("event_types text[]");
  });
});

it("prints a decimal as Postgres prints the numeric stored from it", () => {
  const cases = { "0": "0", "-0": "0", "-0.00": "0.00", "007.50": "7.50", "-007.5": "-7.5", "-0.5": "-0.5", "12.340": "12.340", "-12": "-12", "0.0": "0.0" };
  expect(Object.fromEntries(Object.keys(cases).map((k) => [k, numericText(k)]))).toEqual(cases);
});
