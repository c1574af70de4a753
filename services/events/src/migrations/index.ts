import type { Migration } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { createEvents } from "./001_events";
import { eventPageIndexes } from "./002_page_index";
import { productReplica } from "./003_product_replica";
import { priceEntries } from "./004_price_entries";
import { aggregateVersions } from "./005_aggregate_versions";
import { webhooks } from "./006_webhooks";
import { accountVersions } from "./007_account_versions";
import { queuedVersions } from "./008_queued_versions";
import { accountVersionsSchema } from "./009_account_versions_schema";
import { webhookAttempts } from "./010_webhook_attempts";
import { webhookRounds } from "./011_webhook_rounds";
import { queuedVersionsPruned } from "./012_queued_versions_pruned";
import { webhookFairClaims } from "./013_webhook_fair_claims";
import { queueSequences } from "./014_queue_sequences";

export const migrations: Migration[] = [...outboxMigrations, ...inboxMigrations, createEvents, eventPageIndexes, productReplica, priceEntries, aggregateVersions, webhooks, accountVersions, queuedVersions, accountVersionsSchema, webhookAttempts, webhookRounds, queuedVersionsPruned, webhookFairClaims, queueSequences];
