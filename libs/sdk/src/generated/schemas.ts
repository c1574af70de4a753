// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
/* eslint-disable */

export type GeneralResponse = {
  statusCode: number;
  /** reason phrase of the status; empty on success */
  error: string;
  message: string;
  details?: Array<{
    path: string;
    message: string;
  }>;
  /** what the error is, stable and machine-readable; on every error answer (absent on a success). A code is never renamed; new ones may be added. `validation_failed` (400): the request is not valid; `details` names each wrong field; `unknown_field` (400): every wrong field is one this route does not t... */
  code?: "validation_failed" | "unknown_field" | "unauthenticated" | "forbidden" | "not_found" | "method_not_allowed" | "not_acceptable" | "conflict" | "idempotency_key_in_use" | "import_finished" | "gone" | "precondition_failed" | "payload_too_large" | "request_timeout" | "uri_too_long" | "unsupported_media_type" | "idempotency_key_reused" | "rate_limited" | "client_closed_request" | "internal" | "not_implemented" | "service_unavailable" | "outcome_unknown";
};

export type CompatibilitySku = {
  /** the product's integer id */
  id: number;
  /** the product's internal id */
  uuid: string;
  productName: string | null;
  productGroupID: string | null;
  brand: ({
    /** the integer id */
    id: number;
    name: string;
    synonyms: Array<string>;
  }) | null;
  category: ({
    /** the integer id */
    id: number;
    name: string;
  }) | null;
  /** the product type when it is a whole number, else null */
  productType: number | null;
  /** externalAttributes.info */
  info: unknown;
  sku: string | null;
  vendorSKU: string | null;
  ean: string | null;
  key: string;
  /** the product's old keys (FromKey), as the client's SkuSynonym */
  skuSynonyms: Array<{
    FromKey: string;
    FromAccountID: string;
    skuId: number;
    ToAccountID: string;
  }>;
  variantName: string | null;
  size: string | null;
  color: string | null;
  collection: string | null;
  season: string | null;
  year: string | null;
  ageGroup: string | null;
  gender: string | null;
  status: number;
  variantGroupID: string | null;
  /** externalAttributes.variantExternalID */
  externalID: string | null;
  /** externalAttributes.costPrice, rounded: the client's struct holds an integer */
  costPrice: number | null;
  costPriceCurrency: string | null;
  /** externalAttributes.price, rounded: the client's struct holds an integer */
  price: number | null;
  priceCurrency: string | null;
  moq: number | null;
  /** externalAttributes.leadTime, rounded */
  leadTime: number | null;
  supplier: string | null;
};

export type Product = {
  /** the integer id (accepted wherever a product id is) */
  id: number;
  /** the internal id; also accepted wherever a product id is */
  uuid: string;
  /** the business key, unique per account */
  key: string;
  sku: string | null;
  vendorSKU: string | null;
  ean: string | null;
  productName: string | null;
  variantName: string | null;
  status: number | null;
  season: string | null;
  /** text, as the published client reads it */
  year: string | null;
  department: string | null;
  gender: string | null;
  ageGroup: string | null;
  collection: string | null;
  color: string | null;
  size: string | null;
  brandName: string | null;
  categoryName: string | null;
  subCategory: string | null;
  /** a number when the stored type is a whole number */
  productType: (number | string) | null;
  merchandiseType: string | null;
  supplier: string | null;
  moq: number | null;
  pimCustom1: string | null;
  pimCustom2: string | null;
  pimCustom3: string | null;
  pimCustom4: string | null;
  pimCustom5: string | null;
  pimCustom6: string | null;
  pimCustom7: string | null;
  pimCustom8: string | null;
  pimCustom9: string | null;
  pimCustom10: string | null;
  productGroupId: string | null;
  variantGroupId: string | null;
  imageUrl: string | null;
  startDate: string | null;
  endDate: string | null;
  productionLeadTimeDays: number | null;
  shippingLeadTimeDays: number | null;
  activePlanning: boolean | null;
  costCalculationPrice: number | null;
  costCalculationValues: (Array<{
    key: string;
    sort: number;
    /** 1 monetary, 2 percent */
    type: 1 | 2;
    /** an ISO 4217 code, or "" */
    currency?: ("" | string) | null;
    monetaryValue?: number | null;
    percentageValue?: number | null;
    externalReference?: string | null;
    /** the published client's exchange rate of currency; kept and returned */
    fxRate?: number | null;
  }>) | null;
  externalAttributes: ({
    [key: string]: unknown;
  }) | null;
  /** the product's old keys */
  skuSynonyms: Array<string>;
  /** prices from all price lists */
  prices: Array<{
    listExternalID: string;
    price: number;
    currency: string;
    vat: number | null;
    customPrices: ({
      [key: string]: number;
    }) | null;
  }>;
  createdAt: string;
  updatedAt: string;
  /** the brand's integer id */
  brandId: number | null;
  /** the category's integer id */
  categoryId: number | null;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  variantExternalID?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  productID?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  variantID?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  info?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  costPrice?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  costPriceCurrency?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  supplierPrice?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  supplierPriceCurrency?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  price?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  priceCurrency?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  priceIncludingVat?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  wholesalePrice?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  wholesalePriceCurrency?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  vatValue?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  leadTime?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  customFields?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  additionalSuppliers?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  unitVolume?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  packSize?: unknown;
  /** sent by the published client, answered from externalAttributes under its name (when kept) */
  weight?: unknown;
};

