import { eventually } from "@analytics/testing";
import { checkListTag, client, E2E_ADMIN_TOKEN as ADMIN_TOKEN, platformForFile, signUp } from "./harness";

// 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** The catalogue over HTTP on real Postgres and JetStream, through to the update_sku queue entries. */
describe("catalogue over HTTP", () => {
  const platform = platformForFile();

  it("create -> read -> partial update -> key switch -> image -> update_sku events", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN);
    const created = await acme.api("POST", "/v2/api/products", {
      key: "SKU-1",
      sku: "1001-BLK-M",
      ean: "7312345678901",
      productName: "Merino crew",
      season: "AW26",
      brandName: "Acme",
      categoryName: "Knitwear",
      productGroupId: "1001",
      variantGroupId: "1001-BLK",
      externalAttributes: { fabric: "merino" },
      createdAt: "ignored",
    });
    expect(created.status).toBe(201);
    const [product] = created.body;
    expect(product).toMatchObject({ key: "SKU-1", sku: "1001-BLK-M", brandName: "Acme", status: 2, activePlanning: true, prices: [], skuSynonyms: [] });
    expect(Number.isInteger(product.id)).toBe(true);
    expect(product.uuid).toMatch(/^[0-9a-f-]{36}$/);

    const listed = await acme.api("GET", "/v2/api/products?key=SKU-1");
    expect(listed.body).toEqual([product]);
    expect(listed.headers.get("x-total-count")).toBe("1");

    const updated = await acme.api("PUT", "/v2/api/products", [{ key: "SKU-1", color: "Black" }, { key: "nope", color: "x" }, { color: "no key" }]);
    expect(updated.status).toBe(400);
    expect(updated.body.map((r: any) => r.statusCode)).toEqual([200, 404, 400]);
    const afterUpdate = (await acme.api("GET", "/v2/api/products?key=SKU-1")).body[0];
    expect(afterUpdate).toMatchObject({ color: "Black", productName: "Merino crew", ean: "7312345678901" });

    const switched = await acme.api("POST", "/v2/api/products/keyswitch", [{ oldKey: "SKU-1", key: "SKU-1B", sku: "1001-BLK-M" }]);
    expect(switched.status).toBe(200);
    expect(switched.body[0]).toMatchObject({ statusCode: 200, reference: "SKU-1", referenceField: "oldKey" });
    const byOldKey = (await acme.api("GET", "/v2/api/products?key=SKU-1")).body;
    expect(byOldKey).toHaveLength(1);
    expect(byOldKey[0]).toMatchObject({ key: "SKU-1B", skuSynonyms: ["SKU-1"] });

    const image = await acme.api("POST", "/v2/api/products/imageupload", { key: "SKU-1", filename: "a.png", imageData: PNG });
    expect(image.status).toBe(200);
    // A capability URL: usable without a token (an <img> tag, a spreadsheet cell).
    expect(image.body.imageUrl).toMatch(new RegExp(`^/v2/api/images/${acme.accountID}/[0-9a-f]{64}/[A-Za-z0-9_-]{43}$`));
    const served = await fetch(platform.baseUrl + image.body.imageUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("cache-control")).toMatch(/max-age=31536000/);
    expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.from(PNG, "base64"))).toBe(true);
    const etag = served.headers.get("etag")!;
    expect((await fetch(platform.baseUrl + image.body.imageUrl, { headers: { "if-none-match": etag } })).status).toBe(304);
    const sha256 = image.body.imageUrl.split("/")[5];
    // The token route still serves it; a forged signature is a 404, also with If-None-Match.
    expect((await fetch(`${platform.baseUrl}/v2/api/images/${sha256}`, { headers: { authorization: `Bearer ${acme.token}` } })).status).toBe(200);
    const forged = image.body.imageUrl.replace(/[A-Za-z0-9_-]{43}$/, "A".repeat(43));
    expect((await fetch(platform.baseUrl + forged)).status).toBe(404);
    expect((await fetch(platform.baseUrl + forged, { headers: { "if-none-match": etag } })).status).toBe(404);
    expect((await acme.api("GET", "/v2/api/products?key=SKU-1")).body[0].imageUrl).toBe(image.body.imageUrl);
    const notImage = await acme.api("POST", "/v2/api/products/imageupload", { key: "SKU-1", filename: "a.txt", imageData: Buffer.from("hello").toString("base64") });
    expect(notImage.status).toBe(400);

    // create, update, key switch, image: four update_sku entries, the last with the image.
    const events = await eventually(async () => {
      const res = await acme.api("GET", "/v2/api/events?event_type=update_sku&pageSize=100");
      return res.body.length >= 4 ? res.body : undefined;
    }, 15_000, "update_sku events");
    expect(events).toHaveLength(4);
    expect(events.map((e: any) => e.payload.key)).toEqual(["SKU-1", "SKU-1", "SKU-1B", "SKU-1B"]);
    expect(events[3].payload).toMatchObject({ imageUrl: expect.stringContaining(sha256), color: "Black", skuSynonyms: ["SKU-1"] });
    const current = (await acme.api("GET", "/v2/api/products?key=SKU-1B")).body[0];
    // The queue entry is the product as GET answers it, image capability URL included.
    expect(current.imageUrl).toBe(image.body.imageUrl);
    expect(events[3].payload).toEqual(current);
  });

  it("answers batches per item and pages with filters", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Batch");
    const items = Array.from({ length: 25 }, (_, i) => ({ key: `K${i}`, season: i % 2 ? "SS27" : "AW26", brandName: i % 2 ? "ACME" : "acme", productGroupId: `G${i % 5}` }));
    const batch = await acme.api("POST", "/v2/api/products/batch", [...items, { key: "" }, { key: "X", status: 9 }, { key: "Y", bogus: 1 }]);
    expect(batch.status).toBe(201);
    expect(batch.body).toHaveLength(28);
    expect(batch.body[0]).toEqual([{ statusCode: 201, error: "", message: expect.stringContaining("K0") }]);
    expect(batch.body.slice(25).map((r: any) => r[0].statusCode)).toEqual([400, 400, 400]);
    const again = await acme.api("POST", "/v2/api/products/batch", items.slice(0, 2));
    expect(again.body.map((r: any) => r[0].statusCode)).toEqual([200, 200]);

    const page = await acme.api("GET", "/v2/api/products?seasons=SS27&productgroupids=G1,G3&pageSize=2");
    expect(page.headers.get("x-total-count")).toBe("6");
    expect(page.headers.get("link")).toContain('rel="next"');
    expect(page.body.every((p: any) => p.season === "SS27" && ["G1", "G3"].includes(p.productGroupId))).toBe(true);

    const brands = await acme.api("GET", "/v2/api/brands?name=Acme");
    expect(brands.body).toHaveLength(1);
    const one = await acme.api("GET", `/v2/api/brands/${brands.body[0].id}`);
    expect(one.body).toEqual(brands.body);
    expect((await acme.api("GET", "/v2/api/categories")).body).toEqual([]);
    expect((await acme.api("GET", "/v2/api/products?pageSize=10001")).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/products/example")).body).toMatchObject({ key: expect.any(String) });
  });

  it("serves mapping tables with the specified 400/404/204", async () => {
    const acme = await signUp(platform.baseUrl, ADMIN_TOKEN, "Mapping");
    expect((await acme.api("GET", "/v2/api/mappingtables/colour")).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/mappingtables/colour?mappingType=nope")).status).toBe(400);
    expect((await acme.api("GET", "/v2/api/mappingtables/colour?mappingType=products")).status).toBe(404);
    expect((await acme.api("PUT", "/v2/api/mappingtables/colour?mappingType=products", { mappingValues: { a: "b" } })).status).toBe(404);
    const created = await acme.api("POST", "/v2/api/mappingtables/colour", { mappingType: "products", mappingValues: { blk: "Black", wht: "White" } });
    expect(created.status).toBe(200);
    const merged = await acme.api("PUT", "/v2/api/mappingtables/colour?mappingType=products", { mappingValues: { red: "Red", blk: "BLACK" } });
    expect(merged.body.mappingValues).toEqual({ blk: "BLACK", wht: "White", red: "Red" });
    expect((await acme.api("GET", "/v2/api/mappingtables?mappingType=products")).body).toHaveLength(1);
    expect((await acme.api("GET", "/v2/api/mappingtables?mappingType=bad")).status).toBe(400);
    expect((await acme.api("DELETE", "/v2/api/mappingtables/colour?mappingType=products")).status).toBe(204);
    expect((await acme.api("DELETE", "/v2/api/mappingtables/colour?mappingType=products")).status).toBe(404);
  });

  it("answers its lists a weak ETag that a write of the account moves on (a price or a delete too), another account's not", async () => {
    const a = await signUp(platform.baseUrl, ADMIN_TOKEN, "Tagged");
    const b = await signUp(platform.baseUrl, ADMIN_TOKEN, "Untouched");
    await a.api("POST", "/v2/api/products", { key: "T-1", brandName: "Tagged brand" });
    await a.api("POST", "/v2/api/price-lists", { externalPriceListId: "RETAIL", name: "Retail", currency: "EUR" });
    const products = "/v2/api/products?pageSize=10";
    const tag = await checkListTag(a.api, products, "/v2/api/products?pageSize=10&key=T-1", () => b.api("POST", "/v2/api/products", { key: "T-1" }), () =>
      a.api("PUT", "/v2/api/products", [{ key: "T-1", color: "red" }]),
    );
    // GET /products shows each product's prices: a price of the account is a new tag as well.
    expect((await a.api("POST", "/v2/api/prices/batch", [{ listExternalID: "RETAIL", key: "T-1", price: 10 }])).body[0].statusCode).toBe(201);
    expect((await a.api("GET", products, undefined, { "if-none-match": tag })).status).toBe(200);
    // An empty page asks pricing nothing: its version is read after (no price is in the answer), the tag still names both.
    const none = "/v2/api/products?pageSize=10&key=NONE";
    const empty = await a.api("GET", none);
    const emptyTag = empty.headers.get("etag")!;
    expect([empty.status, empty.body, emptyTag]).toEqual([200, [], expect.stringMatching(/^W\/"catalogue-\d+\.pricing-\d+-[A-Za-z0-9_-]{22}"$/)]);
    expect((await a.api("GET", none, undefined, { "if-none-match": emptyTag })).status).toBe(304);
    await a.api("POST", "/v2/api/mappingtables/colour", { mappingType: "products", mappingValues: { blk: "Black" } });
    await checkListTag(a.api, "/v2/api/mappingtables?mappingType=products", "/v2/api/mappingtables?mappingType=brands", () => b.api("POST", "/v2/api/mappingtables/colour", { mappingType: "products", mappingValues: { x: "y" } }), () =>
      a.api("DELETE", "/v2/api/mappingtables/colour?mappingType=products"),
    );
  });

  it("keeps accounts apart on every catalogue route", async () => {
    const a = await signUp(platform.baseUrl, ADMIN_TOKEN, "A");
    const b = await signUp(platform.baseUrl, ADMIN_TOKEN, "B");
    const [product] = (await a.api("POST", "/v2/api/products", { key: "MINE", brandName: "Secret", categoryName: "Hidden" })).body;
    await a.api("POST", "/v2/api/mappingtables/colour", { mappingType: "products", mappingValues: { x: "y" } });
    const image = (await a.api("POST", "/v2/api/products/imageupload", { key: "MINE", filename: "a.png", imageData: PNG })).body;
    const brand = (await a.api("GET", "/v2/api/brands")).body[0];
    const category = (await a.api("GET", "/v2/api/categories")).body[0];

    expect((await b.api("GET", "/v2/api/products")).body).toEqual([]);
    expect((await b.api("GET", `/v2/api/products?sku_id=${product.id}`)).body).toEqual([]);
    expect((await b.api("GET", "/v2/api/products?key=MINE")).body).toEqual([]);
    expect((await b.api("PUT", "/v2/api/products", [{ key: "MINE", color: "x" }])).body[0].statusCode).toBe(404);
    expect((await b.api("PUT", "/v2/api/products", [{ id: product.id, color: "x" }])).body[0].statusCode).toBe(404);
    expect((await b.api("POST", "/v2/api/products/keyswitch", [{ oldKey: "MINE", key: "THEIRS", sku: "s" }])).body[0].statusCode).toBe(404);
    expect((await b.api("POST", "/v2/api/products/imageupload", { key: "MINE", filename: "a.png", imageData: PNG })).status).toBe(404);
    const sha256 = image.imageUrl.split("/")[5];
    expect((await client(platform.baseUrl, b.token)("GET", `/v2/api/images/${sha256}`)).status).toBe(404);
    expect((await client(platform.baseUrl, b.token)("GET", `/v2/api/images/${sha256}`, undefined, { "if-none-match": `"${sha256}"` })).status).toBe(404);
    // Another account's id with this image's signature is no capability.
    expect((await client(platform.baseUrl)("GET", image.imageUrl.replace(a.accountID, b.accountID))).status).toBe(404);
    expect((await b.api("GET", "/v2/api/brands")).body).toEqual([]);
    expect((await b.api("GET", `/v2/api/brands/${brand.id}`)).status).toBe(404);
    expect((await b.api("GET", "/v2/api/categories")).body).toEqual([]);
    expect((await b.api("GET", `/v2/api/categories/${category.id}`)).status).toBe(404);
    expect((await b.api("GET", "/v2/api/mappingtables")).body).toEqual([]);
    expect((await b.api("GET", "/v2/api/mappingtables/colour?mappingType=products")).status).toBe(404);
    expect((await b.api("DELETE", "/v2/api/mappingtables/colour?mappingType=products")).status).toBe(404);
    // B writing the same key makes B's own product; A's is untouched.
    expect((await b.api("POST", "/v2/api/products", { key: "MINE", color: "theirs" })).status).toBe(201);
    expect((await a.api("GET", "/v2/api/products?key=MINE")).body[0].color).toBeNull();
  });
});
