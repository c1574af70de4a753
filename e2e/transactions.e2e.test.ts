import { checkListTag, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** Transactions and shipments over HTTP on real Postgres and JetStream. */
describe("transactions over HTTP", () => {
  const platform = platformForFile();

  it("create -> replace -> batch -> shipments capped at the quantity (also concurrently); isolation", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const sale = {
      externalTransactionID: "T-1",
      channel: 1,
      type: 1,
      currencyCode: "SEK",
      createdDate: "2026-03-01T12:00:00+0100",
      items: [{ externalID: "1", key: "SKU-1", quantity: 4, moneyItemTotalNet: 1234567.891, vatValue: 25, type: 1, customFields: { gift: true } }],
      statements: [{ name: "shipping", type: 3, priceNet: 39.2 }],
    };
    const created = await acme.api("POST", "/v2/api/transactions", [sale]);
    expect(created.status).toBe(201);
    expect(created.body[0]).toMatchObject({ externalTransactionID: "T-1", createdDate: "2026-03-01T11:00:00.000Z", items: [{ externalItemID: "1", shipments: [] }] });
    const raw = await fetch(`${platform.baseUrl}/v2/api/transactions/T-1`, { headers: { authorization: `Bearer ${acme.token}` } });
    expect(await raw.text()).toContain('"moneyItemTotalNet":1234567.891');
    expect((await acme.api("POST", "/v2/api/transactions", [sale])).status).toBe(409);
    expect((await acme.api("POST", "/v2/api/transactions", [{ ...sale, externalTransactionID: "T-X", channel: 3 }])).status).toBe(400);
    const id = created.body[0].id;
    const replaced = await acme.api("PUT", "/v2/api/transactions/", [{ ...sale, id, market: "SE" }]);
    expect([replaced.status, replaced.body[0].market]).toEqual([200, "SE"]);
    expect((await acme.api("PUT", "/v2/api/transactions/", [sale])).status).toBe(400);
    const batch = await acme.api("POST", "/v2/api/transactions/batch", [{ ...sale, market: "NO" }, { externalTransactionID: "T-2", items: [{ externalItemID: "a", quantity: 1 }] }, { externalTransactionID: "T-3", statements: [{ type: 9 }] }]);
    expect(batch.body.map((r: any) => [r.reference, r.statusCode])).toEqual([
      ["T-1", 200],
      ["T-2", 201],
      ["T-3", 400],
    ]);
    expect((await acme.api("GET", "/v2/api/transactions/latest")).body.externalTransactionID).toBe("T-2");
    expect((await acme.api("GET", "/v2/api/transactions")).headers.get("x-total-count")).toBe("2");
    expect((await acme.api("GET", "/v2/api/transactions/example")).body.externalTransactionID).toBe("T-2026-0001");

    const ship = (quantity: number, shipmentID = `S-${quantity}`) => acme.api("POST", "/v2/api/transactions/T-1/items/1/shipments", { shipmentID, quantity, shipmentDate: "2026-03-02T00:00:00Z", externalWarehouseID: "WH1" });
    const first = await ship(1);
    expect([first.status, first.body.items[0].shipments]).toEqual([201, [{ shipmentID: "S-1", quantity: 1, shipmentDate: "2026-03-02T00:00:00.000Z", externalWarehouseID: "WH1" }]]);
    // A client's retry of the same shipment adds nothing; the same shipmentID with other values is a 409.
    const retried = await ship(1);
    expect([retried.status, retried.body.items[0].shipments.length]).toEqual([200, 1]);
    expect((await ship(2, "S-1")).status).toBe(409);
    const unnamed = await acme.api("POST", "/v2/api/transactions/T-1/items/1/shipments", { quantity: 1.5 });
    expect([unnamed.status, unnamed.body.details?.[0]?.path]).toEqual([400, "[0].quantity"]);
    const over = await ship(4);
    expect([over.status, over.body.message]).toEqual([400, expect.stringContaining("exceed")]);
    const concurrent = await Promise.all(Array.from({ length: 10 }, (_, n) => ship(1, `C-${n}`)));
    expect(concurrent.map((r) => r.status).sort()).toEqual([201, 201, 201, 400, 400, 400, 400, 400, 400, 400]);
    expect((await acme.api("GET", "/v2/api/transactions/T-1")).body.items[0].shipments.length).toBe(4);
    expect((await acme.api("POST", "/v2/api/transactions/T-1/items/nope/shipments", { quantity: 1 })).status).toBe(404);

    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("GET", "/v2/api/transactions/T-1")).status).toBe(404);
    expect((await other.api("POST", "/v2/api/transactions/T-1/items/1/shipments", { quantity: 1 })).status).toBe(404);
    expect((await other.api("PUT", "/v2/api/transactions/", [{ ...sale, id }])).status).toBe(404);
  });

  it("answers its list a weak ETag that a write of the account moves on, another account's not", async () => {
    const a = await signUp(platform.baseUrl, ADMIN_TOKEN, "Tagged");
    const b = await signUp(platform.baseUrl, ADMIN_TOKEN, "Untouched");
    const sale = (id: string) => [{ externalTransactionID: id, items: [{ externalItemID: "1", quantity: 1 }] }];
    await a.api("POST", "/v2/api/transactions", sale("T-1"));
    await checkListTag(a.api, "/v2/api/transactions", "/v2/api/transactions?page=2", () => b.api("POST", "/v2/api/transactions", sale("T-2")), () =>
      a.api("POST", "/v2/api/transactions", sale("T-2")),
    );
  });
});
