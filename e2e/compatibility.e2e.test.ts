import { E2E_ADMIN_TOKEN, signUp, startOnTestServices, type PlatformOnTestServices } from "./harness";

describe("the published client's product fields (item 16)", () => {
  let platform: PlatformOnTestServices;
  beforeAll(async () => {
    platform = await startOnTestServices();
  });
  afterAll(async () => {
    await platform?.close();
  });

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
    const update = await api("PUT", "/v2/api/products", [{ key: "GO-1", PRODUCTNAME: "Renamed", variantGroupID: "V9" }]);
    expect(update.status).toBe(200);
    expect((await api("GET", "/v2/api/products?key=GO-1")).body[0]).toMatchObject({ productName: "Renamed", variantGroupId: "V9" });
    const doc = (await (await fetch(`${platform.baseUrl}/v2/api/openapi.json`)).json()) as Record<string, any>;
    const item = doc.paths["/v2/api/products/batch"].post.requestBody.content["application/json"].schema.items;
    const props = (item.$ref ? doc.components.schemas[item.$ref.split("/").pop()] : item).properties;
    expect(props.productGroupID).toMatchObject({ deprecated: true });
    expect(props.costPrice).toMatchObject({ deprecated: true });
  });
});
