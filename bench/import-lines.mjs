// The lines bench/import.mjs imports and bench/import-floor.mjs runs the design's statements on,
// so that both measure the same rows: the i-th product and the i-th transaction (one item, naming
// one of 1000 keys).
export const product = (i) => ({ key: `SKU-${i}`, sku: `SKU-${i}`, productName: `Product ${Math.floor(i / 10)}`, season: "SS27", color: ["black", "white", "red"][i % 3], size: ["S", "M", "L", "XL"][i % 4] });
export const transaction = (i) => ({
  externalTransactionID: `T-${i}`,
  type: 1,
  channel: 1,
  currencyCode: "EUR",
  createdDate: "2026-11-01T10:00:00Z",
  items: [{ externalItemID: "1", key: `SKU-${i % 1000}`, quantity: 1, moneyItemTotalNet: 10, moneyItemTotalVat: 2.5 }],
});