export type BatchResponse = {
  message: string;
  /** the item's business key value as sent (its first 500 characters, where an invalid one is longer) */
  reference: string;
  /** the business key's field name */
  referenceField: string;
  /** 200 updated, 201 created, 400 invalid, 404 reference missing, 409 conflict */
  statusCode: number;
};

export type KeySwitchRequestInput = {
  /** the business key, unique per account */
  oldKey: string;
  /** the business key, unique per account */
  key: string;
  sku: string;
  ean?: string | null;
  season?: string | null;
  productGroupId?: string | null;
  variantGroupId?: string | null;
};

export type ImageUploadResponse = {
  key: string;
  imageUrl: string;
};

export type Brand = {
  /** the integer id */
  id: number;
  /** the internal id */
  uuid: string;
  name: string;
  synonyms: Array<string>;
};

export type Category = {
  /** the integer id */
  id: number;
  /** the internal id */
  uuid: string;
  name: string;
};

export type MappingTableResponse = {
  mappingField: string;
  mappingType: "products" | "transactions" | "purchaseOrders" | "distributionOrders" | "stocks" | "suppliers" | "costCalculationValues";
  mappingValues: {
    [key: string]: string;
  };
  updatedAt: string;
};

export type PriceList = {
  externalPriceListId: string;
  name: string;
  /** an ISO 4217 code (e.g. EUR) */
  currency: string;
  defaultPriceList: boolean;
  defaultVat: number;
  createdAt: string;
  updatedAt: string;
  /** externalPriceListId, under the published client's name */
  externalId: string;
};

export type PriceResponse = {
  listExternalID: string;
  /** the SKU's key or an old key */
  key: string;
  /** the SKU's (ignored on input) */
  sku: string | null;
  price: number;
  /** the price list's (ignored on input) */
  currency: string;
  vat: number;
  season: string | null;
  /** merged on write: keys not sent are kept */
  customPrices: {
    [key: string]: number;
  };
  /** customPrices of the account's 1. customPriceField, as the published client reads it */
  customPrice1: number | null;
  /** customPrices of the account's 2. customPriceField, as the published client reads it */
  customPrice2: number | null;
  /** customPrices of the account's 3. customPriceField, as the published client reads it */
  customPrice3: number | null;
  /** customPrices of the account's 4. customPriceField, as the published client reads it */
  customPrice4: number | null;
  updatedAt: string;
};

export type PriceUpdateRequestInput = {
  listExternalID: string;
  /** the SKU's key or an old key */
  key: string;
  /** read-only: the SKU's (ignored on input) */
  sku?: unknown;
  price: number;
  /** read-only: the price list's (ignored on input) */
  currency?: unknown;
  vat?: number | null;
  season?: string | null;
  /** merged on write: keys not sent are kept */
  customPrices?: ({
    [key: string]: number;
  }) | null;
  /** read-only */
  updatedAt?: unknown;
  /** the published client's custom price 1: the account's 1. customPriceField (a 400 when it has fewer); merged like customPrices */
  customPrice1?: number | null;
  /** the published client's custom price 2: the account's 2. customPriceField (a 400 when it has fewer); merged like customPrices */
  customPrice2?: number | null;
  /** the published client's custom price 3: the account's 3. customPriceField (a 400 when it has fewer); merged like customPrices */
  customPrice3?: number | null;
  /** the published client's custom price 4: the account's 4. customPriceField (a 400 when it has fewer); merged like customPrices */
  customPrice4?: number | null;
};

