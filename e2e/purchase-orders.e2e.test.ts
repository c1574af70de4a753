import pg from "pg";
import { eventually } from "@analytics/testing";
import { Go, decoded } from "./go-client";
import { client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** Purchase orders over HTTP on real Postgres and JetStream: the gateway, the catalogue's SKUs and the orders service. */
describe("purchase orders over HTTP", () => {
  const platform = platformForFile();

  const order = (no: string, extra: Record<string, unknown> = {}) => ({
    externalPONo: no,
    orderDate: "2026-03-01T10:00:00+01:00",
    deliveryDate: "2026-04-01T00:00:00Z",
    externalWarehouseID: "WH1",
    supplier: "Acme",
    items: [
      { externalRowID: "1", key: "SKU-1", quantity: 10, totalPriceNet: 1234567.891, deliveries: [{ deliveryID: "D1", quantity: 4 }] },
      { externalRowId: "2", sku: "S-2", quantity: 5, deliveryDate: "2026-05-01T00:00:00+0200" },
    ],
    ...extra,
  });

  it("a batch whose items' COPY Postgres refuses midway is answered as failed whole, and the platform stays up", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    for (const key of ["SKU-1", "BOOM"]) expect((await acme.api("POST", "/v2/api/products", { key })).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "WH1", name: "Main" }])).status).toBe(201);
    // Postgres refuses one item while the orders service is still encoding the batch's messages:
    // the COPY's failure must reach the write, not escape it (an unhandled rejection ends Node).
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      await db.query(`CREATE FUNCTION orders.refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.key = 'BOOM' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await db.query("CREATE TRIGGER refuse_boom BEFORE INSERT ON orders.purchase_order_items FOR EACH ROW EXECUTE FUNCTION orders.refuse_boom()");
      const orders = Array.from({ length: 500 }, (_, n) => ({
        externalPONo: `BIG-${n}`,
        items: Array.from({ length: 10 }, (_, k) => ({ externalRowID: String(k), key: n === 0 && k === 0 ? "BOOM" : "SKU-1", quantity: 1 })),
      }));
      const failed = await acme.api("POST", "/v2/api/purchaseorders/batch", orders);
      expect([failed.status, failed.body.length, failed.body.every((r: { statusCode: number }) => r.statusCode === 500)]).toEqual([500, 500, true]);
    } finally {
      await db.query("DROP TRIGGER IF EXISTS refuse_boom ON orders.purchase_order_items");
      await db.query("DROP FUNCTION IF EXISTS orders.refuse_boom()");
      await db.end();
    }
    expect((await acme.api("GET", "/v2/api/purchaseorders")).body).toEqual([]);
    expect((await acme.api("POST", "/v2/api/purchaseorders", [order("AFTER", { items: [{ externalRowID: "1", key: "SKU-1", quantity: 1 }] })])).status).toBe(201);
  });

  it("items keep text COPY would misread (tabs, newlines, backslashes, \\N) and their ids when re-sent", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    expect((await acme.api("POST", "/v2/api/products/batch", [{ key: "SKU-1", sku: "S-1" }])).status).toBe(201);
    const odd = "tab\there\nline\r\\N \\back\\slash";
    const sent = { externalPONo: "PO-ODD", items: [{ externalRowID: "1", key: "SKU-1", season: odd, quantity: 2, productName: odd, deliveries: [{ deliveryID: odd, quantity: 1 }] }] };
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [sent])).body[0].statusCode).toBe(201);
    const stored = (await acme.api("GET", "/v2/api/purchaseorders/PO-ODD")).body;
    expect(stored.items[0]).toMatchObject({ season: odd, attributes: { productName: odd }, deliveries: [{ deliveryID: odd, quantity: 1 }], deliveredQuantity: 1 });
    const resent = await acme.api("POST", "/v2/api/purchaseorders/batch", [{ ...sent, items: [{ ...sent.items[0], quantity: 3 }] }]);
    expect(resent.body[0]).toMatchObject({ statusCode: 200, message: "updated" });
    const again = (await acme.api("GET", "/v2/api/purchaseorders/PO-ODD")).body;
    expect(again.items.map((i: any) => [i.id, i.quantity, i.season])).toEqual([[stored.items[0].id, 3, odd]]);
  });

  it("create -> replace -> batch with another key (409, then global) -> processing filter; isolation between accounts", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    expect((await acme.api("POST", "/v2/api/products/batch", [{ key: "SKU-1", sku: "S-1" }, { key: "SKU-2", sku: "S-2" }])).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/warehouses", [{ externalId: "WH1", name: "Main" }])).status).toBe(201);

    const created = await acme.api("POST", "/v2/api/purchaseorders", [order("PO-1")]);
    expect(created.status).toBe(201);
    const [po] = created.body;
    expect(po).toMatchObject({ externalPONo: "PO-1", orderDate: "2026-03-01T09:00:00.000Z", deliveryStatus: 0, apiKeyId: acme.apiKeyId });
    expect(po.items.map((i: any) => [i.externalRowID, i.deliveredQuantity, i.deliveryDate])).toEqual([
      ["1", 4, null],
      ["2", 0, "2026-04-30T22:00:00.000Z"],
    ]);
    // Exact decimals: the digits sent come back.
    const raw = await fetch(`${platform.baseUrl}/v2/api/purchaseorders/PO-1`, { headers: { authorization: `Bearer ${acme.token}` } });
    expect(await raw.text()).toContain('"totalPriceNet":1234567.891');
    expect((await acme.api("POST", "/v2/api/purchaseorders", [order("PO-1")])).status).toBe(409);
    const unknownSku = await acme.api("POST", "/v2/api/purchaseorders", [order("PO-X", { items: [{ externalRowID: "9", key: "NOPE", quantity: 1 }] })]);
    expect(unknownSku.status).toBe(404);
    expect(unknownSku.body.message).toContain("externalRowID 9");
    expect((await acme.api("GET", "/v2/api/purchaseorders/PO-X")).status).toBe(404);

    const noId = await acme.api("PUT", "/v2/api/purchaseorders/", [order("PO-1")]);
    expect(noId.status).toBe(400);
    const replaced = await acme.api("PUT", "/v2/api/purchaseorders/", [{ id: po.id, externalPurchaseNo: "PO-1", deliveryStatus: 5, items: [{ externalRowID: "1", key: "SKU-1", quantity: 3 }] }]);
    expect(replaced.status).toBe(200);
    expect(replaced.body[0]).toMatchObject({ id: po.id, deliveryStatus: 5, supplier: null });
    expect(replaced.body[0].items.map((i: any) => [i.id, i.quantity])).toEqual([[po.items[0].id, 3]]);

    // A second key of the same account: the first key's order is that item's 409 until global=true.
    const admin = client(platform.baseUrl, ADMIN_TOKEN);
    const key2 = await admin("POST", `/admin/v1/accounts/${acme.accountID}/keys`, { name: "erp" });
    const auth2 = await client(platform.baseUrl)("POST", "/v2/api/auth", { accountID: acme.accountID, apiKey: key2.body.apiKey });
    const erp = client(platform.baseUrl, auth2.body.accessToken);
    const batch = [order("PO-1", { deliveryStatus: 2 }), order("PO-2", { deliveryStatus: 4 }), order("PO-3", { orderDate: "1969-12-31T23:59:59Z" })];
    const denied = await erp("POST", "/v2/api/purchaseorders/batch", batch);
    expect(denied.status).toBe(200);
    expect(denied.body.map((r: any) => [r.reference, r.referenceField, r.statusCode])).toEqual([
      ["PO-1", "externalPONo", 409],
      ["PO-2", "externalPONo", 201],
      ["PO-3", "externalPONo", 400],
    ]);
    expect(denied.body[2].message).toContain("orderDate");
    const allowed = await erp("POST", "/v2/api/purchaseorders/batch?global=true", batch.slice(0, 2));
    expect(allowed.body.map((r: any) => [r.statusCode, r.message])).toEqual([
      [200, "updated"],
      [200, "unchanged"],
    ]);
    expect((await erp("GET", "/v2/api/purchaseorders")).body.map((p: any) => p.externalPONo)).toEqual(["PO-2"]);
    const all = await erp("GET", "/v2/api/purchaseorders?global=true&pageSize=1");
    expect([all.body.map((p: any) => p.externalPONo), all.headers.get("x-total-count")]).toEqual([["PO-1"], "2"]);
    expect(all.headers.get("link")).toContain('rel="next"');
    // PO-1 is fully delivered now (2), PO-2 a draft (4): neither is processing; PO-1 of the first key was 5.
    expect((await acme.api("GET", "/v2/api/purchaseorders?status=processing&global=true")).body).toEqual([]);
    expect((await acme.api("GET", "/v2/api/purchaseorders?status=open")).status).toBe(400);
    expect((await erp("GET", "/v2/api/purchaseorders/latest")).body.externalPONo).toBe("PO-2");

    // Date filters: Z, colon and colon-less offsets; lower inclusive, upper exclusive; anything else 400.
    const from = await acme.api("GET", "/v2/api/purchaseorders?global=true&from=2026-03-01T10:00:00%2B0100&to=2026-03-01T09:00:00.001Z");
    expect(from.body.map((p: any) => p.externalPONo)).toEqual(["PO-1", "PO-2"]);
    expect((await acme.api("GET", "/v2/api/purchaseorders?global=true&to=2026-03-01T10:00:00%2B01:00")).body).toEqual([]);
    for (const bad of ["2026-03-01", "2026-03-01T10:00:00", "yesterday", "2026-02-30T00:00:00Z"]) {
      const r = await acme.api("GET", `/v2/api/purchaseorders?createdFrom=${encodeURIComponent(bad)}`);
      expect([bad, r.status]).toEqual([bad, 400]);
    }
    expect((await acme.api("GET", "/v2/api/purchaseorders?updatedFrom=2000-01-01T00:00:00Z")).body.map((p: any) => p.externalPONo)).toEqual(["PO-1"]);

    // More than 500 orders is a 400 before anything is written.
    const tooMany = await acme.api("POST", "/v2/api/purchaseorders/batch", Array.from({ length: 501 }, (_, i) => order(`BIG-${i}`)));
    expect(tooMany.status).toBe(400);
    expect((await acme.api("GET", "/v2/api/purchaseorders/BIG-0")).status).toBe(404);
    // No orders at all is a 400 too, as on every other array body.
    for (const [method, path] of [["POST", "/v2/api/purchaseorders"], ["PUT", "/v2/api/purchaseorders/"], ["POST", "/v2/api/purchaseorders/batch"]]) {
      expect(await acme.api(method, path, [])).toMatchObject({ status: 400, body: { message: expect.stringContaining(">=1 items") } });
    }

    // Another account sees none of it, and its own PO-1 is another order.
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("GET", "/v2/api/purchaseorders/PO-1?global=true")).status).toBe(404);
    expect((await other.api("GET", "/v2/api/purchaseorders?global=true")).body).toEqual([]);
    expect((await other.api("PUT", "/v2/api/purchaseorders/", [{ ...order("PO-1"), id: po.id, items: [] }])).status).toBe(404);
    expect((await acme.api("GET", "/v2/api/purchaseorders/example")).body.externalPONo).toBe("PO-2026-0001");
    const openapi = await client(platform.baseUrl)("GET", "/v2/api/openapi.json");
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(["/v2/api/purchaseorders", "/v2/api/purchaseorders/", "/v2/api/purchaseorders/batch"]));
  });
});

describe("draft purchase orders on the event queue", () => {
  const platform = platformForFile();

  it("a draft created, changed and leaving draft is one draft_po_change each, payload the order as GET returns it; other orders none", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    await acme.api("POST", "/v2/api/products", { key: "SKU-1" });
    const item = { externalRowID: "1", key: "SKU-1", quantity: 2 };
    const send = async (no: string, deliveryStatus: number, label: string) =>
      (await acme.api("POST", "/v2/api/purchaseorders/batch", [{ externalPONo: no, deliveryStatus, label, items: [item] }])).body[0].statusCode;
    expect(await send("DRAFT", 4, "a")).toBe(201);
    expect(await send("DRAFT", 4, "a")).toBe(200); // unchanged: no entry
    expect(await send("DRAFT", 4, "b")).toBe(200);
    expect(await send("DRAFT", 0, "b")).toBe(200); // leaves draft
    expect(await send("DRAFT", 0, "c")).toBe(200); // no draft before or after: no entry
    expect(await send("PLAIN", 0, "a")).toBe(201);
    // A last draft: once its entry is there, every change before it has been through the queue.
    expect(await send("LAST", 4, "z")).toBe(201);
    const again = await eventually(async () => {
      const r = await acme.api("GET", "/v2/api/events?event_type=draft_po_change&pageSize=100");
      return r.body.some((e: any) => e.payload.externalPONo === "LAST") && r.body;
    });
    expect(again.map((e: any) => [e.payload.externalPONo, e.payload.deliveryStatus, e.payload.label])).toEqual([
      ["DRAFT", 4, "a"],
      ["DRAFT", 4, "b"],
      ["DRAFT", 0, "b"],
      ["LAST", 4, "z"],
    ]);
    const current = (await acme.api("GET", "/v2/api/purchaseorders/DRAFT")).body;
    expect(again[2].payload).toEqual({ ...current, label: "b", updatedAt: again[2].payload.updatedAt });
  });

  it("lines answer skuId as the product's integer id and skuUuid as its UUID: written, read (also lines stored before orders kept it) and in draft_po_change payloads", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const [product] = (await acme.api("POST", "/v2/api/products", { key: "SKU-I" })).body;
    const ids = { skuId: product.id, skuUuid: product.uuid };
    expect(ids).toEqual({ skuId: expect.any(Number), skuUuid: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const created = await acme.api("POST", "/v2/api/purchaseorders", [{ externalPONo: "INT", deliveryStatus: 4, items: [{ externalRowID: "1", key: "SKU-I", quantity: 2 }] }]);
    expect(created.status).toBe(201);
    expect(decoded([Go.PurchaseOrder], created.body)[0].items[0]).toMatchObject(ids);
    expect(decoded(Go.PurchaseOrder, (await acme.api("GET", "/v2/api/purchaseorders/INT")).body).items[0]).toMatchObject(ids);
    const [entry] = await eventually(async () => {
      const r = await acme.api("GET", "/v2/api/events?event_type=draft_po_change");
      return r.body.length > 0 && r.body;
    });
    expect(decoded(Go.PurchaseOrder, entry.payload).items[0]).toMatchObject(ids);

    // As stored before orders kept the integer id (migration 006): answered with it all the same.
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      await db.query("UPDATE orders.purchase_order_items SET sku_seq = NULL WHERE account_id = $1", [acme.accountID]);
    } finally {
      await db.end();
    }
    for (const path of ["/v2/api/purchaseorders/INT", "/v2/api/purchaseorders/latest"]) expect((await acme.api("GET", path)).body.items[0]).toMatchObject(ids);
    expect((await acme.api("GET", "/v2/api/purchaseorders")).body[0].items[0]).toMatchObject(ids);
    // Sent back as read, it is unchanged: the integer id is no part of the order's content.
    const order = (await acme.api("GET", "/v2/api/purchaseorders/INT")).body;
    expect((await acme.api("POST", "/v2/api/purchaseorders/batch", [order])).body[0]).toMatchObject({ statusCode: 200, message: "unchanged" });
    const replaced = await acme.api("PUT", "/v2/api/purchaseorders/", [order]);
    expect(replaced.status).toBe(200);
    expect(replaced.body[0].items[0]).toMatchObject(ids);
  });
});
