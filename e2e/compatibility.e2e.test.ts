import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

describe("the published client's product fields (item 16)", () => {
  const platform = platformForFile();

  it("accepts its names case-insensitively and its additional fields; answers keep the contract's spelling", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const batch = await api("POST", "/v2/api/products/batch", [
      { key: "GO-1", SKU: "GO-1", productGroupID: "G1", VARIANTGROUPID: "V1", costPrice: 12.5, leadTime: 30 },
      { key: "GO-2", sku: "GO-2", productGroupID: "G1", productGroupId: "G2" },
      { key: "GO-3", sku: "GO-3", somethingElse: 1 },
    ]);
    expect(batch.status).toBe(201);
    expect(batch.body.map((r: { statusCode: number }[]) => r[0].statusCode)).toEqual([201, 400, 400]);
    expect(batch.body[1][0].message).toMatch(/productGroupID/);
    expect(batch.body[2][0].message).toMatch(/somethingElse/);
    const read = await api("GET", "/v2/api/products?key=GO-1");
    expect(read.body[0]).toMatchObject({ sku: "GO-1", productGroupId: "G1", variantGroupId: "V1", externalAttributes: { costPrice: 12.5, leadTime: 30 } });
    expect(read.body[0]).not.toHaveProperty("productGroupID");
    // Under its names too (only those kept); the product as read, sent back whole, is no change.
    expect(read.body[0]).toMatchObject({ costPrice: 12.5, leadTime: 30 });
    expect(read.body[0]).not.toHaveProperty("weight");
    const resent = await api("PUT", "/v2/api/products", [read.body[0]]);
    expect(resent.body.map((r: { message: string }) => r.message)).toEqual(["unchanged"]);
    const update = await api("PUT", "/v2/api/products", [{ key: "GO-1", PRODUCTNAME: "Renamed", variantGroupID: "V9" }]);
    expect(update.status).toBe(200);
    expect((await api("GET", "/v2/api/products?key=GO-1")).body[0]).toMatchObject({ productName: "Renamed", variantGroupId: "V9" });
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as Record<string, any>;
    const item = doc.paths["/v2/api/products/batch"].post.requestBody.content["application/json"].schema.items;
    const props = (item.$ref ? doc.components.schemas[item.$ref.split("/").pop()] : item).properties;
    expect(props.productGroupID).toMatchObject({ deprecated: true });
    expect(props.costPrice).toMatchObject({ deprecated: true });
  });

  it("keeps its additional order fields in attributes: purchase orders, distribution orders, transactions", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    expect((await api("POST", "/v2/api/products/batch", [{ key: "GO-1", sku: "GO-1" }])).status).toBe(201);

    // Purchase orders: its fields on the order and the items, in any letter case; a re-send is no change.
    const po = {
      externalPurchaseNo: "GO-PO-1",
      deliveryStatus: 5,
      Factory: "Porto mill",
      transportMethod: "sea",
      completedDate: "2026-05-01T00:00:00Z",
      deliveryWindow: "W18",
      items: [{ externalRowId: "1", key: "GO-1", quantity: 3, productName: "Crew neck", revisedDeliveryDate: "2026-04-20", brandName: "Go" }],
    };
    const written = await api("POST", "/v2/api/purchaseorders/batch", [po]);
    expect(written.body.map((r: { statusCode: number }) => r.statusCode)).toEqual([201]);
    const stored = (await api("GET", "/v2/api/purchaseorders/GO-PO-1")).body;
    expect(stored.attributes).toEqual({ factory: "Porto mill", transportMethod: "sea", completedDate: "2026-05-01T00:00:00Z", deliveryWindow: "W18" });
    expect(stored.items[0].attributes).toEqual({ productName: "Crew neck", revisedDeliveryDate: "2026-04-20", brandName: "Go" });
    // Also read back under its names, where its struct looks for them (published-client.e2e.test.ts).
    expect(stored).toMatchObject({ factory: "Porto mill", externalPurchaseNo: "GO-PO-1" });
    const again = await api("POST", "/v2/api/purchaseorders/batch", [{ ...po, Factory: undefined, factory: "Porto mill" }]);
    expect(again.body.map((r: { message: string }) => r.message)).toEqual(["unchanged"]);
    expect((await api("GET", "/v2/api/purchaseorders/GO-PO-1")).body.updatedAt).toBe(stored.updatedAt);
    // What GET answered, sent back whole, is no change either.
    const { id: _id, apiKeyId: _k, createdAt: _c, updatedAt: _u, ...roundTrip } = stored;
    const round = await api("POST", "/v2/api/purchaseorders/batch", [{ ...roundTrip, items: roundTrip.items.map(({ id: _i, deliveredQuantity: _d, skuId: _s, ...i }: Record<string, unknown>) => i) }]);
    expect(round.body.map((r: { message: string }) => r.message)).toEqual(["unchanged"]);
    const changed = await api("POST", "/v2/api/purchaseorders/batch", [{ ...po, items: [{ ...po.items[0], brandName: "Go!" }] }]);
    expect(changed.body.map((r: { message: string }) => r.message)).toEqual(["updated"]);
    expect((await api("GET", "/v2/api/purchaseorders/GO-PO-1")).body.items[0].attributes.brandName).toBe("Go!");
    const unknown = await api("POST", "/v2/api/purchaseorders/batch", [{ ...po, shippingMark: "x" }, { ...po, externalPurchaseNo: "GO-PO-2", items: [{ ...po.items[0], hsCode: "6109" }] }]);
    expect([unknown.body[0].statusCode, unknown.body[0].message]).toEqual([400, expect.stringContaining("shippingMark")]);
    expect([unknown.body[1].statusCode, unknown.body[1].message]).toEqual([400, expect.stringContaining("hsCode")]);
    const twoNumbers = await api("POST", "/v2/api/purchaseorders/batch", [{ ...po, externalPONo: "GO-PO-3" }]);
    expect(twoNumbers.body[0].statusCode).toBe(400);

    // Distribution orders.
    const row = { externalDistributionOrderId: "GO-DO-1", externalRowID: "1", key: "GO-1", quantity: 2, OrderType: "transfer", deliveryWindow: "W19", label: "spring" };
    expect((await api("POST", "/v2/api/distributionorders/batch", [row])).status).toBe(200);
    expect((await api("GET", "/v2/api/distributionorders/GO-DO-1")).body[0].attributes).toEqual({ orderType: "transfer", deliveryWindow: "W19", label: "spring" });
    const badRow = await api("POST", "/v2/api/distributionorders", [{ ...row, colour: "red" }]);
    expect([badRow.status, JSON.stringify(badRow.body)]).toEqual([400, expect.stringContaining("colour")]);
    // Re-sent with the same extras (another letter case, another key order): no change; a changed extra is one.
    const storedRow = (await api("GET", "/v2/api/distributionorders/GO-DO-1")).body[0];
    const rowAgain = await api("POST", "/v2/api/distributionorders/batch", [{ label: "spring", deliveryWindow: "W19", orderType: "transfer", externalDOID: "GO-DO-1", externalRowID: "1", key: "GO-1", quantity: 2 }]);
    expect(rowAgain.body.map((r: { message: string }) => r.message)).toEqual(["unchanged"]);
    expect((await api("GET", "/v2/api/distributionorders/GO-DO-1")).body[0].updatedAt).toBe(storedRow.updatedAt);
    const rowChanged = await api("POST", "/v2/api/distributionorders/batch", [{ ...row, label: "summer" }]);
    expect(rowChanged.body.map((r: { message: string }) => r.message)).toEqual(["updated"]);
    expect((await api("GET", "/v2/api/distributionorders/GO-DO-1")).body[0].attributes.label).toBe("summer");

    // Transactions: on the transaction and its items.
    const tx = {
      externalTransactionID: "GO-T-1",
      orderType: "web",
      invoicedDate: "2026-03-02T00:00:00Z",
      items: [{ externalID: "1", key: "GO-1", quantity: 1, vendorSKU: "V-1", size: "M", productGroupID: "G1", costPrice: 12.5 }],
    };
    expect((await api("POST", "/v2/api/transactions", [tx])).status).toBe(201);
    const sale = (await api("GET", "/v2/api/transactions/GO-T-1")).body;
    expect(sale.attributes).toEqual({ orderType: "web", invoicedDate: "2026-03-02T00:00:00Z" });
    expect(sale.items[0]).toMatchObject({ externalItemID: "1", attributes: { vendorSKU: "V-1", size: "M", productGroupID: "G1", costPrice: 12.5 } });
    const txAgain = await api("POST", "/v2/api/transactions/batch", [{ ...tx, OrderType: "web", orderType: undefined }]);
    expect(txAgain.body.map((r: { message: string }) => r.message)).toEqual(["unchanged"]);
    expect((await api("GET", "/v2/api/transactions/GO-T-1")).body.updatedAt).toBe(sale.updatedAt);
    const txChanged = await api("POST", "/v2/api/transactions/batch", [{ ...tx, items: [{ ...tx.items[0], size: "L" }] }]);
    expect(txChanged.body.map((r: { message: string }) => r.message)).toEqual(["updated"]);
    expect((await api("GET", "/v2/api/transactions/GO-T-1")).body.items[0].attributes.size).toBe("L");
    const badTx = await api("POST", "/v2/api/transactions/batch", [{ ...tx, items: [{ ...tx.items[0], colour: "red" }] }]);
    expect([badTx.body[0].statusCode, badTx.body[0].message]).toEqual([400, expect.stringContaining("colour")]);

    // The document shows them as deprecated properties of each body.
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as Record<string, any>;
    const schemaOf = (path: string, method: string) => {
      const s = doc.paths[path][method].requestBody.content["application/json"].schema.items;
      return s.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s;
    };
    const poBody = schemaOf("/v2/api/purchaseorders/batch", "post");
    expect(poBody.properties.factory).toMatchObject({ deprecated: true });
    expect(schemaOf("/v2/api/distributionorders/batch", "post").properties.label).toMatchObject({ deprecated: true });
    expect(schemaOf("/v2/api/transactions/batch", "post").properties.invoicedDate).toMatchObject({ deprecated: true });
  });

  it("refuses what its free fields cannot hold (1e309, NUL) as that item's 400 naming the field, on every order route", async () => {
    const { api, token } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    expect((await api("POST", "/v2/api/products/batch", [{ key: "GO-1", sku: "GO-1" }])).status).toBe(201);
    // JSON text with 1e309 written as the literal number (JSON.stringify cannot).
    const send = async (path: string, items: string[]) => {
      const res = await fetch(`${platform.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: `[${items.join(",")}]`,
      });
      return { status: res.status, body: (await res.json()) as { statusCode: number; message: string }[] };
    };
    const po = (no: string, extra: string, itemExtra = "") =>
      `{"externalPONo":"${no}","orderDate":"2026-01-01T00:00:00Z","deliveryStatus":0${extra},"items":[{"externalRowID":"1","key":"GO-1","quantity":1${itemExtra}}]}`;
    const orders = await send("/v2/api/purchaseorders/batch", [
      po("A", ',"attributes":{"x":[1,1e309]}'),
      po("B", ',"factory":"a\\u0000b"'),
      po("C", "", ',"productName":{"k\\u0000":1}'),
      po("OK", ',"factory":"F1"'),
    ]);
    expect(orders.body.map((r) => r.statusCode)).toEqual([400, 400, 400, 201]);
    expect(orders.body[0].message).toMatch(/attributes\.x\[1\]: must be a finite number/);
    expect(orders.body[1].message).toMatch(/factory: must be text without NUL/);
    expect(orders.body[2].message).toMatch(/items\[0\]\.productName: has a field name with a NUL/);
    const row = (id: string, extra: string) => `{"externalDOID":"${id}","externalRowID":"1","key":"GO-1","quantity":1${extra}}`;
    const rows = await send("/v2/api/distributionorders/batch", [row("D1", ',"label":1e309'), row("D2", ',"label":"L1"')]);
    expect(rows.status).toBe(400);
    expect(rows.body.map((r) => r.statusCode)).toEqual([400, 201]);
    expect(rows.body[0].message).toMatch(/label: must be a finite number/);
    const tx = (id: string, extra: string) => `{"externalTransactionID":"${id}"${extra},"items":[]}`;
    const sales = await send("/v2/api/transactions/batch", [tx("T1", ',"orderType":1e309'), tx("T2", ',"invoicedDate":{"a":"b\\u0000"}'), tx("T3", ',"orderType":"web"')]);
    expect(sales.body.map((r) => r.statusCode)).toEqual([400, 400, 201]);
    expect(sales.body[0].message).toMatch(/orderType: must be a finite number/);
    expect(sales.body[1].message).toMatch(/invoicedDate\.a: must be text without NUL/);
  });
});

describe("the published client's stock triggers", () => {
  const platform = platformForFile();

  it('take warehouseID "" as not given (it names the warehouse by warehouseExternalId), as an absent field', async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    expect((await api("POST", "/v2/api/products/batch", [{ key: "GO-1" }])).status).toBe(201);
    expect((await api("POST", "/v2/api/warehouses", [{ externalId: "WH-1" }])).status).toBe(201);
    const warehouse = (await api("GET", "/v2/api/warehouses")).body[0];
    const trigger = { key: "GO-1", min: 2 };

    const byExternalId = await api("POST", "/v2/api/stocktriggers/batch", [{ ...trigger, warehouseID: "", warehouseExternalId: "WH-1" }]);
    expect(byExternalId.body.map((r: { statusCode: number }) => r.statusCode)).toEqual([201]);
    // And the other way round: its unused warehouseExternalId "" next to the warehouse's id.
    const byId = await api("POST", "/v2/api/stocktriggers/batch", [{ ...trigger, min: 3, warehouseID: warehouse.ID, warehouseExternalId: "" }]);
    expect(byId.body.map((r: { message: string }) => r.message)).toEqual(["updated"]);
    expect((await api("GET", "/v2/api/stocktriggers")).body).toEqual([expect.objectContaining({ warehouseId: warehouse.ID, warehouseExternalId: "WH-1", min: 3 })]);

    // "" and nothing else answers exactly what sending neither answers.
    const neither = await api("POST", "/v2/api/stocktriggers/batch", [trigger]);
    const empty = await api("POST", "/v2/api/stocktriggers/batch", [{ ...trigger, warehouseID: "" }]);
    const bothEmpty = await api("POST", "/v2/api/stocktriggers/batch", [{ ...trigger, warehouseID: "", warehouseExternalId: "" }]);
    expect(neither.body[0].statusCode).toBe(400);
    expect([empty.status, empty.body]).toEqual([neither.status, neither.body]);
    expect([bothEmpty.status, bothEmpty.body]).toEqual([neither.status, neither.body]);
    // Anything else that is not a UUID is still the field's 400.
    const bad = await api("POST", "/v2/api/stocktriggers/batch", [{ ...trigger, warehouseID: " ", warehouseExternalId: "WH-1" }]);
    expect([bad.body[0].statusCode, bad.body[0].message]).toEqual([400, expect.stringContaining("warehouseId")]);
  });
});
