/**
 * The published Go client (maddenutils) as the tests see it: the JSON names and Go types of its
 * structs, and a decoder that behaves as Go's encoding/json does when it decodes an answer into
 * them (keys matched exactly, then case-insensitively; unknown keys ignored; null leaves the zero
 * value; a number into an int must be whole, a string must be a string, a time.Time an RFC 3339
 * text). A mismatch throws, naming the path, as the client's json.Unmarshal would fail.
 */
export type GoType = "int" | "uint" | "uint8" | "float" | "string" | "bool" | "time" | "json" | GoType[] | { [field: string]: GoType };

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function decodeAs(type: GoType, value: unknown, path = "$"): void {
  if (value === null || type === "json") return;
  const fail = (want: string) => {
    throw new Error(`json: cannot unmarshal ${JSON.stringify(value)?.slice(0, 80)} into Go ${want} at ${path}`);
  };
  if (Array.isArray(type)) {
    if (!Array.isArray(value)) fail(`slice`);
    (value as unknown[]).forEach((v, i) => decodeAs(type[0], v, `${path}[${i}]`));
    return;
  }
  if (typeof type === "object") {
    if (typeof value !== "object" || Array.isArray(value)) fail("struct");
    const fields = Object.keys(type);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const field = fields.find((f) => f === k) ?? fields.find((f) => f.toLowerCase() === k.toLowerCase());
      if (field) decodeAs(type[field], v, `${path}.${k}`);
    }
    return;
  }
  switch (type) {
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) fail("int");
      return;
    case "uint":
    case "uint8":
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || (type === "uint8" && value > 255)) fail(type);
      return;
    case "float":
      if (typeof value !== "number") fail("float64");
      return;
    case "string":
      if (typeof value !== "string") fail("string");
      return;
    case "bool":
      if (typeof value !== "boolean") fail("bool");
      return;
    case "time":
      if (typeof value !== "string" || !RFC3339.test(value)) fail("time.Time");
      return;
  }
}

/** The value of `object` that the client's field `name` receives (exact name first, then any letter case). */
export function goField(object: Record<string, unknown>, name: string): unknown {
  if (name in object) return object[name];
  const key = Object.keys(object).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : object[key];
}

/** Decodes `body` as the client does and returns it, so a test can go on reading it. */
export function decoded<T = any>(type: GoType, body: unknown): T {
  decodeAs(type, body);
  return body as T;
}

const brand: GoType = { id: "uint", name: "string", synonyms: ["string"] };
const category: GoType = { id: "uint", name: "string" };

