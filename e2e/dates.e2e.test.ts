import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * Clients in typed languages send every date as an RFC 3339 timestamp (Go's time.Time): a
 * date-only field is the calendar date written in it, in its own offset (CONTRACT.md,
 * "Conventions"). `2026-03-01T00:00:00+01:00` is local midnight in Stockholm, so 2026-03-01,
 * though that instant is 2026-02-28 in UTC.
 */
describe("date-only fields take YYYY-MM-DD or an RFC 3339 timestamp (the date written in it), and answer YYYY-MM-DD", () => {
  const platform = platformForFile();
  let api: Awaited<ReturnType<typeof signUp>>["api"];
  beforeAll(async () => {
    ({ api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN));
    expect((await api("POST", "/v2/api/warehouses", [{ externalId: "W1" }])).status).toBe(201);
  });

  it("on FX rates", async () => {
    const fx = await api("POST", "/v2/api/fxrates", [
      { fromCurrency: "EUR", toCurrency: "SEK", rate: 11.2, fromDate: "2026-03-01T00:00:00+01:00", toDate: "2026-03-31T23:59:59-10:00", exchangeDate: "2025-12-31T23:30:00-02:00" },
    ]);
    expect(fx.status).toBe(201);
    expect(fx.body[0]).toMatchObject({ fromDate: "2026-03-01", toDate: "2026-03-31", exchangeDate: "2025-12-31" });
    expect((await api("GET", "/v2/api/fxrates?fromCurrency=EUR")).body[0]).toMatchObject({ fromDate: "2026-03-01", toDate: "2026-03-31", exchangeDate: "2025-12-31" });
  });

  it("on products, by POST and by PUT", async () => {
    const product = await api("POST", "/v2/api/products", { key: "K1", startDate: "2026-03-01T00:00:00+01:00", endDate: "2026-06-30" });
    expect(product.status).toBe(201);
    expect((await api("GET", "/v2/api/products?key=K1")).body[0]).toMatchObject({ startDate: "2026-03-01", endDate: "2026-06-30" });
    const put = await api("PUT", "/v2/api/products", [{ key: "K1", endDate: "2026-07-01T00:00:00.123456789+14:00", startDate: "2026-03-01T10:00:00Z" }]);
    expect(put.body[0].statusCode).toBe(200);
    expect((await api("GET", "/v2/api/products?key=K1")).body[0]).toMatchObject({ startDate: "2026-03-01", endDate: "2026-07-01" });
  });

  it("on stock triggers", async () => {
    expect((await api("POST", "/v2/api/products", { key: "K2" })).status).toBe(201);
    const trigger = await api("POST", "/v2/api/stocktriggers/batch", [
      { warehouseExternalId: "W1", key: "K2", startDate: "2026-04-01T00:00:00+02:00", lastRestockDate: "2026-03-01T00:00:00+01:00", min: 1 },
    ]);
    expect(trigger.body[0].statusCode).toBe(201);
    expect((await api("GET", "/v2/api/stocktriggers?key=K2")).body[0]).toMatchObject({ startDate: "2026-04-01", lastRestockDate: "2026-03-01" });
  });

  it("on planning's window: fromDate..toDate are the dates written", async () => {
    const volumes = (from: string, to: string) => api("GET", `/v2/api/planning/planned-volumes?fromDate=${encodeURIComponent(from)}&toDate=${encodeURIComponent(to)}`);
    expect((await volumes("2026-01-01T00:00:00Z", "2026-12-31T00:00:00Z")).status).toBe(200);
    // One day, written once as a date and once as local midnight: not a window ending before it starts.
    expect((await volumes("2026-03-01", "2026-03-01T00:00:00+01:00")).status).toBe(200);
    // 2026-03-02 in Stockholm, 2026-03-01 in UTC: after a toDate of 2026-03-01.
    const reversed = await volumes("2026-03-02T00:00:00+01:00", "2026-03-01T23:00:00Z");
    expect([reversed.status, reversed.body.details?.[0]?.path]).toEqual([400, "toDate"]);
  });

  const notDates = ["2026-13-01T00:00:00+01:00", "2026-02-30T00:00:00Z", "0000-01-01T00:00:00+01:00", "2026-03-01T00:00:00+25:00", "2026-01-01T25:00:00Z", "2026-01-01 00:00:00", "tomorrow"];

  it("a timestamp that is not a valid date is a 400 naming the field, on every route", async () => {
    for (const value of notDates) {
      for (const field of ["fromDate", "toDate", "exchangeDate"]) {
        const fx = await api("POST", "/v2/api/fxrates", [{ fromCurrency: "EUR", toCurrency: "USD", rate: 1, fromDate: "2026-01-01", [field]: value }]);
        expect([value, fx.status, fx.body.details?.[0]?.path]).toEqual([value, 400, `[0].${field}`]);
      }
      const product = await api("POST", "/v2/api/products", { key: "K3", startDate: value });
      expect([value, product.status, product.body.details?.[0]?.path]).toEqual([value, 400, "startDate"]);
      const trigger = await api("POST", "/v2/api/stocktriggers/batch", [{ warehouseExternalId: "W1", key: "K2", lastRestockDate: value }]);
      expect([value, trigger.body[0].statusCode, trigger.body[0].message]).toEqual([value, 400, expect.stringContaining("lastRestockDate")]);
      const volumes = await api("GET", `/v2/api/planning/planned-volumes?fromDate=${encodeURIComponent(value)}&toDate=2026-12-31`);
      expect([value, volumes.status, volumes.body.details?.[0]?.path]).toEqual([value, 400, "fromDate"]);
    }
  });
});
