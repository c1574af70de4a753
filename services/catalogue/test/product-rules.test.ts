import { create } from "@bufbuild/protobuf";
import { catalogueV1 } from "@analytics/contracts";
import { DATE_FIELDS, WRITABLE_FIELDS, productsTable } from "../src/resources";
import { productViolations, textViolations } from "../src/validation";

const { ImageUploadSchema, KeySwitchSchema, ProductSchema } = catalogueV1;

/**
 * The catalogue checks what the gateway checks, from the same declaration: each product field's
 * rules on its proto field (proto/catalogue/v1/catalogue.proto).
 */
describe("the catalogue reads its product checks from the proto rules", () => {
  it.each([
    ["sku", "s".repeat(501), "must be at most 500 characters"],
    ["vendorSku", "v".repeat(501), "must be at most 500 characters"],
    ["brandName", "b".repeat(501), "must be at most 500 characters"],
    ["productName", "n".repeat(10_001), "must be at most 10000 characters"],
    ["status", 8, "must be an integer from 1 to 7"],
    ["year", 10_000, "must be an integer from 0 to 9999"],
    ["moq", -1, "must be an integer from 0 to 2147483647"],
    ["startDate", "2026-02-30", "must be a date YYYY-MM-DD"],
  ])("%s = %p: %s", (field, value, message) => {
    const [violation] = productViolations(create(ProductSchema, { key: "P1", [field]: value }));
    expect(violation?.message).toBe(message);
    expect(productViolations(create(ProductSchema, { key: "P1" }))).toEqual([]);
  });

  it("cost calculation values: type 1 or 2, references at most 500 characters", () => {
    const problems = productViolations(create(ProductSchema, { key: "P1", costCalculationValues: [{ key: "c", type: 3, externalReference: "r".repeat(501) }] }));
    expect(problems.map((p) => p.path)).toEqual(["costCalculationValues[0].type", "costCalculationValues[0].externalReference"]);
  });

  it("read-only, stored and date fields follow the rules", () => {
    for (const readOnly of ["id", "brandId", "categoryId", "skuSynonyms", "prices", "createdAt", "updatedAt", "seq", "brandSeq", "categorySeq"]) {
      expect(WRITABLE_FIELDS.map((f) => f.jsonName)).not.toContain(readOnly);
    }
    // The products table's columns: the stored fields, brand and category names kept in their own tables.
    expect(productsTable.columns).not.toContain("brand_name");
    expect(productsTable.columns).not.toContain("category_name");
    expect(productsTable.columns).toEqual(expect.arrayContaining(["id", "product_name", "brand_id", "category_id", "cost_calculation_values"]));
    expect([...DATE_FIELDS].sort()).toEqual(["end_date", "start_date"]);
  });

  it("key switches and image uploads: required keys, bounds by field", () => {
    expect(textViolations(KeySwitchSchema, create(KeySwitchSchema, { oldKey: " ", key: "B", sku: "S", ean: "e".repeat(501) }))).toEqual([
      { path: "oldKey", message: "is required" },
      { path: "ean", message: "must be at most 500 characters" },
    ]);
    expect(textViolations(ImageUploadSchema, create(ImageUploadSchema, { key: "K", filename: "", season: "s".repeat(501) }))).toEqual([
      { path: "filename", message: "is required" },
      { path: "season", message: "must be at most 500 characters" },
    ]);
  });
});
