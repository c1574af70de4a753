import { create, equals } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogueMessagesV1, catalogueV1, decimalFromNumber, fromRestJson, productToRest, RawJson, RestDecimal, stringifyRest, toRestJson } from "@analytics/contracts";
import { PRODUCT_FIELDS } from "./product-fields";

const { ProductSchema, KeySwitchSchema, ImageUploadSchema, MappingTableSchema } = catalogueV1;

describe("REST JSON of catalogue messages", () => {
  const product = create(ProductSchema, {
    id: "7d0c0a4e-3f7a-4a53-9a53-8d6f0b1f2c3d",
    key: "K-1",
    vendorSku: "V-1",
    status: 4,
    year: 2026,
    startDate: "2026-03-01",
    activePlanning: false,
    costCalculationPrice: { value: "12.5" },
    costCalculationValues: [{ key: "freight", sort: 1, type: 2, percentageValue: { value: "3.5" } }],
    externalAttributes: { nested: { list: [1, "two", null] } },
    skuSynonyms: ["K-0"],
    createdAt: timestampFromDate(new Date("2026-03-01T10:00:00.123Z")),
  });

  it("writes every contract field of a Product, null where unset", () => {
    const json = JSON.parse(stringifyRest(productToRest(product)));
    expect(Object.keys(json).sort()).toEqual(PRODUCT_FIELDS);
    expect(json).toMatchObject({
      id: 0,
      uuid: "7d0c0a4e-3f7a-4a53-9a53-8d6f0b1f2c3d",
      vendorSKU: "V-1",
      status: 4,
      year: "2026",
      startDate: "2026-03-01",
      endDate: null,
      activePlanning: false,
      brandId: null,
      prices: [],
      skuSynonyms: ["K-0"],
      externalAttributes: { nested: { list: [1, "two", null] } },
      createdAt: "2026-03-01T10:00:00.123Z",
      updatedAt: null,
    });
    expect(json.costCalculationValues).toEqual([
      { key: "freight", sort: 1, type: 2, currency: null, monetaryValue: null, percentageValue: 3.5, externalReference: null, fxRate: null },
    ]);
  });

  it("reads back what it wrote", () => {
    const back = fromRestJson(ProductSchema, JSON.parse(stringifyRest(toRestJson(ProductSchema, product))));
    expect(equals(ProductSchema, back, product)).toBe(true);
    expect(back.sku).toBeUndefined();
  });

  it("reads REST request bodies: key switch, base64 image, mapping table", () => {
    expect(fromRestJson(KeySwitchSchema, { oldKey: "a", key: "b", sku: "s", ean: null })).toMatchObject({ oldKey: "a", key: "b", sku: "s" });
    const upload = fromRestJson(ImageUploadSchema, { key: "k", filename: "f.png", imageData: Buffer.from("GIF89a").toString("base64") });
    expect(Buffer.from(upload.imageData).toString()).toBe("GIF89a");
    const table = create(MappingTableSchema, { mappingField: "f", mappingType: "stocks", mappingValues: { a: "1" } });
    expect(toRestJson(MappingTableSchema, table)).toEqual({ mappingField: "f", mappingType: "stocks", mappingValues: { a: "1" }, updatedAt: null });
  });

  it("keeps the digits of decimals exactly, as JSON numbers", () => {
    const digits = ["19.99", "0.1", "0.3", "-0.5", "123456789012.345", "0.0000001", "100"];
    for (const value of digits) {
      const text = stringifyRest(toRestJson(ProductSchema, create(ProductSchema, { key: "k", costCalculationPrice: { value } })));
      expect(text).toContain(`"costCalculationPrice":${value}`);
      expect(fromRestJson(ProductSchema, JSON.parse(text)).costCalculationPrice?.value).toBe(value);
    }
    // 0.1 + 0.2 never appears: the sum is not computed in JS, and 0.3 stays 0.3.
    expect(decimalFromNumber(0.1 + 0.2)).not.toBe("0.3");
    expect(decimalFromNumber(1e21)).toBe("1000000000000000000000");
    expect(decimalFromNumber(-1.5e-8)).toBe("-0.000000015");
    expect(decimalFromNumber(-0)).toBe("0");
  });

  it("writes int64 values as JSON numbers, never strings", () => {
    const json = toRestJson(catalogueMessagesV1.SkuChangedSchema, create(catalogueMessagesV1.SkuChangedSchema, { version: 42n }));
    expect(json.version).toBe(42);
  });

  it("a string that looks like the decimal mark stays a string", () => {
    const text = stringifyRest({ s: "\u0000abc:1", n: toRestJson(ProductSchema, create(ProductSchema, { key: "k", costCalculationPrice: { value: "2" } })).costCalculationPrice });
    expect(JSON.parse(text)).toEqual({ s: "\u0000abc:1", n: 2 });
  });

  it("places raw JSON text as it is, also beside decimals, and forgets it afterwards", () => {
    const text = stringifyRest([{ payload: new RawJson('{"a": [1, 2.50, "x"]}'), n: new RestDecimal("19.99") }, { payload: new RawJson("null") }]);
    expect(text).toBe('[{"payload":{"a": [1, 2.50, "x"]},"n":19.99},{"payload":null}]');
    expect(stringifyRest({ plain: "r0" })).toBe('{"plain":"r0"}');
  });
});
