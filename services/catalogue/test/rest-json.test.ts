import { create, equals } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { catalogueV1, fromRestJson, toRestJson } from "@analytics/contracts";
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
    costCalculationPrice: 12.5,
    costCalculationValues: [{ key: "freight", sort: 1, type: 2, percentageValue: 3.5 }],
    externalAttributes: { nested: { list: [1, "two", null] } },
    skuSynonyms: ["K-0"],
    createdAt: timestampFromDate(new Date("2026-03-01T10:00:00.123Z")),
  });

  it("writes every contract field of a Product, null where unset", () => {
    const json = toRestJson(ProductSchema, product);
    expect(Object.keys(json).sort()).toEqual(PRODUCT_FIELDS);
    expect(json).toMatchObject({
      vendorSKU: "V-1",
      status: 4,
      year: 2026,
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
      { key: "freight", sort: 1, type: 2, currency: null, monetaryValue: null, percentageValue: 3.5, externalReference: null },
    ]);
  });

  it("reads back what it wrote", () => {
    const back = fromRestJson(ProductSchema, JSON.parse(JSON.stringify(toRestJson(ProductSchema, product))));
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
});
