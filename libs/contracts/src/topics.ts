import type { DescMessage } from "@bufbuild/protobuf";
import { AccountSettingsChangedSchema } from "./gen/accounts/v1/messages_pb";
import { ImportFinishedSchema } from "./gen/common/v1/imports_pb";
import { BrandCreatedSchema, CategoryCreatedSchema, MappingTableChangedSchema, SkuChangedSchema } from "./gen/catalogue/v1/messages_pb";
import { StockTriggerChangedSchema, StockUpdatedSchema, StoreChangedSchema, StoreTrafficRecordedSchema, WarehouseChangedSchema } from "./gen/inventory/v1/messages_pb";
import { DistributionOrderChangedSchema, PurchaseOrderChangedSchema, TransactionChangedSchema } from "./gen/orders/v1/messages_pb";
import { FxRateChangedSchema, PriceChangedSchema, PriceListChangedSchema, PricatSkuChangedSchema } from "./gen/pricing/v1/messages_pb";

/**
 * A subject of the bus and the proto message every message on it carries. Subjects are
 * `analytics.<service>.<entity>.<verb>`; grep a constant below to find its producer and consumers.
 */
export interface Topic<D extends DescMessage = DescMessage> {
  readonly subject: string;
  readonly schema: D;
}

export function topic<D extends DescMessage>(subject: string, schema: D): Topic<D> {
  return { subject, schema };
}

// Accounts (the gateway).
export const accountSettingsChanged = topic("analytics.accounts.settings.changed", AccountSettingsChangedSchema);

// Imports (libs/rpc ImportJobs, run by whichever service owns the imported resource): one
// subject for every owner, so the events service reads one.
export const importFinished = topic("analytics.imports.import.finished", ImportFinishedSchema);

// Catalogue.
export const catalogueSkuCreated = topic("analytics.catalogue.sku.created", SkuChangedSchema);
export const catalogueSkuUpdated = topic("analytics.catalogue.sku.updated", SkuChangedSchema);
export const catalogueSkuKeySwitched = topic("analytics.catalogue.sku.key_switched", SkuChangedSchema);
export const catalogueSkuImageSet = topic("analytics.catalogue.sku.image_set", SkuChangedSchema);
export const catalogueBrandCreated = topic("analytics.catalogue.brand.created", BrandCreatedSchema);
export const catalogueCategoryCreated = topic("analytics.catalogue.category.created", CategoryCreatedSchema);
export const catalogueMappingTableCreated = topic("analytics.catalogue.mapping_table.created", MappingTableChangedSchema);
export const catalogueMappingTableUpdated = topic("analytics.catalogue.mapping_table.updated", MappingTableChangedSchema);
export const catalogueMappingTableDeleted = topic("analytics.catalogue.mapping_table.deleted", MappingTableChangedSchema);
/** Every change of a SKU, whatever its verb. */
export const catalogueSkuTopics = [catalogueSkuCreated, catalogueSkuUpdated, catalogueSkuKeySwitched, catalogueSkuImageSet];
/**
 * A product as stored, re-announced once (catalogue migration 005) so that planning's replica gets
 * the EAN of SKUs written before it kept EANs: their version is unchanged, planning fills the EAN
 * in. Planning's alone: it is no change for anyone else.
 */
export const catalogueSkuBackfilled = topic("analytics.catalogue.sku.backfilled", SkuChangedSchema);

// Pricing.
export const pricingPriceListCreated = topic("analytics.pricing.price_list.created", PriceListChangedSchema);
export const pricingPriceListUpdated = topic("analytics.pricing.price_list.updated", PriceListChangedSchema);
export const pricingPriceUpserted = topic("analytics.pricing.price.upserted", PriceChangedSchema);
export const pricingPriceDeleted = topic("analytics.pricing.price.deleted", PriceChangedSchema);
export const pricingFxRateCreated = topic("analytics.pricing.fx_rate.created", FxRateChangedSchema);
export const pricingFxRateClosed = topic("analytics.pricing.fx_rate.closed", FxRateChangedSchema);
export const pricingFxRateDeleted = topic("analytics.pricing.fx_rate.deleted", FxRateChangedSchema);
export const pricingPricatSkuUpserted = topic("analytics.pricing.pricat_sku.upserted", PricatSkuChangedSchema);
/** Every change of a price, whatever its verb. */
export const pricingPriceTopics = [pricingPriceUpserted, pricingPriceDeleted];

// Inventory.
export const inventoryWarehouseUpserted = topic("analytics.inventory.warehouse.upserted", WarehouseChangedSchema);
export const inventoryWarehouseDeleted = topic("analytics.inventory.warehouse.deleted", WarehouseChangedSchema);
export const inventoryStockUpdated = topic("analytics.inventory.stock.updated", StockUpdatedSchema);
export const inventoryStockTriggerCreated = topic("analytics.inventory.stock_trigger.created", StockTriggerChangedSchema);
export const inventoryStockTriggerUpdated = topic("analytics.inventory.stock_trigger.updated", StockTriggerChangedSchema);
/** Every change of a stock trigger, whatever its verb. */
export const inventoryStockTriggerTopics = [inventoryStockTriggerCreated, inventoryStockTriggerUpdated];
/**
 * A stock trigger as stored, re-announced once (inventory migration 004) so that planning's replica
 * gets those written before it read triggers. Planning's alone: it is no change for anyone else.
 */
export const inventoryStockTriggerBackfilled = topic("analytics.inventory.stock_trigger.backfilled", StockTriggerChangedSchema);
export const inventoryStoreUpserted = topic("analytics.inventory.store.upserted", StoreChangedSchema);
export const inventoryStoreDeleted = topic("analytics.inventory.store.deleted", StoreChangedSchema);
export const inventoryStoreTrafficRecorded = topic("analytics.inventory.store_traffic.recorded", StoreTrafficRecordedSchema);

// Orders.
export const ordersPurchaseOrderCreated = topic("analytics.orders.purchase_order.created", PurchaseOrderChangedSchema);
export const ordersPurchaseOrderUpdated = topic("analytics.orders.purchase_order.updated", PurchaseOrderChangedSchema);
export const ordersDistributionOrderCreated = topic("analytics.orders.distribution_order.created", DistributionOrderChangedSchema);
export const ordersDistributionOrderUpdated = topic("analytics.orders.distribution_order.updated", DistributionOrderChangedSchema);
export const ordersTransactionCreated = topic("analytics.orders.transaction.created", TransactionChangedSchema);
export const ordersTransactionUpdated = topic("analytics.orders.transaction.updated", TransactionChangedSchema);
/**
 * Distribution orders and transactions as stored, re-announced once (orders migration 007) so that
 * planning's replica gets those written before it read them (the stream keeps 7 days). Planning's
 * alone: they are no change for anyone else.
 */
export const ordersDistributionOrderBackfilled = topic("analytics.orders.distribution_order.backfilled", DistributionOrderChangedSchema);
export const ordersTransactionBackfilled = topic("analytics.orders.transaction.backfilled", TransactionChangedSchema);