export type PriceDeleteRequestInput = {
  listExternalID: string;
  keys: Array<string>;
  season?: string | null;
};

export type FxRate = {
  id: number;
  externalReference: string;
  /** an ISO 4217 code (e.g. EUR) */
  fromCurrency: string;
  /** an ISO 4217 code (e.g. EUR) */
  toCurrency: string;
  /** greater than 0 */
  rate: number;
  fromDate: string;
  /** null or absent: open */
  toDate: string | null;
  exchangeDate: string | null;
};

export type Pricat = {
  externalId: string;
  name: string;
  supplierGln: string | null;
  supplierName: string | null;
  createdAt: string;
  updatedAt: string;
};

export type PricatSku = {
  /** the batch's pricat */
  pricatExternalId: string;
  sku: string;
  ean: string | null;
  season: string | null;
  productName: string | null;
  variantName: string | null;
  brand: string | null;
  category: string | null;
  color: string | null;
  size: string | null;
  gender: string | null;
  productGroupId: string | null;
  variantGroupId: string | null;
  imageUrl: string | null;
  vat: number | null;
  /** price name -> amount */
  prices: {
    [key: string]: number;
  };
  /** an ISO 4217 code (e.g. EUR) */
  currency: string | null;
  customFields: ({
    [key: string]: unknown;
  }) | null;
  externalAttributes: ({
    [key: string]: unknown;
  }) | null;
  /** prices.price, under the published client's name */
  price: number | null;
  /** prices.costPrice, under the published client's name */
  costPrice: number | null;
  /** currency, under the published client's name */
  priceCurrency: string | null;
  /** sent by the published client, kept in externalAttributes */
  supplier: unknown;
  /** sent by the published client, kept in externalAttributes */
  supplierGLN: unknown;
  /** sent by the published client, kept in externalAttributes */
  costPriceCurrency: unknown;
  /** sent by the published client, kept in externalAttributes */
  info: unknown;
};

export type PricatSkuUpsertInput = {
  /** read-only: the batch's pricat */
  pricatExternalId?: unknown;
  sku: string;
  ean?: string | null;
  season?: string | null;
  productName?: string | null;
  variantName?: string | null;
  brand?: string | null;
  category?: string | null;
  color?: string | null;
  size?: string | null;
  gender?: string | null;
  productGroupId?: string | null;
  variantGroupId?: string | null;
  imageUrl?: string | null;
  vat?: number | null;
  /** price name -> amount */
  prices?: ({
    [key: string]: number;
  }) | null;
  /** an ISO 4217 code (e.g. EUR) */
  currency?: string | null;
  customFields?: ({
    [key: string]: unknown;
  }) | null;
  externalAttributes?: ({
    [key: string]: unknown;
  }) | null;
  /** sent by the published client; the row's price named price (prices.price) */
  price?: number | null;
  /** sent by the published client; the row's price named costPrice (prices.costPrice) */
  costPrice?: number | null;
  /** sent by the published client; the row's currency when currency is not sent */
  priceCurrency?: (string | "") | null;
  /** sent by the published client; kept in externalAttributes */
  supplier?: string | null;
  /** sent by the published client; kept in externalAttributes */
  supplierGLN?: string | null;
  /** sent by the published client; kept in externalAttributes */
  costPriceCurrency?: string | null;
  /** sent by the published client; kept in externalAttributes */
  info?: ({
    [key: string]: unknown;
  }) | null;
};

export type Event = {
  id: string;
  accountId: string;
  eventType: "update_sku" | "draft_po_change" | "sku_warehouse_settings_change";
  /** the resource as a GET returns it */
  payload: unknown;
  createdAt: string;
  completedAt: string | null;
  failedAt: string | null;
};

export type EventStatusResult = {
  id: string;
  updated: boolean;
};

/** a queue entry pushed; `data` is the entry exactly as GET /v2/api/events answers it */
export type WebhookQueueEntry = {
  /** the entry's id, also the webhook-id header */
  id: string;
  /** the entry's eventType */
  type: "update_sku" | "draft_po_change" | "sku_warehouse_settings_change";
  /** when the entry was queued (its createdAt) */
  timestamp: string;
  data: Event;
};

/** an import job that reached a final state; `data` is the job exactly as GET /v2/api/imports/{id} answers it */
export type WebhookImportFinished = {
  /** the event's id, also the webhook-id header */
  id: string;
  type: "import.finished";
  /** when the events service made the event, once the job had ended */
  timestamp: string;
  data: Import;
};

