import type { Migration } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { createPricing } from "./001_pricing";
import { accountVersions } from "./002_account_versions";

export const migrations: Migration[] = [...outboxMigrations, ...inboxMigrations, createPricing, accountVersions];
