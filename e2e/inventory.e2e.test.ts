import pg from "pg";
import { eventually } from "@analytics/testing";
import { checkListTag, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** The inventory over HTTP on real Postgres and JetStream. */
describe("inventory over HTTP", () => {
  const platform = platformForFile();

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
    const tooMany = Array.from({ length: 1001 }, () => ({ key: "SKU-1", availableQuantity: 1, date: "2026-03-01T00:00:00Z", externalWarehouseID: "W1" }));
    expect((await acme.api("POST", "/v2/api/warehouses/stock", tooMany)).status).toBe(400);

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

  it("warehouse -> stock -> older snapshot ignored -> stock trigger -> sku_warehouse_settings_change event", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Triggers");
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Triggers other");
    await acme.api("POST", "/v2/api/products", { key: "SKU-9", sku: "9" });
    const [wh] = (await acme.api("POST", "/v2/api/warehouses", [{ externalId: "DC" }])).body;
    const newer = await acme.api("POST", "/v2/api/warehouses/DC/stock", [{ key: "SKU-9", availableQuantity: 40, physicalQuantity: 42, date: "2026-03-02T00:00:00Z" }]);
    expect(newer.body[0].message).toBe("stock updated");
    const older = await acme.api("POST", "/v2/api/warehouses/DC/stock", [{ key: "SKU-9", availableQuantity: 1, date: "2026-03-01T00:00:00Z" }]);
    expect(older.body[0].message).toMatch(/ignored/);
    expect((await acme.api("GET", "/v2/api/warehouses/DC/stock")).body[0].availableQuantity).toBe(40);

    const batch = await acme.api("POST", "/v2/api/stocktriggers/batch", [
      { warehouseExternalId: "DC", key: "SKU-9", min: 5, max: 50, startDate: "2026-03-01", preventRestock: false },
      { warehouseId: wh.ID, key: "NOPE", min: 1 },
      { warehouseExternalId: "DC", key: "SKU-9", min: -1 },
      { warehouseExternalId: "DC", key: "SKU-9", surprise: true },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.map((r: any) => r.statusCode)).toEqual([201, 404, 400, 400]);
    const [trigger] = (await acme.api("GET", "/v2/api/stocktriggers?key=SKU-9")).body;
    expect(trigger).toMatchObject({ warehouseId: wh.ID, warehouseExternalId: "DC", key: "SKU-9", sku: "9", min: 5, max: 50, startDate: "2026-03-01" });
    expect(Number.isInteger(trigger.ID)).toBe(true);
    expect((await acme.api("GET", `/v2/api/stocktriggers/${trigger.ID}`)).body).toEqual(trigger);
    expect((await acme.api("GET", "/v2/api/stocktriggers/abc")).status).toBe(400);
    expect((await other.api("GET", `/v2/api/stocktriggers/${trigger.ID}`)).status).toBe(404);
    expect((await other.api("GET", "/v2/api/stocktriggers")).body).toEqual([]);
    const changed = await acme.api("POST", "/v2/api/stocktriggers/batch", [{ warehouseId: wh.ID, key: "SKU-9", min: 6, max: 60 }]);
    expect(changed.body[0]).toMatchObject({ statusCode: 200, reference: "SKU-9", referenceField: "key" });
    const current = (await acme.api("GET", `/v2/api/stocktriggers/${trigger.ID}`)).body;

    const events = await eventually(async () => {
      const res = await acme.api("GET", "/v2/api/events?event_type=sku_warehouse_settings_change&pageSize=100");
      return res.body.length >= 2 ? res.body : undefined;
    }, 15_000, "sku_warehouse_settings_change events");
    expect(events).toHaveLength(2);
    expect(events[0].payload).toEqual(trigger);
    expect(events[1].payload).toEqual(current);
    expect((await other.api("GET", "/v2/api/events?event_type=sku_warehouse_settings_change")).body).toEqual([]);
    expect((await acme.api("DELETE", "/v2/api/warehouses/DC")).status).toBe(409);
  });

  it("stores and store traffic over HTTP, isolated per account", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Stores");
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Stores other");
    await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1" }]);
    const created = await acme.api("POST", "/v2/api/stores", [{ externalStoreId: "S1", name: "Shop", trafficCounterID: "C1", channelType: 1, adress: "Main st 1", warehouses: ["W1"] }]);
    expect(created.status).toBe(201);
    // Warehouses answered as the published client's Warehouse objects.
    expect(created.body[0]).toMatchObject({ externalStoreId: "S1", address: "Main st 1", adress: "Main st 1", address2: null, warehouses: [{ externalId: "W1", name: "" }], trafficCounterID: "C1" });
    expect((await acme.api("POST", "/v2/api/stores", [{ externalStoreId: "S2", warehouses: ["W404"] }])).status).toBe(400);
    expect((await acme.api("POST", "/v2/api/stores", [{ externalStoreId: "S2", channelType: 3 }])).status).toBe(400);
    expect((await acme.api("POST", "/v2/api/stores", [{ externalStoreId: "S2", address: "a", adress: "b" }])).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/stores/S1")).body).toEqual(created.body[0]);
    const put = await acme.api("PUT", "/v2/api/stores/S1", { name: "Shop 2" });
    expect(put.body).toMatchObject({ name: "Shop 2", address: null, warehouses: [] });
    expect((await other.api("GET", "/v2/api/stores/S1")).status).toBe(404);
    expect((await other.api("PUT", "/v2/api/stores/S1", { name: "x" })).status).toBe(404);
    expect((await other.api("DELETE", "/v2/api/stores/S1")).status).toBe(404);
    expect((await other.api("GET", "/v2/api/stores")).body).toEqual([]);

    const events = [
      { storeTrafficCounterID: "C1", eventTime: "2026-03-01T10:00:00Z", incomingTraffic: 3, outgoingTraffic: 2, storeID: "S1" },
      { storeTrafficCounterID: "C1", eventTime: "2026-03-01T11:00:00Z", incomingTraffic: 4, outgoingTraffic: 4 },
    ];
    const posted = await acme.api("POST", "/v2/api/storetrafficevents", events);
    expect(posted.body).toMatchObject({ statusCode: 200, message: "recorded: 2 created, 0 updated" });
    expect((await acme.api("POST", "/v2/api/storetrafficevents", [{ ...events[0], incomingTraffic: 9 }])).body.message).toBe("recorded: 0 created, 1 updated");
    const negative = await acme.api("POST", "/v2/api/storetrafficevents", [{ ...events[0], outgoingTraffic: -1 }]);
    expect(negative.status).toBe(400);
    expect(negative.body.message).toMatch(/outgoingTraffic/);
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ ...events[1], eventTime: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString() }));
    expect((await acme.api("POST", "/v2/api/storetrafficevents", tooMany)).status).toBe(400);
    const listed = await acme.api("GET", "/v2/api/storetrafficevents/C1?from=2026-03-01T10:30:00Z");
    expect(listed.body).toEqual([{ storeTrafficCounterID: "C1", eventTime: "2026-03-01T11:00:00.000Z", incomingTraffic: 4, outgoingTraffic: 4, name: null, storeID: null }]);
    expect((await acme.api("GET", "/v2/api/storetrafficevents")).headers.get("x-total-count")).toBe("2");
    expect((await acme.api("GET", "/v2/api/storetrafficevents?from=yesterday")).status).toBe(400);
    expect((await other.api("GET", "/v2/api/storetrafficevents")).body).toEqual([]);
    expect((await acme.api("DELETE", "/v2/api/stores/S1")).status).toBe(200);
  });

  it("answers its lists a weak ETag that a write of the account moves on (a delete too), another account's not", async () => {
    const a = await signUp(platform.baseUrl, ADMIN_TOKEN, "Tagged");
    const b = await signUp(platform.baseUrl, ADMIN_TOKEN, "Untouched");
    for (const { api } of [a, b]) {
      await api("POST", "/v2/api/products", { key: "SKU-1" });
      await api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }]);
    }
    const snapshot = (quantity: number) => [{ key: "SKU-1", availableQuantity: quantity, date: `2026-03-0${quantity}T00:00:00Z`, externalWarehouseID: "W1" }];
    await checkListTag(a.api, "/v2/api/warehouses/stock?keys=SKU-1", "/v2/api/warehouses/stock?keys=SKU-2", () => b.api("POST", "/v2/api/warehouses/stock", snapshot(1)), () =>
      a.api("POST", "/v2/api/warehouses/stock", snapshot(2)),
    );
    await a.api("POST", "/v2/api/warehouses", [{ externalId: "W2", name: "Empty" }]);
    await checkListTag(a.api, "/v2/api/warehouses", "/v2/api/warehouses?pageSize=1", () => b.api("POST", "/v2/api/warehouses", [{ externalId: "W2", name: "Other" }]), () =>
      a.api("DELETE", "/v2/api/warehouses/W2"),
    );
    // One counter's traffic events are a list too: a weak tag decided before its query, not a single resource's strong one.
    const traffic = (incomingTraffic: number) => [{ storeTrafficCounterID: "C1", eventTime: "2026-03-01T10:00:00Z", incomingTraffic, outgoingTraffic: 0 }];
    await checkListTag(a.api, "/v2/api/storetrafficevents/C1", "/v2/api/storetrafficevents/C1?pageSize=1", () => b.api("POST", "/v2/api/storetrafficevents", traffic(1)), () =>
      a.api("POST", "/v2/api/storetrafficevents", traffic(2)),
    );
  });

  it("documents every inventory route in the OpenAPI document, with the warehouse delete's 409", async () => {
    const doc: any = await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json();
    const paths = [
      "/v2/api/warehouses",
      "/v2/api/warehouses/{externalWarehouseID}",
      "/v2/api/warehouses/stock",
      "/v2/api/warehouses/{externalWarehouseID}/stock",
      "/v2/api/stores",
      "/v2/api/stores/{externalStoreID}",
      "/v2/api/storetrafficevents",
      "/v2/api/storetrafficevents/{storeTrafficCounterID}",
      "/v2/api/stocktriggers",
      "/v2/api/stocktriggers/{ID}",
      "/v2/api/stocktriggers/batch",
    ];
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(paths));
    expect(doc.paths["/v2/api/warehouses/{externalWarehouseID}"].delete.responses["409"].description).toMatch(/stock or stock triggers/);
    expect(doc.paths["/v2/api/warehouses"].post.requestBody).toBeDefined();
    expect(doc.paths["/v2/api/storetrafficevents"].post.requestBody).toBeDefined();
  });

  // Both writes pass the gateway's If-Match check while another transaction holds the row; only the
  // service's check under the row's lock can then tell that the first one changed it.
  it("makes If-Match atomic: of two writes racing with one ETag, one is done and the other is a 412 that changes nothing", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Racing");
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }])).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/stores", [{ externalStoreId: "S1", name: "Store", currencyCode: "EUR", warehouses: ["W1"] }])).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/price-lists", { externalPriceListId: "PL", name: "Retail", currency: "EUR" })).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/mappingtables/colour", { mappingType: "products", mappingValues: { blk: "Black" } })).status).toBe(200);
    const cases = [
      { table: "inventory.warehouses", path: "/v2/api/warehouses/W1", method: "PUT", body: (n: string) => ({ name: n }), shows: (r: any) => r.name },
      { table: "inventory.stores", path: "/v2/api/stores/S1", method: "PUT", body: (n: string) => ({ name: n, currencyCode: "EUR", warehouses: ["W1"] }), shows: (r: any) => r.name },
      { table: "pricing.price_lists", path: "/v2/api/price-lists/PL", method: "PUT", body: (n: string) => ({ name: n, currency: "EUR" }), shows: (r: any) => r.name },
      { table: "catalogue.mapping_tables", path: "/v2/api/mappingtables/colour?mappingType=products", method: "PUT", body: (n: string) => ({ mappingValues: { blk: n } }), shows: (r: any) => r.mappingValues.blk },
      { table: "inventory.warehouses", path: "/v2/api/warehouses/W1", method: "DELETE", body: () => undefined, shows: () => undefined },
    ];
    const holder = new pg.Client({ connectionString: platform.databaseUrl });
    const watcher = new pg.Client({ connectionString: platform.databaseUrl });
    await Promise.all([holder.connect(), watcher.connect()]);
    try {
      for (const c of cases) {
        // The store refers to the warehouse: gone first, so that the warehouse's delete can be done.
        if (c.method === "DELETE") expect((await acme.api("DELETE", "/v2/api/stores/S1")).status).toBe(200);
        const tag = (await acme.api("GET", c.path)).headers.get("etag")!;
        expect(tag).toMatch(/^"\d+-[A-Za-z0-9_-]{32}"$/);
        await holder.query("BEGIN");
        await holder.query(`SELECT 1 FROM ${c.table} WHERE account_id = $1 FOR UPDATE`, [acme.accountID]);
        const writes = ["First", "Second"].map((name) => acme.api(c.method, c.path, c.body(name), { "if-match": tag }));
        // Asked outside the holder's transaction: within one, pg_stat_activity stays as first read.
        const waiting = async () =>
          (await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1", [`%${c.table.split(".")[1]}%`])).rows[0].n;
        await eventually(async () => (await waiting()) >= 2, 8_000, `both ${c.method} ${c.path} waiting for the row`);
        await holder.query("ROLLBACK");
        const answers = await Promise.all(writes);
        expect({ [`${c.method} ${c.path}`]: answers.map((a) => a.status).sort() }).toEqual({ [`${c.method} ${c.path}`]: [200, 412] });
        const winner = answers.findIndex((a) => a.status === 200);
        expect(answers[1 - winner].body).toMatchObject({ statusCode: 412, details: [{ path: "If-Match", message: "is not the resource's current ETag" }] });
        const now = await acme.api("GET", c.path);
        if (c.method === "DELETE") expect(now.status).toBe(404);
        else expect([now.status, c.shows(now.body)]).toEqual([200, ["First", "Second"][winner]]);
      }
    } finally {
      await Promise.all([holder.end(), watcher.end()]);
    }
  });
});
