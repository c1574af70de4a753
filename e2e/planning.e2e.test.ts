import { randomUUID } from "node:crypto";
import type { BusMessage } from "@analytics/bus";
import { purchaseOrderChanged, stockUpdated, warehouseChanged } from "@analytics/testing";
import { client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";
import { plannedVolumes, row, sorted, warehouseRow } from "./planned-volumes";

/**
 * Planning over HTTP on the whole platform (real Postgres, real JetStream). Products and account
 * settings come from their real producers (catalogue, gateway); warehouses, stock and purchase
 * orders are published on the platform's stream as the inventory and orders services publish them
 * (proto/inventory/v1, proto/orders/v1), because the filters and the timezone reading of
 * `updatedSince` dates need orders changed at chosen past instants, which no route can write.
 * e2e/planning-routes.e2e.test.ts drives the same volumes through the real routes.
 */
describe("planning over HTTP: products -> stock -> POs -> planned volumes", () => {
  const platform = platformForFile();
  let acme: Awaited<ReturnType<typeof signUp>>;
  const W1 = randomUUID();
  const W2 = randomUUID();
  const ids: Record<string, string> = {};
  const integerIds: Record<string, number> = {};
  const window = "fromDate=2026-03-01&toDate=2026-03-31";

  async function publish(message: BusMessage) {
    const [error] = await platform.bus.publish([message]);
    if (error) throw error;
  }
  const po = (status: number, at: string, lines: { key: string; wh?: string; date: string; quantity: number; open?: number }[]) =>
    publish(
      purchaseOrderChanged(acme.accountID, randomUUID(), 1, status, lines.map((l) => ({ skuId: ids[l.key], warehouse: l.wh, date: l.date, quantity: l.quantity, open: l.open })), new Date(at)),
    );
  const { get, until } = plannedVolumes(() => acme, 15_000);

  beforeAll(async () => {
    acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Planning Co");
    const settings = await client(platform.baseUrl, ADMIN_TOKEN)("PUT", `/admin/v1/accounts/${acme.accountID}/settings`, {
      customPriceFields: [],
      timezone: "America/New_York",
    });
    expect(settings.status).toBe(200);
    const created = await acme.api("POST", "/v2/api/products/batch", [
      { key: "KA", sku: "SA", season: "SS26", productGroupId: "P1", variantGroupId: "V1", brandName: "Nike", color: "Red" },
      { key: "KB", sku: "SB", season: "SS26", productGroupId: "P1", variantGroupId: "V2", brandName: "Adidas", color: "Blue" },
      { key: "KC", sku: "SC", season: "AW26", productGroupId: "P2", variantGroupId: "V3", brandName: "Nike", color: "Blue" },
    ]);
    expect(created.status).toBe(201);
    // Bus messages carry the product's internal id.
    for (const p of (await acme.api("GET", "/v2/api/products?pageSize=100")).body) {
      ids[p.key] = p.uuid;
      integerIds[p.key] = p.id;
    }
    const acc = acme.accountID;
    for (const [id, ext, name] of [
      [W1, "WH1", "Main"],
      [W2, "WH2", "Second"],
    ]) {
      await publish(warehouseChanged(acc, id, 1, ext, name));
    }
    for (const [w, key, q] of [
      [W1, "KA", 10],
      [W2, "KA", 5],
      [W1, "KB", 3],
      [W2, "KC", 20],
    ] as const) {
      await publish(stockUpdated(acc, w, ids[key], 1, q, false, q));
    }
    const old = "2026-02-01T00:00:00Z";
    await po(5, old, [
      { key: "KA", wh: "WH1", date: "2026-03-10", quantity: 4 },
      { key: "KB", wh: "WH2", date: "2026-03-12", quantity: 6 },
    ]);
    await po(4, "2026-02-10T03:00:00Z", [{ key: "KA", date: "2026-03-15", quantity: 8 }]);
    await po(3, "2026-02-10T12:00:00Z", [{ key: "KC", wh: "WH2", date: "2026-03-15", quantity: 50 }]);
    await po(2, old, [{ key: "KB", wh: "WH1", date: "2026-03-05", quantity: 5, open: 0 }]);
    await po(5, old, [{ key: "KA", wh: "WH1", date: "2026-04-02", quantity: 7 }]);
    await po(1, old, [{ key: "KC", wh: "WH2", date: "2026-03-20", quantity: 10, open: 4 }]);
  }, 90_000);

  it("answers exact volumes for every groupBy (open, draft, cancelled, delivered, outside the window)", async () => {
    const res = await until(`?${window}`, [row("AW26", 20, 4, 0), row("SS26", 18, 10, 8)]);
    expect(res.status).toBe(200);
    expect((await get(`?${window}&groupBy=seasons`)).body).toEqual(res.body);
    expect((await get(`?${window}&groupBy=products`)).body).toEqual([row("P1", 18, 10, 8), row("P2", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=variants`)).body).toEqual([row("V1", 15, 4, 8), row("V2", 3, 6, 0), row("V3", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=skus`)).body).toEqual([row("KA", 15, 4, 8), row("KB", 3, 6, 0), row("KC", 20, 4, 0)]);
    expect((await get(`?fromDate=2026-04-01&toDate=2026-04-30&groupBy=skus&skus=SA`)).body).toEqual([row("KA", 15, 7, 0)]);
  });

  it("by warehouse: stock and POs per warehouse, draft volume without a warehouse under \"\"", async () => {
    await until(`?${window}`, [row("AW26", 20, 4, 0), row("SS26", 18, 10, 8)]);
    const res = await get(`/by-warehouse?${window}`);
    expect(res.status).toBe(200);
    expect(sorted(res.body)).toEqual(
      sorted([
        warehouseRow("AW26", W2, "Second", 20, 4, 0),
        warehouseRow("SS26", "", "", 0, 0, 8),
        warehouseRow("SS26", W1, "Main", 13, 4, 0),
        warehouseRow("SS26", W2, "Second", 5, 6, 0),
      ]),
    );
  });

  it("filters (repeatable or comma-separated) and updatedSince (a date is midnight in the account's timezone)", async () => {
    await until(`?${window}`, [row("AW26", 20, 4, 0), row("SS26", 18, 10, 8)]);
    expect((await get(`?${window}&groupBy=skus&brands=nike`)).body).toEqual([row("KA", 15, 4, 8), row("KC", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=skus&colors=Blue&seasons=SS26,AW26`)).body).toEqual([row("KB", 3, 6, 0), row("KC", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=skus&skuIds=${ids.KB}&skuIds=${ids.KC}&variants=V2`)).body).toEqual([row("KB", 3, 6, 0)]);
    // A product's integer id names it as well as its UUID.
    expect((await get(`?${window}&groupBy=skus&skuIds=${integerIds.KB}&skuIds=${ids.KC}&variants=V2`)).body).toEqual([row("KB", 3, 6, 0)]);
    expect((await get(`?${window}&skuStatus=1`)).body).toEqual([]);
    expect((await get(`?${window}&activePlanning=false`)).body).toEqual([]);
    // The draft changed 2026-02-10T03:00Z (02-09 in New York), the cancellation at 12:00Z.
    await until(`?${window}&groupBy=skus&updatedSince=2026-02-10`, [row("KC", 20, 4, 0)]);
    expect((await get(`?${window}&groupBy=skus&updatedSince=2026-02-10T00:00:00Z`)).body).toEqual([row("KA", 15, 4, 8), row("KC", 20, 4, 0)]);
    expect(sorted((await get(`/by-warehouse?${window}&groupBy=skus&updatedSince=2026-02-10T00:00:00Z`)).body)).toEqual(
      sorted([warehouseRow("KA", "", "", 0, 0, 8), warehouseRow("KC", W2, "Second", 20, 4, 0)]),
    );
  });

  it("answers 400 GeneralResponse naming the parameter for a missing, reversed or bad one", async () => {
    const bad = async (query: string, field: string) => {
      for (const path of ["", "/by-warehouse"]) {
        const res = await get(`${path}?${query}`);
        expect({ query, status: res.status, error: res.body.error }).toEqual({ query, status: 400, error: "Bad Request" });
        expect(res.body.message).toContain(field);
      }
    };
    await bad("toDate=2026-03-31", "fromDate");
    await bad("fromDate=2026-03-01", "toDate");
    await bad("fromDate=2026-04-01&toDate=2026-03-01", "toDate");
    await bad("fromDate=2026-3-1&toDate=2026-03-31", "fromDate");
    await bad(`${window}&groupBy=weeks`, "groupBy");
    await bad(`${window}&skuStatus=8`, "skuStatus");
    await bad(`${window}&activePlanning=yes`, "activePlanning");
    await bad(`${window}&updatedSince=last-week`, "updatedSince");
    await bad(`${window}&skuIds=not-a-uuid`, "skuIds");
    expect((await client(platform.baseUrl)("GET", `/v2/api/planning/planned-volumes?${window}`)).status).toBe(401);
  });

  it("isolates accounts, and follows a product change made through the catalogue", async () => {
    const other = await signUp(platform.baseUrl, ADMIN_TOKEN, "Other");
    expect((await other.api("GET", `/v2/api/planning/planned-volumes?${window}&skuStatus=1,2,3,4,5,6,7`)).body).toEqual([]);
    expect((await other.api("GET", `/v2/api/planning/planned-volumes/by-warehouse?${window}&skuIds=${ids.KA}`)).body).toEqual([]);
    const moved = await acme.api("PUT", "/v2/api/products", [{ key: "KB", season: "AW26" }]);
    expect(moved.status).toBe(200);
    await until(`?${window}`, [row("AW26", 23, 10, 0), row("SS26", 15, 4, 8)]);
  });

  it("is in the OpenAPI document", async () => {
    const doc = (await client(platform.baseUrl)("GET", "/v2/api/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v2/api/planning/planned-volumes", "/v2/api/planning/planned-volumes/by-warehouse"]));
  });
});
