import { createHash, randomUUID } from "node:crypto";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import pino from "pino";
import { Code } from "@connectrpc/connect";
import { catalogueMessagesV1, catalogueV1, productToRest, stringifyRest, toRestJson, ValidationErrorsSchema } from "@analytics/contracts";
import { createDb, type Db } from "@analytics/db";
import { OutboxRelay } from "@analytics/outbox";
import { askingDataVersions, DataVersions, type ServiceContext } from "@analytics/rpc";
import { codeOf, eventually, readWhileAWriteCommits, serviceUnderTest, subjectsUnder } from "@analytics/testing";
import { ConnectError } from "@connectrpc/connect";
import { upsertProducts, updateProducts } from "../src/products";
import * as repo from "../src/repository";
import { startCatalogueService } from "../src/service";
import { PRODUCT_FIELDS } from "./product-fields";

const { CatalogueService, ProductSchema } = catalogueV1;
type ProductInit = MessageInitShape<typeof catalogueV1.ProductSchema>;
type ListFilter = Partial<Omit<catalogueV1.ListProductsRequest, "$typeName" | "$unknown" | "page">>;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);
const GIF = Buffer.from("GIF89a\x01\x00\x01\x00", "latin1");
const WEBP = Buffer.concat([Buffer.from("RIFF"), Buffer.from([0, 0, 0, 0]), Buffer.from("WEBPVP8 ")]);
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("catalogue service (real Postgres and JetStream)", () => {
  // What the events service would consume: every catalogue message on the bus.
  const catalogue = serviceUnderTest(CatalogueService, startCatalogueService, { schema: "catalogue", probe: subjectsUnder("analytics.catalogue.") });
  const { client, db, as, published } = catalogue;

  const upsert = async (accountId: string, items: ProductInit[]) => (await client.upsertProducts({ products: items }, as(accountId))).results;
  const update = async (accountId: string, items: ProductInit[]) => (await client.updateProducts({ products: items }, as(accountId))).results;
  const list = (accountId: string, filter: ListFilter = {}) =>
    client.listProducts({ page: { page: 1, pageSize: 100 }, ...filter }, as(accountId));
  const statuses = (results: { result?: { statusCode: number } }[]) => results.map((r) => r.result?.statusCode);

  it("answers a streamed page's version with its ids, never newer than the page: a write committing meanwhile is in both or in neither", async () => {
    const account = randomUUID();
    await upsert(account, [{ key: "V1", sku: "V1" }]);
    const id = randomUUID();
    const versions = new DataVersions(new Set([CatalogueService.typeName]));
    const ids = await readWhileAWriteCommits(
      db,
      (tx) => tx("products").insert({ id, account_id: account, key: "V2", sku: "V2" }),
      async () => {
        const read: string[] = [];
        for await (const chunk of client.streamProductsJson({ list: { page: { page: 1, pageSize: 10 } } }, { ...as(account), contextValues: askingDataVersions(versions) })) read.push(...chunk.ids);
        return read;
      },
    );
    expect(BigInt((await versions.versionOf(CatalogueService.typeName)) as string)).toBe((await client.getAccountVersion({}, as(account))).version);
    expect(ids).toContain(id);
  });

  it("answers only statuses and violations when asked for results only (the batch routes), writing and announcing the same", async () => {
    const account = randomUUID();
    const created = (await client.upsertProducts({ products: [{ key: "R1", sku: "R1" }, { key: "" }], resultsOnly: true }, as(account))).results;
    expect(statuses(created)).toEqual([201, 400]);
    expect(created.map((r) => r.product)).toEqual([undefined, undefined]);
    expect(created[1].violations.map((v) => v.path)).toContain("key");
    const updated = (await client.updateProducts({ products: [{ key: "R1", productName: "Renamed" }], resultsOnly: true }, as(account))).results;
    expect(statuses(updated)).toEqual([200]);
    expect(updated[0].product).toBeUndefined();
    expect((await list(account)).products.map((p) => [p.key, p.productName])).toEqual([["R1", "Renamed"]]);
    // Without it, the stored product comes back.
    expect((await upsert(account, [{ key: "R1", sku: "R1" }]))[0].product?.key).toBe("R1");
  });

  it("creates a product (201), then fully updates it by key (200), answering the REST Product", async () => {
    const account = randomUUID();
    const [created] = await upsert(account, [
      {
        key: "K1",
        sku: "S1",
        vendorSku: "V1",
        productName: "Shirt",
        color: "red",
        brandName: "Acme",
        categoryName: "Tops",
        startDate: "2026-03-01",
        costCalculationPrice: { value: "9.99" },
        costCalculationValues: [{ key: "freight", sort: 1, type: 1, monetaryValue: { value: "1.5" }, fxRate: { value: "11.2345" } }],
        externalAttributes: { fit: "slim", sizes: [1, 2] },
      },
    ]);
    expect(created.result).toMatchObject({ statusCode: 201, reference: "K1", referenceField: "key", message: "created" });
    const json = JSON.parse(stringifyRest(productToRest(created.product!)));
    expect(Object.keys(json).sort()).toEqual(PRODUCT_FIELDS);
    expect(json).toMatchObject({
      key: "K1",
      vendorSKU: "V1",
      status: 2,
      activePlanning: true,
      brandName: "Acme",
      categoryName: "Tops",
      startDate: "2026-03-01",
      endDate: null,
      costCalculationPrice: 9.99,
      costCalculationValues: [{ key: "freight", sort: 1, type: 1, monetaryValue: 1.5, currency: null, fxRate: 11.2345 }],
      externalAttributes: { fit: "slim", sizes: [1, 2] },
      skuSynonyms: [],
      prices: [],
    });
    // As stored: the published client's fxRate is kept, with its digits.
    expect(JSON.parse(stringifyRest(productToRest((await list(account)).products[0]))).costCalculationValues).toEqual(json.costCalculationValues);
    expect(Number.isInteger(json.id)).toBe(true);
    expect(json.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(json.brandId)).toBe(true);
    expect(json.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const [updated] = await upsert(account, [{ key: "K1", productName: "Shirt 2", status: 3 }]);
    expect(updated.result).toMatchObject({ statusCode: 200, message: "updated" });
    const after = productToRest(updated.product!);
    // A full write: what is not sent takes its default.
    expect(after).toMatchObject({ id: json.id, productName: "Shirt 2", status: 3, color: null, brandName: null, costCalculationValues: [] });
    expect(after.createdAt).toBe(json.createdAt);
  });

  it("validates each item alone: a bad item is its own 400 with field paths, the others are written", async () => {
    const account = randomUUID();
    const results = await upsert(account, [
      { key: "ok1" },
      { key: "bad-status", status: 9 },
      { key: "bad-date", startDate: "2026-02-30" },
      { key: "bad-order", startDate: "2026-03-02", endDate: "2026-03-01" },
      { key: "" },
      { key: "bad-text", productName: "a\u0000b" },
      { key: "bad-json", externalAttributes: { "x\u0000": 1 } },
      { key: "bad-cost", costCalculationValues: [{ key: "c", type: 3 }] },
      { key: "bad-count", moq: -1 },
      { key: "x".repeat(501) },
      { key: "bad-fx", costCalculationValues: [{ key: "c", type: 1, fxRate: { value: "1e3" } }] },
      { key: "ok2" },
    ]);
    expect(statuses(results)).toEqual([201, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 201]);
    expect(results.slice(1, 11).map((r) => r.violations.map((v) => v.path))).toEqual([
      ["status"],
      ["startDate"],
      ["endDate"],
      ["key"],
      ["productName"],
      ["externalAttributes.x\u0000"],
      ["costCalculationValues[0].type"],
      ["moq"],
      ["key"],
      ["costCalculationValues[0].fxRate"],
    ]);
    expect(results[1].result!.message).toContain("status");
    expect(results[1].product).toBeUndefined();
    expect((await list(account)).products.map((p) => p.key)).toEqual(["ok1", "ok2"]);
  });

  it("answers a key named twice in one batch as if in order: 201 then 200, the later wins", async () => {
    const account = randomUUID();
    const results = await upsert(account, [
      { key: "dup", color: "red" },
      { key: "dup", color: "blue" },
    ]);
    expect(statuses(results)).toEqual([201, 200]);
    expect((await list(account)).products.map((p) => [p.key, p.color])).toEqual([["dup", "blue"]]);
  });

  it("updates partially: fields not sent are kept; by id or key; 404 for unknown products", async () => {
    const account = randomUUID();
    const [{ product }] = await upsert(account, [{ key: "P1", sku: "S", color: "red", size: "M", brandName: "Acme", externalAttributes: { a: 1 } }]);
    const results = await update(account, [
      { key: "P1", color: "green" },
      { id: product!.id, size: "L", costCalculationValues: [{ key: "duty", type: 2 }] },
      { key: "nope", color: "x" },
      { id: randomUUID(), color: "x" },
      { id: "not-a-uuid", color: "x" },
      { key: "P1", status: 0 },
      { id: product!.id, key: "other" },
    ]);
    expect(statuses(results)).toEqual([200, 200, 404, 404, 404, 400, 400]);
    expect(results[2].result).toMatchObject({ reference: "nope", referenceField: "key" });
    const [stored] = (await list(account)).products;
    expect(stored).toMatchObject({ key: "P1", sku: "S", color: "green", size: "L", brandName: "Acme", status: 2, externalAttributes: { a: 1 } });
    expect(stored.costCalculationValues.map((v) => v.key)).toEqual(["duty"]);
    expect(results[1].product).toMatchObject({ color: "green", size: "L" });
  });

  it("lists with filters, paging in creation order and the total", async () => {
    const account = randomUUID();
    await upsert(
      account,
      Array.from({ length: 7 }, (_, n) => ({
        key: `L${n}`,
        sku: `SKU${n % 3}`,
        season: n < 4 ? "SS26" : "AW26",
        productGroupId: `PG${n % 2}`,
        variantGroupId: `VG${n}`,
      })),
    );
    const page2 = await client.listProducts({ page: { page: 2, pageSize: 3 } }, as(account));
    expect(page2.totalCount).toBe(7);
    expect(page2.products.map((p) => p.key)).toEqual(["L3", "L4", "L5"]);
    const keys = async (f: ListFilter) => (await list(account, f)).products.map((p) => p.key);
    expect(await keys({ seasons: ["AW26"] })).toEqual(["L4", "L5", "L6"]);
    expect(await keys({ skus: ["SKU0"], seasons: ["SS26"] })).toEqual(["L0", "L3"]);
    expect(await keys({ productGroupIds: ["PG1"] })).toEqual(["L1", "L3", "L5"]);
    expect(await keys({ variantGroupIds: ["VG2", "VG6"] })).toEqual(["L2", "L6"]);
    expect(await keys({ key: "L4" })).toEqual(["L4"]);
    const [l1] = (await list(account, { key: "L1" })).products;
    expect(await keys({ skuIds: [l1.id, "not-a-uuid"] })).toEqual(["L1"]);
    expect(await keys({ skuIds: ["not-a-uuid"] })).toEqual([]);
    const filtered = await client.listProducts({ page: { page: 1, pageSize: 1 }, seasons: ["SS26"] }, as(account));
    expect(filtered.totalCount).toBe(4);
    expect(await codeOf(client.listProducts({ page: { page: -1, pageSize: 10 } }, as(account)))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.listProducts({ page: { page: 1, pageSize: 1001 } }, as(account)))).toBe(Code.InvalidArgument);
    expect(await codeOf(client.listProducts({ key: "a\u0000" }, as(account)))).toBe(Code.InvalidArgument);
  });

  it("creates brands and categories from product writes, matched case-insensitively", async () => {
    const account = randomUUID();
    const results = await upsert(account, [
      { key: "B1", brandName: "Nike", categoryName: "Shoes" },
      { key: "B2", brandName: "NIKE", categoryName: "shoes" },
      { key: "B3", brandName: " adidas ", categoryName: "Socks" },
    ]);
    const [b1, b2, b3] = results.map((r) => r.product!);
    expect(b2.brandId).toBe(b1.brandId);
    expect(b2.brandName).toBe("Nike");
    expect(b2.categoryId).toBe(b1.categoryId);
    expect(b3.brandName).toBe("adidas");
    const [later] = await upsert(account, [{ key: "B4", brandName: "nike" }]);
    expect(later.product!.brandId).toBe(b1.brandId);

    const brands = await client.listBrands({ page: { page: 1, pageSize: 10 } }, as(account));
    expect(brands.totalCount).toBe(2);
    expect(brands.brands.map((b) => [b.name, b.synonyms])).toEqual([
      ["Nike", []],
      ["adidas", []],
    ]);
    expect((await client.listBrands({ name: "NIKE" }, as(account))).brands.map((b) => b.id)).toEqual([b1.brandId]);
    expect((await client.listBrands({ id: b3.brandId }, as(account))).brands.map((b) => b.name)).toEqual(["adidas"]);
    expect((await client.listBrands({ id: "nope" }, as(account))).totalCount).toBe(0);
    expect((await client.getBrand({ id: b1.brandId! }, as(account))).brand).toMatchObject({ name: "Nike", synonyms: [] });
    // A brand's synonyms (kept by the table, no route writes them) are read and answered.
    await db("brands").where({ account_id: account, id: b3.brandId }).update({ synonyms: ["Adi"] });
    expect((await client.listBrands({ name: "adi" }, as(account))).brands.map((b) => [b.name, b.synonyms])).toEqual([["adidas", ["Adi"]]]);
    expect((await client.listCategories({}, as(account))).categories.map((c) => c.name)).toEqual(["Shoes", "Socks"]);
    expect((await client.getCategory({ id: b3.categoryId! }, as(account))).category?.name).toBe("Socks");
    expect(await codeOf(client.getBrand({ id: "nope" }, as(account)))).toBe(Code.NotFound);
    expect(await codeOf(client.getCategory({ id: randomUUID() }, as(account)))).toBe(Code.NotFound);
  });

  it("streams each product of a page as its REST JSON text, exactly what toRestJson writes of the message", async () => {
    const account = randomUUID();
    const text = (name: string) => `${name} "quoted" \\ \n ü 😀 <tag>`;
    const every: ProductInit = {
      key: "ALL", sku: text("sku"), vendorSku: text("vendor"), ean: "7312345678901", productName: text("name"), variantName: text("variant"),
      status: 7, season: "AW26", year: 2026, department: text("dep"), gender: "F", ageGroup: "adult", collection: text("col"), color: "red",
      size: "XL", brandName: "Acme", categoryName: "Tops", subCategory: "Tees", productType: "t", merchandiseType: "m", supplier: "s", moq: 2147483647,
      ...Object.fromEntries(Array.from({ length: 10 }, (_, n) => [`pimCustom${n + 1}`, text(`pim${n + 1}`)])),
      productGroupId: "PG", variantGroupId: "VG", startDate: "1970-01-01", endDate: "2105-12-31", productionLeadTimeDays: 0,
      shippingLeadTimeDays: 365, activePlanning: false, costCalculationPrice: { value: "1234567.8900" },
      costCalculationValues: [
        { key: "freight", sort: 2, type: 1, currency: "EUR", monetaryValue: { value: "10.50" }, externalReference: "" },
        { key: "insurance", sort: 0, type: 2, percentageValue: { value: "0.0000000001" } },
        { key: "duty", sort: -3, type: 1, monetaryValue: { value: "-0.5" } },
      ],
      // With the published client's fields (answered under their names too, in their order).
      externalAttributes: { nested: { list: [1, "two", null, true, { deep: [] }] }, "key with \"quotes\"": -0.25, empty: {}, leadTime: 30, costPrice: 12.5, info: { a: null } },
    };
    // More than one chunk (STREAM_CHUNK), a product with nothing but its key, one with an image
    // and an old key, one whose full write cleared what it had.
    const written = await upsert(account, [every, { key: "BARE" }, ...Array.from({ length: 520 }, (_, i) => ({ key: `N-${i}`, costCalculationPrice: { value: String(i) } }))]);
    expect(written[0].violations).toEqual([]);
    expect(new Set(statuses(written))).toEqual(new Set([201]));
    await client.uploadImages({ images: [{ key: "BARE", filename: "a.png", imageData: PNG }] }, as(account));
    await client.switchKeys({ switches: [{ oldKey: "BARE", key: "BARE-2", sku: "S" }] }, as(account));
    await upsert(account, [{ key: "N-1" }]);

    const request = { list: { page: { page: 1, pageSize: 10_000 } } };
    const messages: catalogueV1.Product[] = [];
    for await (const chunk of client.streamProducts(request, as(account))) messages.push(...chunk.products);
    // Each product arrives as three JSON objects: the fields before imageUrl, between imageUrl and
    // prices, and after prices (the two the gateway adds).
    const texts: { id: string; parts: string[]; json: string; imageUrl?: string }[] = [];
    let total = 0;
    for await (const chunk of client.streamProductsJson(request, as(account))) {
      const json = Buffer.from(chunk.productsJson);
      expect(chunk.ends).toHaveLength(chunk.ids.length * 3);
      expect(chunk.ends.at(-1)).toBe(json.length);
      const part = (k: number) => json.subarray(k ? chunk.ends[k - 1] : 0, chunk.ends[k]).toString();
      chunk.ids.forEach((id, i) => {
        const parts = [part(3 * i), part(3 * i + 1), part(3 * i + 2)];
        texts.push({ id, parts, json: parts.join(""), imageUrl: chunk.imageUrls[i] });
      });
      total ||= chunk.totalCount;
    }
    expect(total).toBe(522);
    expect(texts.map((t) => t.id)).toEqual(messages.map((m) => m.id));
    texts.forEach((t, i) => {
      const rest = JSON.parse(stringifyRest(productToRest(messages[i])));
      const [before, between, after] = t.parts.map((p) => JSON.parse(p));
      // The same fields in the same (proto) order once the gateway's two are in their places.
      expect([...Object.keys(before), "imageUrl", ...Object.keys(between), "prices", ...Object.keys(after)]).toEqual(Object.keys(rest));
      const { imageUrl, prices, ...expected } = rest;
      expect(prices).toEqual([]);
      expect({ ...before, ...between, ...after }).toStrictEqual(expected);
      expect(t.imageUrl ?? null).toBe(imageUrl);
    });
    const all = Object.assign({}, ...texts[0].parts.map((p) => JSON.parse(p)));
    expect(all).toMatchObject({ costCalculationPrice: 1234567.89, moq: 2147483647, activePlanning: false, brandName: "Acme" });
    // The stored digits, not a float's: trailing zeros kept, no exponent.
    expect(texts[0].json).toContain('"costCalculationPrice":1234567.8900');
    expect(texts[0].json).toContain('"percentageValue":0.0000000001');
    expect(Object.assign({}, ...texts[1].parts.map((p) => JSON.parse(p)))).toMatchObject({ key: "BARE-2", skuSynonyms: ["BARE"], status: 2 });
    expect(texts[1].imageUrl).toBe(`/v2/api/images/${sha256(PNG)}`);
  });

  it("reads a streamed page's chunks with a named statement: Postgres parses and plans the query once per connection", async () => {
    // About 3 KB of SQL: parsing and planning it anew took about as long as running it for 500
    // products, once for each chunk of a page and for each key lookup.
    const account = randomUUID();
    await upsert(account, [{ key: "P1" }, { key: "P2" }]);
    const ids = (await list(account)).products.map((p) => p.id);
    const one = createDb({ url: catalogue.url, schema: "catalogue", poolMax: 1 });
    try {
      for (let i = 0; i < 3; i++) expect((await repo.findProductsJson(one, account, ids)).map((r) => r.id)).toEqual(ids);
      const { rows } = await one.raw("SELECT name, generic_plans + custom_plans AS runs FROM pg_prepared_statements");
      expect(rows).toEqual([{ name: "catalogue.find_products_json", runs: 3 }]);
    } finally {
      await one.destroy();
    }
  });

  it("switches keys: the old key becomes a synonym that every key lookup resolves", async () => {
    const account = randomUUID();
    await upsert(account, [{ key: "OLD", sku: "S-OLD", color: "red" }, { key: "TAKEN" }]);
    const { results } = await client.switchKeys(
      {
        switches: [
          { oldKey: "OLD", key: "NEW", sku: "S-NEW", season: "AW26" },
          { oldKey: "missing", key: "X", sku: "X" },
          { oldKey: "TAKEN", key: "NEW", sku: "Y" },
          { oldKey: "OLD", key: "", sku: "Z" },
        ],
      },
      as(account),
    );
    expect(statuses(results)).toEqual([200, 404, 409, 400]);
    expect(results[0].result).toMatchObject({ reference: "OLD", referenceField: "oldKey" });
    expect(results[0].product).toMatchObject({ key: "NEW", sku: "S-NEW", season: "AW26", color: "red", skuSynonyms: ["OLD"] });

    expect((await list(account, { key: "OLD" })).products.map((p) => p.key)).toEqual(["NEW"]);
    expect(statuses(await update(account, [{ key: "OLD", size: "XL" }]))).toEqual([200]);
    const [image] = (await client.uploadImages({ images: [{ key: "OLD", filename: "a.png", imageData: PNG }] }, as(account))).results;
    expect(image.result?.statusCode).toBe(200);
    const { skus } = await client.resolveSkus({ references: [{ key: "OLD" }] }, as(account));
    expect(skus[0]).toMatchObject({ found: true, key: "NEW" });
    // A full write by the old key goes to the switched product, which keeps its new key.
    const [again] = await upsert(account, [{ key: "OLD", sku: "S-NEW", color: "blue" }]);
    expect(again.result?.statusCode).toBe(200);
    expect(again.product).toMatchObject({ key: "NEW", color: "blue", imageUrl: `/v2/api/images/${sha256(PNG)}` });
    expect(again.product!.size).toBeUndefined();
    // The old key is in use as a synonym; switching back drops it from the synonyms.
    const busy = await client.switchKeys({ switches: [{ oldKey: "TAKEN", key: "OLD", sku: "Y" }] }, as(account));
    expect(statuses(busy.results)).toEqual([409]);
    const back = await client.switchKeys({ switches: [{ oldKey: "NEW", key: "OLD", sku: "S-OLD" }] }, as(account));
    expect(back.results[0].product).toMatchObject({ key: "OLD", skuSynonyms: ["NEW"] });
    expect((await list(account)).totalCount).toBe(2);
    // Sent again (by either key), the switch changes nothing: unchanged, no new version.
    const version = async () => (await db("products").where({ account_id: account, key: "OLD" }).first()).version;
    const before = await version();
    for (const oldKey of ["NEW", "OLD"]) {
      const resent = await client.switchKeys({ switches: [{ oldKey, key: "OLD", sku: "S-OLD" }] }, as(account));
      expect(resent.results[0].result).toMatchObject({ statusCode: 200, message: "unchanged" });
    }
    expect(await version()).toBe(before);
  });

  it("stores images by magic bytes, content-addressed, and sets imageUrl (variant group too)", async () => {
    const account = randomUUID();
    await upsert(account, [
      { key: "I1", variantGroupId: "VG", season: "SS" },
      { key: "I2", variantGroupId: "VG", season: "SS" },
      { key: "I3", variantGroupId: "VG", season: "AW" },
      { key: "I4" },
    ]);
    const upload = (images: MessageInitShape<typeof catalogueV1.ImageUploadSchema>[]) =>
      client.uploadImages({ images: images.map((i) => ({ filename: "f", ...i })) }, as(account));
    const tooBig = Buffer.alloc(10 * 1024 * 1024 + 1);
    PNG.copy(tooBig);
    const { results } = await upload([
      { key: "I4", imageData: JPEG },
      { key: "I4", imageData: GIF },
      { key: "I4", imageData: WEBP },
      { key: "I1", imageData: PNG, variantGroupId: "VG", season: "SS" },
      { key: "I4", imageData: Buffer.from("%PDF-1.7") },
      { key: "I4", imageData: Buffer.alloc(0) },
      { key: "I4", imageData: tooBig },
      { key: "nope", imageData: PNG },
      { key: "I4", filename: "", imageData: PNG },
    ]);
    expect(statuses(results)).toEqual([200, 200, 200, 200, 400, 400, 400, 404, 400]);
    expect(results.slice(4).map((r) => r.violations.map((v) => v.path))).toEqual([["imageData"], ["imageData"], ["imageData"], [], ["filename"]]);
    expect(results[3].image).toEqual(expect.objectContaining({ key: "I1", imageUrl: `/v2/api/images/${sha256(PNG)}` }));

    const byKey = new Map((await list(account)).products.map((p) => [p.key, p.imageUrl]));
    // The last upload for a product wins; the variant group of one season shares the image.
    expect(Object.fromEntries(byKey)).toEqual({
      I1: `/v2/api/images/${sha256(PNG)}`,
      I2: `/v2/api/images/${sha256(PNG)}`,
      I3: undefined,
      I4: `/v2/api/images/${sha256(WEBP)}`,
    });
    for (const [bytes, type] of [[JPEG, "image/jpeg"], [GIF, "image/gif"], [WEBP, "image/webp"], [PNG, "image/png"]] as const) {
      const image = await client.getImage({ sha256: sha256(bytes) }, as(account));
      expect([Buffer.from(image.data).equals(bytes), image.contentType]).toEqual([true, type]);
    }
    await upload([{ key: "I3", imageData: PNG }]);
    expect(Number((await db("images").where({ account_id: account }).count({ c: "*" }))[0].c)).toBe(4);
    // An upload sets its image when a product it reaches changes (here I1's variant group only);
    // sent again, every product has it: unchanged.
    const messages = async (images: Parameters<typeof upload>[0]) => (await upload(images)).results.map((r) => r.result?.message);
    expect(await messages([{ key: "I1", imageData: GIF }])).toEqual(["image set"]);
    expect(await messages([{ key: "I1", imageData: GIF, variantGroupId: "VG", season: "SS" }])).toEqual(["image set"]);
    expect(await messages([{ key: "I1", imageData: GIF, variantGroupId: "VG", season: "SS" }, { key: "I4", imageData: WEBP }])).toEqual(["unchanged", "unchanged"]);
    expect(await codeOf(client.getImage({ sha256: sha256(Buffer.from("x")) }, as(account)))).toBe(Code.NotFound);
    expect(await codeOf(client.getImage({ sha256: "../etc" }, as(account)))).toBe(Code.NotFound);
  });

  it("refuses a mapping table write at another revision than the one named (If-Match: Aborted, nothing changed)", async () => {
    const account = randomUUID();
    const id = { mappingField: "colour", mappingType: "products" };
    await client.upsertMappingTable({ ...id, mappingValues: { blk: "Black" } }, as(account));
    const { revision } = await client.getMappingTable(id, as(account));
    await client.mergeMappingTable({ ...id, mappingValues: { blk: "Now" }, ifRevision: revision }, as(account));
    const refusal = (call: Promise<unknown>) => call.then(() => undefined, (e: ConnectError) => [Code[e.code], e.rawMessage]);
    const stale = ["Aborted", "mapping table colour of type products changed since the revision the request named"];
    expect(await refusal(client.mergeMappingTable({ ...id, mappingValues: { blk: "Late" }, ifRevision: revision }, as(account)))).toEqual(stale);
    expect(await refusal(client.deleteMappingTable({ ...id, ifRevision: revision }, as(account)))).toEqual(stale);
    expect((await client.getMappingTable(id, as(account))).mappingTable?.mappingValues).toEqual({ blk: "Now" });
    const gone = { mappingField: "size", mappingType: "products" };
    expect(await refusal(client.deleteMappingTable({ ...gone, ifRevision: revision }, as(account)))).toEqual(["Aborted", "mapping table size of type products changed since the revision the request named"]);
    expect(await refusal(client.deleteMappingTable(gone, as(account)))).toEqual(["NotFound", "mapping table size of type products not found"]);
  });

  it("keeps mapping tables: upsert, get, merge keeping absent keys, list, delete, 404 and invalid type", async () => {
    const account = randomUUID();
    const id = { mappingField: "channel", mappingType: "transactions" };
    await expect(client.getMappingTable(id, as(account))).rejects.toMatchObject({ code: Code.NotFound });
    await expect(client.mergeMappingTable({ ...id, mappingValues: { a: "1" } }, as(account))).rejects.toMatchObject({ code: Code.NotFound });
    await expect(client.deleteMappingTable(id, as(account))).rejects.toMatchObject({ code: Code.NotFound });

    const created = await client.upsertMappingTable({ ...id, mappingValues: { web: "1", shop: "2" } }, as(account));
    expect(created.created).toBe(true);
    expect(toRestJson(catalogueV1.MappingTableSchema, created.mappingTable!)).toMatchObject({
      mappingField: "channel",
      mappingType: "transactions",
      mappingValues: { web: "1", shop: "2" },
    });
    const merged = await client.mergeMappingTable({ ...id, mappingValues: { shop: "3", app: "4" } }, as(account));
    expect(merged.mappingTable?.mappingValues).toEqual({ web: "1", shop: "3", app: "4" });
    const replaced = await client.upsertMappingTable({ ...id, mappingValues: { only: "x" } }, as(account));
    expect([replaced.created, replaced.mappingTable?.mappingValues]).toEqual([false, { only: "x" }]);
    await client.upsertMappingTable({ mappingField: "channel", mappingType: "stocks", mappingValues: {} }, as(account));
    expect((await client.getMappingTable(id, as(account))).mappingTable?.mappingValues).toEqual({ only: "x" });
    expect((await client.listMappingTables({}, as(account))).mappingTables.map((m) => m.mappingType)).toEqual(["transactions", "stocks"]);
    expect((await client.listMappingTables({ mappingType: "stocks" }, as(account))).mappingTables).toHaveLength(1);

    await client.deleteMappingTable(id, as(account));
    await expect(client.getMappingTable(id, as(account))).rejects.toMatchObject({ code: Code.NotFound });
    for (const call of [
      client.listMappingTables({ mappingType: "nope" }, as(account)),
      client.getMappingTable({ mappingField: "channel", mappingType: "" }, as(account)),
      client.upsertMappingTable({ mappingField: "channel", mappingType: "Stocks", mappingValues: {} }, as(account)),
      client.mergeMappingTable({ ...id, mappingValues: { "a\u0000": "b" } }, as(account)),
      client.deleteMappingTable({ mappingField: "", mappingType: "stocks" }, as(account)),
    ]) {
      expect(await codeOf(call)).toBe(Code.InvalidArgument);
    }
    const error = await client.listMappingTables({ mappingType: "nope" }, as(account)).catch((e) => ConnectError.from(e));
    expect((error as ConnectError).findDetails(ValidationErrorsSchema)[0].violations[0].path).toBe("mappingType");
  });

  it("resolves SKU references by key, old key, sku and ean, in order, in one query", async () => {
    const account = randomUUID();
    await upsert(account, [
      { key: "R1", sku: "RS1", ean: "111" },
      { key: "R2", sku: "RS2", ean: "222" },
      { key: "R3", sku: "RS1", ean: "333" },
    ]);
    await client.switchKeys({ switches: [{ oldKey: "R2", key: "R2b", sku: "RS2" }] }, as(account));
    const { skus } = await client.resolveSkus(
      {
        references: [
          { key: "R1" },
          { key: "R2" },
          { sku: "RS1" },
          { ean: "333" },
          { key: "nope", sku: "RS1" },
          { sku: "nope" },
          {},
          { key: "a\u0000" },
        ],
      },
      as(account),
    );
    expect(skus.map((s) => (s.found ? [s.key, s.sku, s.ean] : null))).toEqual([
      ["R1", "RS1", "111"],
      ["R2b", "RS2", "222"],
      ["R1", "RS1", "111"],
      ["R3", "RS1", "333"],
      null,
      null,
      null,
      null,
    ]);
    expect(skus[0].id).toMatch(/^[0-9a-f-]{36}$/);
    // By UUID (a stored reference whose integer id is wanted); another text finds nothing.
    const byId = await client.resolveSkus({ references: [{ id: skus[1].id }, { id: "R1" }, { id: randomUUID() }] }, as(account));
    expect(byId.skus.map((s) => (s.found ? [s.key, s.seq] : null))).toEqual([["R2b", skus[1].seq], null, null]);
  });

  it("keeps accounts apart in every call: another account's objects are not found", async () => {
    const owner = randomUUID();
    const stranger = randomUUID();
    const [{ product }] = await upsert(owner, [{ key: "MINE", sku: "S", ean: "E", brandName: "Own", categoryName: "Cat" }]);
    await client.uploadImages({ images: [{ key: "MINE", filename: "f", imageData: GIF }] }, as(owner));
    const table = { mappingField: "f", mappingType: "products" };
    await client.upsertMappingTable({ ...table, mappingValues: { a: "b" } }, as(owner));

    expect((await list(stranger)).totalCount).toBe(0);
    expect((await list(stranger, { key: "MINE" })).products).toEqual([]);
    expect((await list(stranger, { skuIds: [product!.id] })).products).toEqual([]);
    expect(statuses(await update(stranger, [{ key: "MINE", color: "x" }, { id: product!.id, color: "x" }]))).toEqual([404, 404]);
    expect(statuses((await client.switchKeys({ switches: [{ oldKey: "MINE", key: "THEIRS", sku: "S" }] }, as(stranger))).results)).toEqual([404]);
    expect(statuses((await client.uploadImages({ images: [{ key: "MINE", filename: "f", imageData: PNG }] }, as(stranger))).results)).toEqual([404]);
    expect(await codeOf(client.getImage({ sha256: sha256(GIF) }, as(stranger)))).toBe(Code.NotFound);
    expect((await client.listBrands({}, as(stranger))).totalCount).toBe(0);
    expect(await codeOf(client.getBrand({ id: product!.brandId! }, as(stranger)))).toBe(Code.NotFound);
    expect((await client.listCategories({}, as(stranger))).categories).toEqual([]);
    expect(await codeOf(client.getCategory({ id: product!.categoryId! }, as(stranger)))).toBe(Code.NotFound);
    expect((await client.listMappingTables({}, as(stranger))).mappingTables).toEqual([]);
    expect(await codeOf(client.getMappingTable(table, as(stranger)))).toBe(Code.NotFound);
    expect(await codeOf(client.mergeMappingTable({ ...table, mappingValues: { c: "d" } }, as(stranger)))).toBe(Code.NotFound);
    expect(await codeOf(client.deleteMappingTable(table, as(stranger)))).toBe(Code.NotFound);
    const { skus } = await client.resolveSkus({ references: [{ key: "MINE" }, { sku: "S" }, { ean: "E" }] }, as(stranger));
    expect(skus.map((s) => s.found)).toEqual([false, false, false]);
    // The same key in another account is another product, and the owner's stays as it was.
    const [theirs] = await upsert(stranger, [{ key: "MINE", brandName: "own" }]);
    expect(theirs.result?.statusCode).toBe(201);
    expect(theirs.product!.brandId).not.toBe(product!.brandId);
    const [mine] = (await list(owner)).products;
    expect(mine).toMatchObject({ id: product!.id, imageUrl: `/v2/api/images/${sha256(GIF)}` });
    expect(mine.color).toBeUndefined();
    expect((await client.getMappingTable(table, as(owner))).mappingTable?.mappingValues).toEqual({ a: "b" });
  });

  it("publishes one message per changed product with the REST product, after commit", async () => {
    const account = randomUUID();
    const mine = () => published.filter((m) => m.accountId === account);
    await upsert(account, [{ key: "E1", brandName: "EvBrand" }, { key: "E2" }, { key: "", sku: "invalid" }]);
    await update(account, [{ key: "E1", color: "red" }]);
    await client.switchKeys({ switches: [{ oldKey: "E2", key: "E2b", sku: "S" }] }, as(account));
    await client.uploadImages({ images: [{ key: "E1", filename: "f", imageData: PNG }] }, as(account));
    await client.upsertMappingTable({ mappingField: "f", mappingType: "stocks", mappingValues: {} }, as(account));
    // A full write that changes a field and removes the image is one version; removing the image alone is one too.
    const e1Written = { key: "E1", color: "red", brandName: "EvBrand" };
    await client.upsertProducts({ products: [{ ...e1Written, color: "green" }], cleared: [{ fields: ["imageUrl"] }] }, as(account));
    await client.uploadImages({ images: [{ key: "E1", filename: "f", imageData: GIF }] }, as(account));
    await client.upsertProducts({ products: [{ ...e1Written, color: "green" }], cleared: [{ fields: ["imageUrl"] }] }, as(account));

    await eventually(async () => mine().length >= 10, 10_000, "catalogue messages");
    const skuMessages = mine().filter((m) => m.subject.startsWith("analytics.catalogue.sku."));
    const decoded = skuMessages.map((m) => fromBinary(catalogueMessagesV1.SkuChangedSchema, m.payload));
    expect(skuMessages.every((m, i) => m.aggregate === `sku:${decoded[i].skuId}` && decoded[i].accountId === account)).toBe(true);
    // In order per product (the relay keeps each aggregate's order, not an order across products).
    const ofProduct = (skuId: string) =>
      skuMessages.flatMap((m, i) => (decoded[i].skuId === skuId ? [[m.subject, decoded[i].product!.key, decoded[i].version]] : []));
    const e1 = decoded.find((d) => d.product!.key === "E1")!.skuId;
    const e2 = decoded.find((d) => d.product!.key === "E2")!.skuId;
    expect(ofProduct(e1)).toEqual([
      ["analytics.catalogue.sku.created", "E1", 1n],
      ["analytics.catalogue.sku.updated", "E1", 2n],
      ["analytics.catalogue.sku.image_set", "E1", 3n],
      ["analytics.catalogue.sku.updated", "E1", 4n],
      ["analytics.catalogue.sku.image_set", "E1", 5n],
      ["analytics.catalogue.sku.updated", "E1", 6n],
    ]);
    expect(ofProduct(e2)).toEqual([
      ["analytics.catalogue.sku.created", "E2", 1n],
      ["analytics.catalogue.sku.key_switched", "E2b", 2n],
    ]);
    expect(skuMessages).toHaveLength(8);
    const imageSet = decoded[skuMessages.findIndex((m) => m.subject === "analytics.catalogue.sku.image_set")];
    const product = JSON.parse(stringifyRest(productToRest(imageSet.product!)));
    expect(Object.keys(product).sort()).toEqual(PRODUCT_FIELDS);
    expect(product).toMatchObject({ key: "E1", color: "red", brandName: "EvBrand", imageUrl: `/v2/api/images/${sha256(PNG)}`, prices: [] });
    expect(mine().map((m) => m.subject)).toEqual(
      expect.arrayContaining(["analytics.catalogue.brand.created", "analytics.catalogue.mapping_table.created"]),
    );
    await eventually(async () => Number((await db("outbox").whereNull("published_at").count({ c: "*" }))[0].c) === 0);
  });

  it("refuses calls without the internal credential", async () => {
    await expect(client.listProducts({})).rejects.toMatchObject({ code: Code.Unauthenticated });
  });

  describe("set-based batches", () => {
    let counted: Db;
    let statements: string[] = [];
    let ctx: ServiceContext;

    beforeAll(() => {
      // The domain functions on a pool of our own, to count the statements they send.
      counted = createDb({ url: catalogue.url, schema: "catalogue" });
      counted.on("query", (q: { sql: string }) => statements.push(q.sql));
      const logger = pino({ level: "silent" });
      ctx = { db: counted, logger, relay: new OutboxRelay({ db: counted, bus: catalogue.stream.bus, logger }) };
    });
    afterAll(() => counted.destroy());

    it("writes 1000 products (and then updates them) in a handful of statements", async () => {
      const account = randomUUID();
      const items = Array.from({ length: 1000 }, (_, n) =>
        create(ProductSchema, { key: `BULK${n}`, sku: `S${n}`, brandName: `Brand${n % 10}`, categoryName: `Cat${n % 5}`, pimCustom3: "p" }),
      );
      statements = [];
      // Speed is measured in bench/batch-floor.mjs; here: how many statements.
      const created = await upsertProducts(ctx, account, items);
      expect(created.every((o) => o.statusCode === 201)).toBe(true);
      expect(statements.length).toBeLessThanOrEqual(12);

      statements = [];
      const patches = items.map((p, n) => create(ProductSchema, { key: p.key, color: n % 2 ? "odd" : "even" }));
      const updated = await updateProducts(ctx, account, patches);
      expect(updated.every((o) => o.statusCode === 200)).toBe(true);
      expect(statements.length).toBeLessThanOrEqual(12);
      expect(updated[999].value).toMatchObject({ key: "BULK999", color: "odd", pimCustom3: "p", brandName: "Brand9" });
      expect(Number((await db("outbox").where({ account_id: account }).count({ c: "*" }))[0].c)).toBe(2000 + 10 + 5);
    });
  });
});
