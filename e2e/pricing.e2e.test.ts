import { eventually } from "@analytics/testing";
import { checkListTag, client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** Pricing over HTTP on real Postgres and JetStream: lists, prices (SKUs resolved by the catalogue), products with prices. */
describe("pricing over HTTP", () => {
  const platform = platformForFile();

  it("price list -> prices batch with custom prices -> product shows its prices -> GET /prices -> delete batch", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const admin = client(platform.baseUrl, ADMIN_TOKEN);
    expect((await admin("PUT", `/admin/v1/accounts/${acme.accountID}/settings`, { customPriceFields: ["outlet", "campaign"] })).status).toBe(200);

    const list = await acme.api("POST", "/v2/api/price-lists", { externalId: "RETAIL-EU", name: "Retail EU", currency: "EUR", defaultVat: 25, createdAt: "ignored" });
    expect(list.status).toBe(201);
    expect(list.body).toMatchObject({ externalPriceListId: "RETAIL-EU", name: "Retail EU", currency: "EUR", defaultPriceList: false, defaultVat: 25 });
    expect((await acme.api("POST", "/v2/api/price-lists", { externalPriceListId: "X", name: "x", currency: "EURO" })).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/price-lists/NOPE")).status).toBe(404);
    const put = await acme.api("PUT", "/v2/api/price-lists/RETAIL-EU", { name: "Retail Europe", currency: "EUR", defaultVat: 25, defaultPriceList: true });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: "Retail Europe", defaultPriceList: true });
    expect((await acme.api("PUT", "/v2/api/price-lists/NOPE", { name: "n", currency: "EUR" })).status).toBe(404);
    await acme.api("POST", "/v2/api/price-lists", { externalPriceListId: "OUTLET", name: "Outlet", currency: "SEK" });
    expect((await acme.api("GET", "/v2/api/price-lists")).body.map((l: any) => l.externalPriceListId)).toEqual(["RETAIL-EU", "OUTLET"]);

    await acme.api("POST", "/v2/api/products/batch", [{ key: "SKU-1", sku: "1001" }, { key: "SKU-2", sku: "1002" }]);
    await acme.api("POST", "/v2/api/products/keyswitch", [{ oldKey: "SKU-2", key: "SKU-2B", sku: "1002" }]);

    // The settings reach pricing through the bus: a custom price outside them is that item's 400.
    await eventually(async () => {
      const res = await acme.api("POST", "/v2/api/prices/batch", [{ listExternalID: "RETAIL-EU", key: "SKU-1", price: 1, customPrices: { staff: 1 } }]);
      return res.body[0].statusCode === 400 && res.body[0].message.includes("customPrices.staff");
    }, 15_000, "custom price fields replica");

    const batch = await acme.api("POST", "/v2/api/prices/batch", [
      { listExternalID: "RETAIL-EU", key: "SKU-1", price: 19.99, customPrices: { outlet: 14.5 } },
      { listExternalID: "OUTLET", key: "SKU-1", price: 149, vat: 12, season: "AW26" },
      { listExternalID: "RETAIL-EU", key: "SKU-2", price: 29.9 },
      { listExternalID: "RETAIL-EU", key: "NOPE", price: 1 },
      { listExternalID: "GONE", key: "SKU-1", price: 1 },
      { listExternalID: "RETAIL-EU", key: "SKU-1", price: -1 },
      { listExternalID: "RETAIL-EU", key: "SKU-1", price: 1, unknown: 1 },
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body.map((r: any) => r.statusCode)).toEqual([201, 201, 201, 404, 404, 400, 400]);
    expect(batch.body[0]).toMatchObject({ reference: "SKU-1", referenceField: "key" });
    // Custom prices merge: campaign is added, outlet kept.
    const merged = await acme.api("POST", "/v2/api/prices/batch", [{ listExternalID: "RETAIL-EU", key: "SKU-1", price: 18.5, customPrices: { campaign: 15 } }]);
    expect(merged.body[0].statusCode).toBe(200);

    const products = (await acme.api("GET", "/v2/api/products?pageSize=10")).body;
    expect(products.find((p: any) => p.key === "SKU-1").prices).toEqual([
      { listExternalID: "RETAIL-EU", price: 18.5, currency: "EUR", vat: 25, customPrices: { outlet: 14.5, campaign: 15 } },
      { listExternalID: "OUTLET", price: 149, currency: "SEK", vat: 12, customPrices: {} },
    ]);
    expect(products.find((p: any) => p.key === "SKU-2B").prices).toEqual([{ listExternalID: "RETAIL-EU", price: 29.9, currency: "EUR", vat: 25, customPrices: {} }]);

    // A price change is an update_sku entry with the product as GET /products shows it.
    const sku1 = products.find((p: any) => p.key === "SKU-1");
    const priced = await eventually(async () => {
      const events = (await acme.api("GET", "/v2/api/events?event_type=update_sku&pageSize=100")).body;
      const mine = events.filter((e: any) => e.payload.id === sku1.id && e.payload.prices.length === 2 && e.payload.prices[0].price === 18.5);
      return mine.length ? mine : undefined;
    }, 15_000, "update_sku after the price change");
    expect(priced).toHaveLength(1);
    expect(priced[0].payload).toEqual(sku1);

    const all = await acme.api("GET", "/v2/api/prices");
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(3);
    expect(all.body[0]).toEqual({
      listExternalID: "RETAIL-EU",
      key: "SKU-1",
      sku: "1001",
      price: 18.5,
      currency: "EUR",
      vat: 25,
      season: null,
      customPrices: { outlet: 14.5, campaign: 15 },
      // The account's customPriceFields (outlet, campaign) by position, as the published client reads them.
      customPrice1: 14.5,
      customPrice2: 15,
      customPrice3: null,
      customPrice4: null,
      updatedAt: expect.stringMatching(/Z$/),
    });
    // The old key resolved to the product; the price carries its current key.
    expect(all.body[2]).toMatchObject({ key: "SKU-2B", price: 29.9 });
    const paged = await acme.api("GET", "/v2/api/prices?page=2&pageSize=2");
    expect(paged.headers.get("x-total-count")).toBe("3");
    expect(paged.body).toHaveLength(1);
    expect((await acme.api("GET", "/v2/api/prices?pageSize=1001")).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/price-lists/OUTLET/prices")).body.map((p: any) => p.price)).toEqual([149]);
    expect((await acme.api("GET", "/v2/api/price-lists/NOPE/prices")).status).toBe(404);

    // Another account sees none of it.
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("GET", "/v2/api/prices")).body).toEqual([]);
    expect((await other.api("GET", "/v2/api/price-lists/RETAIL-EU")).status).toBe(404);
    expect((await other.api("POST", "/v2/api/prices/batch", [{ listExternalID: "RETAIL-EU", key: "SKU-1", price: 1 }])).body[0].statusCode).toBe(404);
    expect((await other.api("DELETE", "/v2/api/prices/batch", { listExternalID: "RETAIL-EU", keys: ["SKU-1"] })).body[0].statusCode).toBe(404);

    const deleted = await acme.api("DELETE", "/v2/api/prices/batch", { listExternalID: "RETAIL-EU", keys: ["SKU-1", "SKU-2", "NOPE"] });
    expect(deleted.status).toBe(200);
    expect(deleted.body.map((r: any) => r.statusCode)).toEqual([200, 200, 404]);
    expect((await acme.api("DELETE", "/v2/api/prices/batch", { listExternalID: "RETAIL-EU", keys: [] })).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/prices")).body.map((p: any) => p.listExternalID)).toEqual(["OUTLET"]);
    await eventually(async () => {
      const events = (await acme.api("GET", "/v2/api/events?event_type=update_sku&pageSize=100")).body;
      const last = events.filter((e: any) => e.payload.id === sku1.id).at(-1);
      return last?.payload.prices.length === 1 && last.payload.prices[0].listExternalID === "OUTLET";
    }, 15_000, "update_sku after the delete");
  });

  it("FX rates: a new rate closes the open range, an overlap is a 400 naming the rate, PUT gives a new id, DELETE", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const first = await acme.api("POST", "/v2/api/fxrates", [{ externalReference: "ERP", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.4321, fromDate: "2026-01-01", exchangeDate: "2025-12-31" }]);
    expect(first.status).toBe(201);
    expect(first.body).toEqual([
      { id: expect.any(Number), externalReference: "ERP", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.4321, fromDate: "2026-01-01", toDate: null, exchangeDate: "2025-12-31" },
    ]);
    const second = await acme.api("POST", "/v2/api/fxrates", [{ externalReference: "ERP", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.5, fromDate: "2026-04-01" }]);
    expect(second.status).toBe(201);
    const listed = (await acme.api("GET", "/v2/api/fxrates?fromCurrency=EUR&toCurrency=SEK,USD&externalReference=ERP")).body;
    expect(listed.map((r: any) => [r.fromDate, r.toDate])).toEqual([
      ["2026-01-01", "2026-04-01"],
      ["2026-04-01", null],
    ]);
    const clash = await acme.api("POST", "/v2/api/fxrates", [{ externalReference: "ERP", fromCurrency: "EUR", toCurrency: "SEK", rate: 1, fromDate: "2026-02-01", toDate: "2026-03-01" }]);
    expect(clash.status).toBe(400);
    expect(clash.body.message).toContain(`rate ${first.body[0].id}`);
    expect((await acme.api("POST", "/v2/api/fxrates", [{ fromCurrency: "EUR", toCurrency: "SEK", rate: 0, fromDate: "2026-01-01" }])).status).toBe(400);
    expect((await acme.api("POST", "/v2/api/fxrates", [{ fromCurrency: "eur", toCurrency: "SEK", rate: 1, fromDate: "2026-01-01" }])).status).toBe(400);

    const put = await acme.api("PUT", `/v2/api/fxrates/${second.body[0].id}`, { externalReference: "ERP", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.6, fromDate: "2026-05-01" });
    expect(put.status).toBe(200);
    expect(put.body.id).not.toBe(second.body[0].id);
    expect(put.body).toMatchObject({ rate: 11.6, fromDate: "2026-05-01", toDate: null });
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("DELETE", `/v2/api/fxrates/${put.body.id}`)).status).toBe(404);
    expect((await other.api("GET", "/v2/api/fxrates")).body).toEqual([]);
    // The id in digits only: coercion read 0x.. and 1e.. as this id and deleted the rate.
    for (const spelled of [`0x${put.body.id.toString(16)}`, `%20${put.body.id}`, `${put.body.id}.0`]) {
      const refused = await acme.api("DELETE", `/v2/api/fxrates/${spelled}`);
      expect([refused.status, refused.body.details?.[0]?.path]).toEqual([400, "id"]);
    }
    const deleted = await acme.api("DELETE", `/v2/api/fxrates/${put.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ statusCode: 200, error: "", message: "deleted" });
    expect((await acme.api("DELETE", `/v2/api/fxrates/${put.body.id}`)).status).toBe(404);
    expect((await acme.api("GET", "/v2/api/fxrates")).body.map((r: any) => r.id)).toEqual([first.body[0].id]);
  });

  it("answers its lists a weak ETag that a write of the account moves on (a delete too), another account's not", async () => {
    const a = await signUp(platform.baseUrl, ADMIN_TOKEN, "Tagged");
    const b = await signUp(platform.baseUrl, ADMIN_TOKEN, "Untouched");
    const rate = { externalReference: "ERP", fromCurrency: "EUR", toCurrency: "SEK", rate: 11.4, fromDate: "2026-01-01" };
    const [created] = (await a.api("POST", "/v2/api/fxrates", [rate])).body;
    await checkListTag(a.api, "/v2/api/fxrates?fromCurrency=EUR", "/v2/api/fxrates?fromCurrency=USD", () => b.api("POST", "/v2/api/fxrates", [rate]), () =>
      a.api("DELETE", `/v2/api/fxrates/${created.id}`),
    );
    await checkListTag(a.api, "/v2/api/price-lists", "/v2/api/prices", () => b.api("POST", "/v2/api/price-lists", { externalPriceListId: "L", name: "L", currency: "EUR" }), () =>
      a.api("POST", "/v2/api/price-lists", { externalPriceListId: "L", name: "L", currency: "EUR" }),
    );
  });

  it("pricats: batch upsert by (sku, season), filters comma-separated or repeated, paging", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const pricat = { externalId: "PC-1", name: "SS27", supplierGln: "7300000000001", supplierName: "Knits AB" };
    const batch = await acme.api("POST", "/v2/api/pricats/products/batch", {
      pricat,
      items: [
        { sku: "A", season: "SS27", prices: { wholesale: 10.1, retail: 29.95 }, currency: "EUR", vat: 25, customFields: { fabric: "wool" }, productGroupID: "G1" },
        { sku: "B", prices: { wholesale: 1e-11 } },
        { sku: "C", bogus: 1 },
        { season: "SS27" },
      ],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.map((r: any) => [r.statusCode, r.reference, r.referenceField])).toEqual([
      [201, "A", "sku"],
      [400, "B", "sku"],
      [400, "C", "sku"],
      [400, "", "sku"],
    ]);
    const again = await acme.api("POST", "/v2/api/pricats/products/batch", { pricat, items: [{ sku: "A", season: "SS27", prices: { wholesale: 9.99 } }, { sku: "D" }] });
    expect(again.body.map((r: any) => r.statusCode)).toEqual([200, 201]);
    expect((await acme.api("POST", "/v2/api/pricats/products/batch", { pricat: { name: "no id" }, items: [{ sku: "A" }] })).status).toBe(400);
    await acme.api("POST", "/v2/api/pricats/products/batch", { pricat: { externalId: "PC-2", supplierName: "Shoes AB", supplierGln: "2" }, items: [{ sku: "Z" }] });

    const pricats = await acme.api("GET", "/v2/api/pricats?supplier=Knits%20AB,Shoes%20AB&pageSize=1");
    expect(pricats.headers.get("x-total-count")).toBe("2");
    expect(pricats.body).toEqual([{ externalId: "PC-1", name: "SS27", supplierGln: "7300000000001", supplierName: "Knits AB", createdAt: expect.any(String), updatedAt: expect.any(String) }]);
    expect((await acme.api("GET", "/v2/api/pricats?externalids=PC-2&externalids=PC-9")).body.map((p: any) => p.externalId)).toEqual(["PC-2"]);
    expect((await acme.api("GET", "/v2/api/pricats?pageSize=1001")).status).toBe(400);
    const rows = (await acme.api("GET", "/v2/api/pricats/products?pricatExternalId=PC-1&season=SS27")).body;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ pricatExternalId: "PC-1", sku: "A", season: "SS27", prices: { wholesale: 9.99 }, vat: null, productGroupId: null });
    expect((await acme.api("GET", "/v2/api/pricats/products?supplierGln=2")).body.map((r: any) => r.sku)).toEqual(["Z"]);
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("GET", "/v2/api/pricats")).body).toEqual([]);
    expect((await other.api("GET", "/v2/api/pricats/products")).body).toEqual([]);
  });
});
