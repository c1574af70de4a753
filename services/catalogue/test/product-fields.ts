/** The Product of the contract as REST answers it (productToRest), field for field. */
export const PRODUCT_FIELDS = [
  "id", "uuid", "key", "sku", "vendorSKU", "ean", "productName", "variantName", "status", "season", "year", "department", "gender",
  "ageGroup", "collection", "color", "size", "brandName", "categoryName", "subCategory", "productType", "merchandiseType",
  "supplier", "moq", ...Array.from({ length: 10 }, (_, n) => `pimCustom${n + 1}`), "productGroupId", "variantGroupId",
  "imageUrl", "startDate", "endDate", "productionLeadTimeDays", "shippingLeadTimeDays", "activePlanning",
  "costCalculationPrice", "costCalculationValues", "externalAttributes", "brandId", "categoryId", "skuSynonyms", "prices",
  "createdAt", "updatedAt",
].sort();