export type Import = {
  id: string;
  resource: string;
  format: "ndjson" | "csv";
  status: "queued" | "running" | "completed" | "completed_with_errors" | "failed" | "cancelled";
  /** null until the whole file has arrived */
  linesTotal: number | null;
  linesProcessed: number;
  linesSucceeded: number;
  linesFailed: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** results are kept 7 days after the job ends; then GET .../results is a 410 */
  resultsExpireAt: string | null;
  /** why a failed job failed (naming the line), or empty */
  message: string;
};

export type WebhookEndpointWithSecret = {
  id: string;
  /** https:// URL of a public address */
  url: string;
  /** the types pushed; empty (or left out of a write): every type */
  eventTypes: Array<"update_sku" | "draft_po_change" | "sku_warehouse_settings_change" | "import.finished">;
  description: string;
  enabled: boolean;
  /** gone (the endpoint answered 410), failing (5 days of failed attempts) or by request */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
  /** "whsec_" + base64: the signing secret, answered only when the endpoint is created and when its secret is rotated. A replay of those answers (the same Idempotency-Key) leaves it out and says so in `Idempotent-Redacted: secret`: it is never kept; rotate it if the first answer was lost */
  secret?: string;
};

export type WebhookEndpoint = {
  id: string;
  /** https:// URL of a public address */
  url: string;
  /** the types pushed; empty (or left out of a write): every type */
  eventTypes: Array<"update_sku" | "draft_po_change" | "sku_warehouse_settings_change" | "import.finished">;
  description: string;
  enabled: boolean;
  /** gone (the endpoint answered 410), failing (5 days of failed attempts) or by request */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
};

export type WebhookDelivery = {
  id: string;
  /** the queue entry, also the webhook-id header */
  eventId: string;
  eventType: "update_sku" | "draft_po_change" | "sku_warehouse_settings_change" | "import.finished";
  /** failed: every attempt of the retry schedule failed */
  status: "pending" | "delivered" | "failed";
  /** attempts made */
  attempt: number;
  /** the last attempt's answer */
  statusCode: number | null;
  /** the last attempt's duration */
  durationMs: number | null;
  /** why the last attempt got no answer */
  error: string | null;
  lastAttemptAt: string | null;
  /** when the next attempt is due, while pending */
  nextRetryAt: string | null;
  createdAt: string;
  /** every attempt, oldest first (kept with the delivery, at most the last 20: the schedule makes 8, a manual retry starts it over) */
  attempts: Array<WebhookAttempt>;
};

export type WebhookAttempt = {
  /** 1-based; a manual retry starts the count over */
  attempt: number;
  attemptedAt: string;
  /** the answer's status; null when none came */
  statusCode: number | null;
  durationMs: number | null;
  /** why no answer came (refused address, timeout, connection error) */
  error: string | null;
  /** the next attempt scheduled after this one; null after a success, a 410 or the last attempt */
  nextRetryAt: string | null;
};

export type SalesPlanRow = {
  /** the season, productGroupId, variantGroupId or SKU key */
  groupKey: string;
  /** 1 D2C, 2 B2B */
  channel: number;
  /** one entry per period overlapping fromDate..toDate, in order, none left out */
  periods: Array<SalesPlanPeriod>;
};

export type SalesPlanPeriod = {
  /** the period's first day, YYYY-MM-DD */
  periodStart: string;
  /** the period's last day (inclusive), YYYY-MM-DD */
  periodEnd: string;
  /** units planned: the stored plan of the SKU, channel and month (a week: its days' share of its months' plans), else the year-over-year baseline (net units sold in the same month a year earlier, times 1 + salesPlanGrowth) */
  salesPlanVolume: number | null;
  /** net units sold (sale items minus return items) of transactions created in the period and not cancelled, in the selected channels */
  salesActualVolume: number | null;
  /** 0..1: the part of salesPlanVolume that comes from stored plans rather than the baseline */
  storedPlanShare: number | null;
};

export type BreakdownRow = {
  /** the season, productGroupId, variantGroupId or SKU key */
  groupKey: string;
  /** one entry per period overlapping fromDate..toDate, in order, none left out */
  periods: Array<BreakdownPeriod>;
};

