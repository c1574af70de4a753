import { imageUploadSchema, keySwitchSchema, mappingType, productCreateSchema, productUpdateSchema } from "../src/routes/catalogue-schemas";

/**
 * A catalogue field's rules are declared once, on the proto field (proto/catalogue/v1): the
 * gateway's request schemas read them, so a value out of its rule is the item's 400 naming the
 * field (the catalogue service checks the same rules: services/catalogue/test/product-rules.test.ts).
 */
const refused = (schema: { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[] }[] } } }, value: unknown) => {
  const result = schema.safeParse(value);
  return result.success ? undefined : result.error?.issues.map((i) => i.path.join("."));
};

describe("product field rules drive the REST request schemas", () => {
  const product = { key: "P1" };

  it.each([
    ["sku", "s".repeat(500), "s".repeat(501)],
    ["vendorSKU", "v".repeat(500), "v".repeat(501)],
    ["ean", "e".repeat(500), "e".repeat(501)],
    ["season", "s".repeat(500), "s".repeat(501)],
    ["brandName", "b".repeat(500), "b".repeat(501)],
    ["categoryName", "c".repeat(500), "c".repeat(501)],
    ["productGroupId", "g".repeat(500), "g".repeat(501)],
    ["variantGroupId", "g".repeat(500), "g".repeat(501)],
    ["productName", "n".repeat(10_000), "n".repeat(10_001)],
    ["status", 7, 8],
    ["status", 1, 0],
    ["year", 9999, 10_000],
    ["moq", 0, -1],
    ["productionLeadTimeDays", 0, -1],
    ["shippingLeadTimeDays", 0, -1],
    ["startDate", "2026-03-01", "2026-02-30"],
  ])("%s: %p accepted, %p refused naming the field", (field, ok, bad) => {
    expect(refused(productCreateSchema, { ...product, [field]: ok })).toBeUndefined();
    expect(refused(productCreateSchema, { ...product, [field]: bad })).toEqual([field]);
    expect(refused(productUpdateSchema, { ...product, [field]: bad })).toEqual([field]);
  });

  it("key: required, trimmed, at most 500 characters", () => {
    expect(refused(productCreateSchema, {})).toEqual(["key"]);
    expect(refused(productCreateSchema, { key: "  " })).toEqual(["key"]);
    expect(refused(productCreateSchema, { key: "k".repeat(501) })).toEqual(["key"]);
    expect(productCreateSchema.parse({ key: " K1 " })).toMatchObject({ key: "K1" });
  });

  it("cost calculation values: key required, type 1 or 2, at most 1000", () => {
    const value = { key: "freight", type: 1 };
    expect(refused(productCreateSchema, { ...product, costCalculationValues: [value, { ...value, type: 2 }] })).toBeUndefined();
    expect(refused(productCreateSchema, { ...product, costCalculationValues: [{ ...value, type: 3 }] })).toEqual(["costCalculationValues.0.type"]);
    expect(refused(productCreateSchema, { ...product, costCalculationValues: [{ type: 1 }] })).toEqual(["costCalculationValues.0.key"]);
    expect(refused(productCreateSchema, { ...product, costCalculationValues: [{ ...value, externalReference: "r".repeat(501) }] })).toEqual(["costCalculationValues.0.externalReference"]);
    expect(refused(productCreateSchema, { ...product, costCalculationValues: Array(1001).fill(value) })).toEqual(["costCalculationValues"]);
  });

  it("read-only fields sent back as GET answered them are accepted; an unknown field is refused", () => {
    const echoed = { ...product, uuid: "u", brandId: 1, categoryId: 2, skuSynonyms: [], prices: [], createdAt: "x", updatedAt: "y" };
    expect(refused(productCreateSchema, echoed)).toBeUndefined();
    expect(refused(productCreateSchema, { ...product, seq: 1 })).toBeDefined();
  });

  it("key switches and image uploads: their required keys and bounds", () => {
    const keySwitch = { oldKey: "A", key: "B", sku: "S" };
    expect(refused(keySwitchSchema, keySwitch)).toBeUndefined();
    expect(refused(keySwitchSchema, { key: "B", sku: "S" })).toEqual(["oldKey"]);
    expect(refused(keySwitchSchema, { ...keySwitch, ean: "e".repeat(501) })).toEqual(["ean"]);
    const upload = { key: "P1", filename: "a.png", imageData: "iVBORw0KGgo=" };
    expect(refused(imageUploadSchema, upload)).toBeUndefined();
    expect(refused(imageUploadSchema, { ...upload, filename: "f".repeat(501) })).toEqual(["filename"]);
    expect(refused(imageUploadSchema, { ...upload, season: "s".repeat(501) })).toEqual(["season"]);
  });

  it("mapping types: the MappingType enum's REST names, and nothing else", () => {
    expect(mappingType.options).toEqual(["products", "transactions", "purchaseOrders", "distributionOrders", "stocks", "suppliers", "costCalculationValues"]);
    expect(mappingType.safeParse("orders").success).toBe(false);
  });
});
