export { testDatabaseUrl, testNatsUrl, uniqueName, createdAt } from "./names";
export { sweepStaleTestResources } from "./sweep";

export { createTestBus, createTestDatabase, databaseExists, namedTestDatabase, type TestBus, type TestDatabase } from "./resources";

export { eventually, whileProgressing, type WaitOptions } from "./wait";


export { killAll, processesWith, runResources, type RunProcess } from "./run";
export { freezableProxy, type FreezableProxy } from "./proxy";
export { crossingTransactions } from "./deadlock";
export { readWhileAWriteCommits } from "./version-race";
export { jetStreamAnswers, startNatsCluster, type NatsCluster } from "./nats-cluster";
export { freePort } from "./ports";
export { databaseForFile, databaseAndStreamForFile, serviceUnderTest, subjectsUnder, codeOf, type DatabaseForFile, type DatabaseAndStreamForFile, type ServiceUnderTest } from "./per-file";
export {
  accountSettingsChanged,
  busMessage,
  distributionOrderChanged,
  stockTriggerChanged,
  type DistributionOrderInit,
  purchaseOrderChanged,
  skuUpdated,
  stockUpdated,
  transactionChanged,
  warehouseChanged,
  type LineInit,
  type SkuInit,
  type TransactionInit,
  type TransactionItemInit,
} from "./factories";
export { startWebhookReceiver, type ArrivedDelivery, type ReceivedDelivery, type WebhookReceiver, type WebhookReceiverOptions } from "./webhook-receiver";
export { checkResponse, type OpenApiDocument } from "./openapi-contract";
