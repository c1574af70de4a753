import type { Migration } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { importJobColumns, importTables } from "@analytics/rpc";
import { createPricing } from "./001_pricing";
import { accountVersions } from "./002_account_versions";

export const migrations: Migration[] = [...outboxMigrations, ...inboxMigrations, createPricing, accountVersions, importTables("003_import_jobs"), importJobColumns("004_import_job_columns")];
