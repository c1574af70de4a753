import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/** Clients in typed languages send every date as an RFC 3339 timestamp (Go's time.Time). */
describe("date-only fields take YYYY-MM-DD or an RFC 3339 timestamp (its date in UTC), and answer YYYY-MM-DD", () => {
  const platform = platformForFile();

  it("on FX rates, products, stock triggers and planning's window", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const fx = await api("POST", "/v2/api/fxrates", [{ fromCurrency: "EUR", toCurrency: "SEK", rate: 11.2, fromDate: "2026-01-01T00:00:00Z", exchangeDate: "2025-12-31T23:30:00-02:00" }]);
    expect(fx.status).toBe(201);
    expect(fx.body[0]).toMatchObject({ fromDate: "2026-01-01", exchangeDate: "2026-01-01" });

    const product = await api("POST", "/v2/api/products", { key: "K1", startDate: "2026-03-01T10:00:00.123456789Z", endDate: "2026-06-30" });
    expect(product.status).toBe(201);
    expect((await api("GET", "/v2/api/products?key=K1")).body[0]).toMatchObject({ startDate: "2026-03-01", endDate: "2026-06-30" });

    expect((await api("POST", "/v2/api/warehouses", [{ externalId: "W1" }])).status).toBe(201);
    const trigger = await api("POST", "/v2/api/stocktriggers/batch", [{ warehouseExternalId: "W1", key: "K1", startDate: "2026-04-01T00:00:00+02:00", min: 1 }]);
    expect(trigger.body[0].statusCode).toBe(201);
    expect((await api("GET", "/v2/api/stocktriggers")).body[0]).toMatchObject({ startDate: "2026-03-31" });

    const volumes = await api("GET", "/v2/api/planning/planned-volumes?fromDate=2026-01-01T00:00:00Z&toDate=2026-12-31T00:00:00Z");
    expect(volumes.status).toBe(200);

    for (const [field, value] of [["fromDate", "2026-02-30T00:00:00Z"], ["fromDate", "2026-01-01T25:00:00Z"], ["fromDate", "2026-01-01 00:00:00"], ["toDate", "tomorrow"]]) {
      const bad = await api("POST", "/v2/api/fxrates", [{ fromCurrency: "EUR", toCurrency: "USD", rate: 1, fromDate: "2026-01-01", [field]: value }]);
      expect([value, bad.status, bad.body.details?.[0]?.path]).toEqual([value, 400, `[0].${field}`]);
    }
  });
});
