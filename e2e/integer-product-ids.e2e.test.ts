import pg from "pg";
import { eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

/**
 * A product's integer id filters planning and stock triggers whatever the replicas know of it: a
 * replica row written before integer ids (sku_seq NULL) is found by its product's integer id too,
 * since the gateway sends the UUID the catalogue knows it by.
 */
describe("filters by a product's integer id", () => {
  const platform = platformForFile();

  it("find the planning and stock-trigger rows of a product whose replicas have no integer id for it", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN, "Integers");
    const [product] = (await acme.api("POST", "/v2/api/products", { key: "I1", season: "SS26" })).body;
    await acme.api("POST", "/v2/api/warehouses", [{ externalId: "W1", name: "Main" }]);
    await acme.api("POST", "/v2/api/warehouses/stock", [{ key: "I1", externalWarehouseID: "W1", availableQuantity: 7, physicalQuantity: 7, date: "2026-02-01T00:00:00Z" }]);
    await acme.api("POST", "/v2/api/stocktriggers/batch", [{ warehouseExternalId: "W1", key: "I1", min: 1, max: 5 }]);
    const volumes = (skuId: string | number) => acme.api("GET", `/v2/api/planning/planned-volumes?fromDate=2026-03-01&toDate=2026-03-31&groupBy=skus&skuIds=${skuId}`);
    const byUuid = await eventually(async () => ((await volumes(product.uuid)).body as unknown[]).length === 1 && (await volumes(product.uuid)).body, 15_000, "planning's replica of I1");

    // As written before migrations planning 004 and inventory 003: no integer id in the replicas.
    const db = new pg.Client({ connectionString: platform.databaseUrl });
    await db.connect();
    try {
      await db.query("UPDATE planning.skus SET sku_seq = NULL");
      await db.query("UPDATE inventory.stock_triggers SET sku_seq = NULL");
    } finally {
      await db.end();
    }
    expect((await volumes(product.id)).body).toEqual(byUuid);
    const triggers = (await acme.api("GET", `/v2/api/stocktriggers?sku_id=${product.id}`)).body;
    expect(triggers.map((t: { key: string }) => t.key)).toEqual(["I1"]);
    // An integer id of no product still finds nothing.
    expect((await acme.api("GET", `/v2/api/stocktriggers?sku_id=999999`)).body).toEqual([]);
  });
});