/** The client's structs (JSON name -> Go type). */
export const Go = {
  Product: {
    id: "int", productName: "string", variantName: "string", sku: "string", vendorSKU: "string", ean: "string", brandName: "string",
    categoryName: "string", subCategory: "string", collection: "string", season: "string", year: "string", size: "string", color: "string",
    ageGroup: "string", gender: "string", department: "string", productGroupID: "string", variantGroupID: "string", variantExternalID: "string",
    key: "string", skuSynonyms: ["string"], productType: "int", productID: "uint", variantID: "uint", info: "json", costPrice: "float",
    costCalculationPrice: "float",
    costCalculationValues: [{ key: "string", sort: "int", type: "int", fxRate: "float", currency: "string", monetaryValue: "float", percentageValue: "float", externalReference: "string" }],
    costPriceCurrency: "string", supplierPrice: "float", supplierPriceCurrency: "string", price: "float",
    prices: [{ customPrice1: "float", customPrice2: "float", customPrice3: "float", customPrice4: "float", listExternalID: "string", price: "float", vat: "float" }],
    priceCurrency: "string", priceIncludingVat: "bool", wholesalePrice: "float", wholesalePriceCurrency: "string", vatValue: "float", status: "uint8",
    activePlanning: "bool", leadTime: "int", supplier: "string", customFields: "json", externalAttributes: "json",
    additionalSuppliers: [{ supplier: "string", supplierPrice: "float", supplierPriceCurrency: "string", vatValue: "int", externalProductNumber: "string", externalSupplierID: "string", info: "json" }],
    unitVolume: "float", packSize: "int", weight: "float", moq: "int", imageUrl: "string",
  },
  SKU: {
    id: "int", productName: "string", productGroupID: "string", brand, category, productType: "int", info: "json", sku: "string", vendorSKU: "string",
    ean: "string", key: "string", skuSynonyms: [{ id: "int", FromKey: "string", FromAccountID: "string", skuId: "int", ToAccountID: "string" }],
    variantName: "string", size: "string", color: "string", collection: "string", season: "string", year: "string", ageGroup: "string", gender: "string",
    status: "uint8", variantGroupID: "string", externalID: "string", source: "int", costPrice: "int", costPriceCurrency: "string", price: "int",
    priceCurrency: "string", moq: "int", leadTime: "int", supplier: "string",
  },
  Brand: brand,
  Category: category,
  PurchaseOrder: {
    id: "int", orderDate: "time", deliveryStatus: "uint8", completedDate: "time", cancelledDate: "time", externalPurchaseNo: "string", label: "string",
    externalComment: "string", orderType: "string", deliveryWindow: "string", factory: "string", transportMethod: "string",
    items: [{
      deliveryDate: "time", externalWarehouseId: "string", productName: "string", sku: "string", ean: "string", key: "string", brandName: "string",
      quantity: "int", totalPriceNet: "float", totalPriceVat: "float", totalPriceCurrency: "string", supplier: "string", externalRowID: "string",
      deliveries: [{ quantity: "int", deliveryDate: "time", deliveryID: "string" }], revisedDeliveryDate: "time", departureDate: "time", revisedDepartureDate: "time",
      // Integrations read a line's product by its integer id, as every other resource gives it (CONTRACT.md, "Compatibility").
      skuId: "int",
    }],
  },
  DistributionOrder: {
    id: "uint", externalDistributionOrderId: "string", externalRowId: "string", key: "string", status: "string", orderDate: "time", shippedAt: "time",
    deliveryDate: "time", fromWarehouseExternalId: "string", toWarehouseExternalId: "string", quantity: "uint", deliveredQuantity: "uint",
    completedDate: "time", cancelledDate: "time", orderType: "string", deliveryWindow: "string", label: "string",
  },
  Transaction: {
    createdDate: "time", id: "int", completedDate: "time", cancelledDate: "time", externalStoreID: "string", externalTransactionID: "string",
    externalParentID: "string", currencyCode: "string", externalRowId: "string", market: "string", type: "uint8", channel: "uint8", customerName: "string",
    externalCustomerID: "string", deliveryDate: "time", externalInfo: "json",
    statements: [{ name: "string", type: "uint8", priceNet: "float", priceVat: "float", customFields: "json" }],
    orderType: "string", invoicedDate: "time",
    items: [{
      productName: "string", variantName: "string", sku: "string", ean: "string", key: "string", vendorSKU: "string", brandName: "string", supplier: "string",
      category: "string", collection: "string", season: "string", year: "string", size: "string", color: "string", ageGroup: "string", gender: "string",
      productGroupID: "string", variantGroupID: "string", quantity: "int", vatValue: "float", moneyItemTotalNet: "float", moneyItemTotalVat: "float",
      costPrice: "float", costPriceCurrency: "string", moneyDiscount: "float", externalID: "string", productType: "int", fulfillmentType: "int",
      shipments: [{ quantity: "int", shipmentDate: "time", shipmentID: "string", externalWarehouseID: "string" }], deliveryWindow: "string",
      customFields: "json", primaryWarehouseExternalID: "string", invoicedDate: "time", type: "uint8",
    }],
  },
  Stock: { sku: "string", ean: "string", key: "string", availableQuantity: "int", physicalQuantity: "int", supplier: "string", externalWarehouseID: "string", date: "time" },
  Store: {
    name: "string", externalStoreId: "string", channelType: "int", adress: "string", adress2: "string", zip: "string", city: "string", state: "string",
    countryCode: "string", currencyCode: "string", warehouses: [{ name: "string", externalId: "string" }],
  },
  StoreTrafficEvent: { id: "int", eventTime: "time", name: "string", storeID: "string", storeTrafficCounterID: "string", incomingTraffic: "int", outgoingTraffic: "int" },
  MappingTableResponse: { mappingField: "string", mappingType: "string", mappingValues: "json" },
  PriceList: { currency: "string", defaultPriceList: "bool", externalId: "string", name: "string" },
  Price: { currency: "string", customPrice1: "float", customPrice2: "float", customPrice3: "float", customPrice4: "float", listExternalID: "string", key: "string", price: "float", season: "string", vat: "float" },
  ExternalEvent: { id: "string", createdAt: "time", accountId: "string", eventType: "string", payload: "json", completedAt: "time", failedAt: "time" },
  Stocktrigger: {
    id: "int", warehouseID: "string", warehouseExternalId: "string", skuID: "int", sku: "string", key: "string", season: "string", startDate: "string",
    lastRestockDate: "string", preventRestock: "bool", lowerLimit: "json", min: "int", max: "int", upperLimit: "json", allowMinAuto: "bool",
    allowMaxAuto: "bool", minMaxSource: "string", minMaxUpdatedAt: "time",
  },
  Bearer: { tokenType: "string", accessToken: "string" },
  BatchResponse: { message: "string", reference: "string", referenceField: "string", statusCode: "int" },
} satisfies Record<string, GoType>;