export type BreakdownPeriod = {
  /** the period's first day, YYYY-MM-DD */
  periodStart: string;
  /** the period's last day (inclusive), YYYY-MM-DD */
  periodEnd: string;
  /** the projection's opening stock: the current stock in the current period, the previous period's closing after it; null in periods that ended before the current one */
  openingStockVolume: number | null;
  /** units planned: the stored plan of the SKU, channel and month (a week: its days' share of its months' plans), else the year-over-year baseline (net units sold in the same month a year earlier, times 1 + salesPlanGrowth) */
  salesPlanVolume: number | null;
  /** net units sold (sale items minus return items) of transactions created in the period and not cancelled, in the selected channels */
  salesActualVolume: number | null;
  /** open quantity of non-cancelled, non-draft PO lines delivered in the period */
  poVolume: number | null;
  /** open quantity of draft PO lines delivered in the period */
  draftPOVolume: number | null;
  /** openingStockVolume + poVolume + draftPOVolume - the remaining plan (in the current period max(0, salesPlanVolume - salesActualVolume), later the whole plan); may be below zero; null in periods that ended before the current one */
  closingStockVolume: number | null;
  /** the sum of the stock triggers' min over the group's SKU and warehouse pairs (0 where none); null in periods that ended before the current one */
  targetStockVolume: number | null;
  /** max(0, remaining plan + targetStockVolume - openingStockVolume - poVolume): what is still to buy; null in periods that ended before the current one */
  openToBuyVolume: number | null;
};

export type BreakdownWarehouseRow = {
  /** the season, productGroupId, variantGroupId or SKU key */
  groupKey: string;
  /** the warehouse ID; "" for volume without a (known) warehouse */
  warehouseId: string;
  warehouseName: string;
  /** one entry per period overlapping fromDate..toDate, in order, none left out */
  periods: Array<BreakdownWarehousePeriod>;
};

export type BreakdownWarehousePeriod = {
  /** the period's first day, YYYY-MM-DD */
  periodStart: string;
  /** the period's last day (inclusive), YYYY-MM-DD */
  periodEnd: string;
  /** the projection's opening stock: the current stock in the current period, the previous period's closing after it; null in periods that ended before the current one */
  openingStockVolume: number | null;
  /** units planned: the stored plan of the SKU, channel and month (a week: its days' share of its months' plans), else the year-over-year baseline (net units sold in the same month a year earlier, times 1 + salesPlanGrowth) */
  salesPlanVolume: number | null;
  /** net units sold (sale items minus return items) of transactions created in the period and not cancelled, in the selected channels */
  salesActualVolume: number | null;
  /** open quantity of non-cancelled, non-draft PO lines delivered in the period */
  poVolume: number | null;
  /** open quantity of draft PO lines delivered in the period */
  draftPOVolume: number | null;
  /** openingStockVolume + poVolume + draftPOVolume - the remaining plan (in the current period max(0, salesPlanVolume - salesActualVolume), later the whole plan); may be below zero; null in periods that ended before the current one */
  closingStockVolume: number | null;
  /** the sum of the stock triggers' min over the group's SKU and warehouse pairs (0 where none); null in periods that ended before the current one */
  targetStockVolume: number | null;
  /** max(0, remaining plan + targetStockVolume - openingStockVolume - poVolume): what is still to buy; null in periods that ended before the current one */
  openToBuyVolume: number | null;
  /** open distribution-order quantity (quantity - deliveredQuantity, rows neither COMPLETED nor CANCELLED) into the warehouse, delivered in the period; part of its closing stock */
  transferInVolume: number | null;
  /** open distribution-order quantity out of the warehouse, delivered in the period; part of its closing stock */
  transferOutVolume: number | null;
};

export type PlannedVolumeRow = {
  /** the season, productGroupId, variantGroupId or SKU key */
  groupKey: string;
  /** available stock */
  stockVolume: number;
  /** open quantity of non-cancelled, non-draft orders delivered in the window */
  poVolume: number;
  /** open quantity of draft orders delivered in the window */
  draftPOVolume: number;
};

export type SalesPlanWriteInput = {
  /** the product's key */
  key: string;
  /** 1 D2C, 2 B2B */
  channel: number;
  /** YYYY-MM */
  month: string;
  /** units planned for the month (>= 0); null removes the stored plan, and the month's plan is the year-over-year baseline again */
  volume: number | null;
};

