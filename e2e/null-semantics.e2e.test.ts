import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]).toString("base64");

/** Full writes store exactly what is sent; partial updates keep what is absent and clear what is null. */
describe("null and absent fields over HTTP", () => {
  const platform = platformForFile();

  it("a full write (POST) resets absent and null fields to their defaults; imageUrl absent keeps the image, null removes it", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const product = async (key: string) => (await acme.api("GET", `/v2/api/products?key=${key}`)).body[0];
    expect((await acme.api("POST", "/v2/api/products", { key: "F1", color: "red", size: "M", status: 3, activePlanning: false })).status).toBe(201);
    expect((await acme.api("POST", "/v2/api/products/imageupload", { key: "F1", filename: "f.png", imageData: PNG })).status).toBe(200);
    const imageUrl = (await product("F1")).imageUrl;
    expect(imageUrl).toEqual(expect.any(String));

    const batch = await acme.api("POST", "/v2/api/products/batch", [{ key: "F1", size: null, status: null }]);
    expect(batch.body[0][0].statusCode).toBe(200);
    expect(await product("F1")).toMatchObject({ color: null, size: null, status: 2, activePlanning: true, imageUrl });

    await acme.api("POST", "/v2/api/products", { key: "F1", imageUrl: null });
    expect((await product("F1")).imageUrl).toBeNull();
  });

  it("a partial update (PUT) keeps absent fields and clears those sent as null", async () => {
    const acme = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    const product = async (key: string) => (await acme.api("GET", `/v2/api/products?key=${key}`)).body[0];
    await acme.api("POST", "/v2/api/products", {
      key: "P1",
      color: "red",
      size: "M",
      status: 3,
      activePlanning: false,
      costCalculationPrice: 19.99,
      costCalculationValues: [{ key: "freight", type: 1, monetaryValue: 1.5 }],
    });
    const res = await acme.api("PUT", "/v2/api/products", [{ key: "P1", color: null, status: null, activePlanning: null, costCalculationValues: null, productName: "kept?" }]);
    expect(res.status).toBe(200);
    expect(await product("P1")).toMatchObject({
      color: null,
      size: "M",
      status: 2,
      activePlanning: true,
      costCalculationPrice: 19.99,
      costCalculationValues: [],
      productName: "kept?",
    });
    const bad = await acme.api("PUT", "/v2/api/products", [{ id: (await product("P1")).id, key: null }]);
    expect(bad.status).toBe(400);
    expect((await product("P1")).key).toBe("P1");
  });
});
