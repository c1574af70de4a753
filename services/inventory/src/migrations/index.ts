import type { Migration } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import { importJobColumns, importTables } from "@analytics/rpc";
import { createInventory } from "./001_inventory";
import { storesTrafficTriggers } from "./002_stores_traffic_triggers";
import { triggerSkuSeq } from "./003_trigger_sku_seq";
import { announceForPlanning } from "./004_announce_for_planning";
import { accountVersions } from "./005_account_versions";

export const migrations: Migration[] = [...outboxMigrations, createInventory, storesTrafficTriggers, triggerSkuSeq, announceForPlanning, accountVersions, importTables("006_import_jobs"), importJobColumns("007_import_job_columns")];
