import { eventually } from "@analytics/testing";
import { E2E_ADMIN_TOKEN, platformForFile, signUp } from "./harness";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** A queue entry's payload is the product as GET /products answers it: its image URL needs no token. */
describe("queue payloads carry the image URL GET /products gives", () => {
  const platform = platformForFile();

  it("update_sku after an image upload: the same capability URL, served without a token", async () => {
    const { api } = await signUp(platform.baseUrl, E2E_ADMIN_TOKEN);
    expect((await api("POST", "/v2/api/products", { key: "K1" })).status).toBe(201);
    expect((await api("POST", "/v2/api/products/imageupload", { key: "K1", filename: "a.png", imageData: PNG })).status).toBe(200);
    const product = (await api("GET", "/v2/api/products?key=K1")).body[0];
    expect(product.imageUrl).toMatch(/^\/v2\/api\/images\/[0-9a-f-]{36}\/[0-9a-f]{64}\/[\w-]+$/);
    const entry = await eventually(async () => {
      const events = (await api("GET", "/v2/api/events?event_type=update_sku&pageSize=100")).body as { payload: { imageUrl?: string } }[];
      return events.find((e) => e.payload.imageUrl);
    }, 15_000, "the update_sku entry of the image");
    expect(entry.payload.imageUrl).toBe(product.imageUrl);
    const served = await fetch(`${platform.baseUrl}${entry.payload.imageUrl}`);
    expect([served.status, served.headers.get("content-type")]).toEqual([200, "image/png"]);
  });
});