export type PlannedVolumeWarehouseRow = {
  /** the season, productGroupId, variantGroupId or SKU key */
  groupKey: string;
  /** the warehouse ID; "" for PO volume without a (known) warehouse */
  warehouseId: string;
  warehouseName: string;
  /** available stock */
  stockVolume: number;
  /** open quantity of non-cancelled, non-draft orders delivered in the window */
  poVolume: number;
  /** open quantity of draft orders delivered in the window */
  draftPOVolume: number;
};

export type Warehouse = {
  ID: string;
  externalId: string;
  name: string;
  centralWarehouse: boolean;
  createdAt: string;
  updatedAt: string;
};

export type WarehouseUpsertInput = {
  /** read-only */
  ID?: unknown;
  externalId: string;
  /** Default: "". */
  name?: string;
  /** Default: false. */
  centralWarehouse?: boolean;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export type StockRow = {
  key: string;
  sku: string | null;
  ean: string | null;
  supplier: string | null;
  availableQuantity: number;
  physicalQuantity: number;
  date: string;
  externalWarehouseID: string;
  skuId: string;
  warehouseId: string;
  updatedAt: string;
};

export type StockRowWriteInput = {
  key?: string | null;
  sku?: string | null;
  ean?: string | null;
  supplier?: string | null;
  availableQuantity: number;
  /** Default: 0. */
  physicalQuantity?: number;
  /** RFC 3339; the snapshot's time, at most a day in the future */
  date: string;
  /** required unless the path names the warehouse */
  externalWarehouseID?: string;
  /** read-only */
  skuId?: unknown;
  /** read-only */
  warehouseId?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export type PurchaseOrder = {
  /** the integer id (accepted as `id` by PUT) */
  id: number;
  /** required; the {externalPurchaseNo} of GET */
  externalPONo: string;
  orderDate: string | null;
  deliveryDate: string | null;
  /** 0 not delivered (default), 1 partially delivered, 2 fully delivered, 3 cancelled, 4 draft, 5 open */
  deliveryStatus: number;
  externalComment: string | null;
  externalWarehouseID: string | null;
  supplier: string | null;
  label: string | null;
  orderType: string | null;
  items: Array<{
    /** kept for a row whose externalRowID stays */
    id: string;
    /** unique within the order */
    externalRowID: string | null;
    key: string | null;
    sku: string | null;
    ean: string | null;
    season: string | null;
    /** the product's integer id (its `id`) that the item's key, sku or ean names */
    skuId: number | null;
    quantity: number;
    /** overrides the order's */
    deliveryDate: string | null;
    /** overrides the order's */
    externalWarehouseID: string | null;
    totalPriceNet: number | null;
    totalPriceVat: number | null;
    totalPriceCurrency: string | null;
    deliveries: Array<{
      deliveryID: string | null;
      quantity: number;
      deliveryDate: string | null;
    }>;
    /** the sum of the deliveries */
    deliveredQuantity: number;
    /** the published client's additional fields, as sent */
    attributes: ({
      [key: string]: unknown;
    }) | null;
    /** the product's internal id */
    skuUuid: string;
    /** the published client's field, from attributes (when kept) */
    productName?: unknown;
    /** the published client's field, from attributes (when kept) */
    brandName?: unknown;
    /** the published client's field, from attributes (when kept) */
    supplier?: unknown;
    /** the published client's field, from attributes (when kept) */
    revisedDeliveryDate?: unknown;
    /** the published client's field, from attributes (when kept) */
    departureDate?: unknown;
    /** the published client's field, from attributes (when kept) */
    revisedDepartureDate?: unknown;
  }>;
  /** the API key that created the order */
  apiKeyId: string;
  createdAt: string;
  updatedAt: string;
  /** the published client's additional fields, as sent */
  attributes: ({
    [key: string]: unknown;
  }) | null;
  /** the internal id (also accepted as `id` by PUT) */
  uuid: string;
  /** externalPONo, under the published client's name */
  externalPurchaseNo: string;
  /** the published client's field, from attributes (when kept) */
  completedDate?: unknown;
  /** the published client's field, from attributes (when kept) */
  cancelledDate?: unknown;
  /** the published client's field, from attributes (when kept) */
  deliveryWindow?: unknown;
  /** the published client's field, from attributes (when kept) */
  factory?: unknown;
  /** the published client's field, from attributes (when kept) */
  transportMethod?: unknown;
};

export type Store = {
  externalStoreId: string;
  name: string;
  trafficCounterID: string | null;
  /** 1 D2C, 2 B2B; 0 (the published client's unset) or null is none */
  channelType: number | null;
  address: string | null;
  address2: string | null;
  zip: string | null;
  city: string | null;
  state: string | null;
  countryCode: string | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode: string | null;
  /** the store's warehouses as the published client reads them */
  warehouses: Array<{
    externalId: string;
    name: string;
  }>;
  createdAt: string;
  updatedAt: string;
  /** the published client's spelling of address */
  adress: string | null;
  /** the published client's spelling of address2 */
  adress2: string | null;
};

export type StoreUpsertInput = {
  externalStoreId: string;
  /** Default: "". */
  name?: string;
  trafficCounterID?: string | null;
  /** 1 D2C, 2 B2B; 0 (the published client's unset) or null is none */
  channelType?: (0 | 1 | 2) | null;
  address?: string | null;
  address2?: string | null;
  zip?: string | null;
  city?: string | null;
  state?: string | null;
  countryCode?: string | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode?: string | null;
  /** warehouses by externalId, or as the published client sends them ({name, externalId}, name ignored; null for none); an unknown one is a 400 */
  warehouses?: (Array<string | ({
    externalId: string;
    name?: unknown;
  })>) | null;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export type StoreTrafficEventResource = {
  storeTrafficCounterID: string;
  eventTime: string;
  incomingTraffic: number;
  outgoingTraffic: number;
  name: string | null;
  storeID: string | null;
};

export type StoreTrafficEventInput = {
  storeTrafficCounterID: string;
  /** RFC 3339 */
  eventTime: string;
  incomingTraffic: number;
  outgoingTraffic: number;
  name?: string | null;
  storeID?: string | null;
};

export type StockTriggerResource = {
  ID: number;
  warehouseId: string;
  warehouseExternalId: string;
  /** the product's integer id (null for a trigger not written since products had one) */
  skuId: number | null;
  sku: string | null;
  /** the SKU's key (or an old key) */
  key: string;
  season: string | null;
  startDate: string | null;
  lastRestockDate: string | null;
  preventRestock: boolean;
  lowerLimit: number | null;
  min: number | null;
  max: number | null;
  upperLimit: number | null;
  allowMinAuto: boolean;
  allowMaxAuto: boolean;
  minMaxSource: string | null;
  minMaxUpdatedAt: string | null;
  /** the product's internal id */
  skuUuid: string;
};

export type StockTriggerWriteInput = {
  /** read-only */
  ID?: unknown;
  warehouseId?: "" | string;
  warehouseExternalId?: "" | string;
  /** read-only */
  skuId?: unknown;
  sku?: string | null;
  /** the SKU's key (or an old key) */
  key: string;
  season?: string | null;
  startDate?: ("" | string) | null;
  lastRestockDate?: ("" | string) | null;
  /** Default: false. */
  preventRestock?: boolean;
  lowerLimit?: number | null;
  min?: number | null;
  max?: number | null;
  upperLimit?: number | null;
  /** Default: false. */
  allowMinAuto?: boolean;
  /** Default: false. */
  allowMaxAuto?: boolean;
  minMaxSource?: string | null;
  minMaxUpdatedAt?: string | null;
  /** read-only */
  skuUuid?: unknown;
};

export type DistributionOrder = {
  /** the integer id (accepted as `id` by PUT) */
  id: number;
  externalDOID: string;
  externalRowID: string;
  externalComment: string | null;
  season: string | null;
  key: string | null;
  sku: string | null;
  orderDate: string | null;
  deliveryDate: string | null;
  fromWarehouseExternalId: string | null;
  toWarehouseExternalId: string | null;
  quantity: number;
  allocatedQuantity: number;
  shippedAt: string | null;
  deliveredQuantity: number;
  completedDate: string | null;
  cancelledDate: string | null;
  status: "PROCESSING" | "ALLOCATED" | "IN TRANSIT" | "COMPLETED" | "CANCELLED";
  createdAt: string;
  updatedAt: string;
  /** the published client's additional fields, as sent */
  attributes: ({
    [key: string]: unknown;
  }) | null;
  /** the internal id (also accepted as `id` by PUT) */
  uuid: string;
  /** externalDOID, under the published client's name */
  externalDistributionOrderId: string;
  /** the published client's field, from attributes (when kept) */
  orderType?: unknown;
  /** the published client's field, from attributes (when kept) */
  deliveryWindow?: unknown;
  /** the published client's field, from attributes (when kept) */
  label?: unknown;
};

export type Transaction = {
  /** the integer id (accepted as `id` by PUT) */
  id: number;
  externalTransactionID: string;
  externalRowID: string | null;
  externalParentID: string | null;
  externalCustomerID: string | null;
  externalStoreID: string | null;
  externalInfo: string | null;
  customerName: string | null;
  /** 1 D2C, 2 B2B */
  channel: number | null;
  market: string | null;
  /** 1 sale, 2 return */
  type: number | null;
  /** ISO 4217 (e.g. SEK) */
  currencyCode: string | null;
  createdDate: string | null;
  completedDate: string | null;
  cancelledDate: string | null;
  deliveryDate: string | null;
  items: Array<{
    externalItemID: string;
    key: string | null;
    sku: string | null;
    ean: string | null;
    productName: string | null;
    quantity: number;
    vatValue: number | null;
    moneyItemTotalNet: number | null;
    moneyItemTotalVat: number | null;
    moneyDiscountIncVat: number | null;
    department: string | null;
    deliveryDate: string | null;
    /** 1 sale, 2 return */
    type: number | null;
    customFields: ({
      [key: string]: unknown;
    }) | null;
    /** added by POST .../shipments */
    shipments: Array<{
      shipmentID: string | null;
      quantity: number;
      shipmentDate: string | null;
      externalWarehouseID: string | null;
    }>;
    /** the published client's additional fields, as sent */
    attributes: ({
      [key: string]: unknown;
    }) | null;
    /** externalItemID, under the published client's name */
    externalID: string;
    /** the published client's field, from attributes (when kept) */
    variantName?: unknown;
    /** the published client's field, from attributes (when kept) */
    vendorSKU?: unknown;
    /** the published client's field, from attributes (when kept) */
    brandName?: unknown;
    /** the published client's field, from attributes (when kept) */
    supplier?: unknown;
    /** the published client's field, from attributes (when kept) */
    category?: unknown;
    /** the published client's field, from attributes (when kept) */
    collection?: unknown;
    /** the published client's field, from attributes (when kept) */
    season?: unknown;
    /** the published client's field, from attributes (when kept) */
    year?: unknown;
    /** the published client's field, from attributes (when kept) */
    size?: unknown;
    /** the published client's field, from attributes (when kept) */
    color?: unknown;
    /** the published client's field, from attributes (when kept) */
    ageGroup?: unknown;
    /** the published client's field, from attributes (when kept) */
    gender?: unknown;
    /** the published client's field, from attributes (when kept) */
    productGroupID?: unknown;
    /** the published client's field, from attributes (when kept) */
    variantGroupID?: unknown;
    /** the published client's field, from attributes (when kept) */
    costPrice?: unknown;
    /** the published client's field, from attributes (when kept) */
    costPriceCurrency?: unknown;
    /** the published client's field, from attributes (when kept) */
    moneyDiscount?: unknown;
    /** the published client's field, from attributes (when kept) */
    productType?: unknown;
    /** the published client's field, from attributes (when kept) */
    fulfillmentType?: unknown;
    /** the published client's field, from attributes (when kept) */
    deliveryWindow?: unknown;
    /** the published client's field, from attributes (when kept) */
    primaryWarehouseExternalID?: unknown;
    /** the published client's field, from attributes (when kept) */
    invoicedDate?: unknown;
  }>;
  statements: Array<{
    name: string | null;
    /** 1 fee, 2 voucher, 3 shipping, 4 service, 5 cart discount */
    type: number | null;
    priceNet: number | null;
    priceVat: number | null;
    invoicedDate: string | null;
    customFields: ({
      [key: string]: unknown;
    }) | null;
  }>;
  createdAt: string;
  updatedAt: string;
  /** the published client's additional fields, as sent */
  attributes: ({
    [key: string]: unknown;
  }) | null;
  /** the internal id (also accepted as `id` by PUT) */
  uuid: string;
  /** the published client's field, from attributes (when kept) */
  orderType?: unknown;
  /** the published client's field, from attributes (when kept) */
  invoicedDate?: unknown;
};

export type ImportLineResult = {
  message: string;
  /** the item's business key value as sent (its first 500 characters, where an invalid one is longer) */
  reference: string;
  /** the business key's field name */
  referenceField: string;
  /** 200 updated, 201 created, 400 invalid, 404 reference missing, 409 conflict */
  statusCode: number;
  /** the input line, from 1 */
  line: number;
};
