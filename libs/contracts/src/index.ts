// Generated protobuf-es v2 code for every proto under proto/ (npm run gen), with the contract's
// REST JSON conversion and value rules. Services and the gateway import messages, service
// descriptors and those rules from here; nothing else is shared between them.
export * from "./gen/common/v1/common_pb";
export * from "./gen/common/v1/imports_pb";
// Field rules (max length, bounds, read-only, column type) that REST schemas, checks and tables read.
export * from "./gen/common/v1/rules_pb";
export { fieldRules, restNames, restValues, webhookOnlyNames } from "./rules";
export * as catalogueV1 from "./gen/catalogue/v1/catalogue_pb";
export * as eventsV1 from "./gen/events/v1/events_pb";
export * as pricingV1 from "./gen/pricing/v1/pricing_pb";
export * as planningV1 from "./gen/planning/v1/planning_pb";
export * as inventoryV1 from "./gen/inventory/v1/inventory_pb";
export * as ordersV1 from "./gen/orders/v1/orders_pb";
// Integration events (bus messages) of each service, and the subjects that carry them.
export * as accountsMessagesV1 from "./gen/accounts/v1/messages_pb";
export * as catalogueMessagesV1 from "./gen/catalogue/v1/messages_pb";
export * as inventoryMessagesV1 from "./gen/inventory/v1/messages_pb";
export * as ordersMessagesV1 from "./gen/orders/v1/messages_pb";
export * as pricingMessagesV1 from "./gen/pricing/v1/messages_pb";
export * as topics from "./topics";
export type { Topic } from "./topics";
export { toRestJson, fromRestJson, stringifyRest, decimalFromNumber, decimalJson, RawJson, RestDecimal } from "./rest-json";
export { serviceRegistry, serviceNames, serviceUrlVariable, type ServiceName } from "./services";
export { isCurrencyCode } from "./values";
export {
  DO_CLIENT_FIELDS,
  PO_CLIENT_FIELDS,
  PO_ITEM_CLIENT_FIELDS,
  PRODUCT_CLIENT_FIELDS,
  TX_CLIENT_FIELDS,
  TX_ITEM_CLIENT_FIELDS,
  WHOLE_NUMBER_TEXT,
  distributionOrderToRest,
  productToRest,
  purchaseOrderToRest,
  stockTriggerToRest,
  transactionToRest,
} from "./client-view";
export { productPriceToRest } from "./product-price";
export { importToRest } from "./import-view";
