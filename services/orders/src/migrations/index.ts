import type { Migration } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import { importJobColumns, importTables } from "@analytics/rpc";
import { createOrders } from "./001_orders";
import { createDistributionOrders } from "./002_distribution_orders";
import { createTransactions } from "./003_transactions";
import { purchaseOrderContentHash } from "./004_content_hash";
import { clientAttributes } from "./005_client_attributes";
import { itemSkuSeq } from "./006_item_sku_seq";
import { announceForPlanning } from "./007_announce_for_planning";
import { accountVersions } from "./008_account_versions";

export const migrations: Migration[] = [...outboxMigrations, createOrders, createDistributionOrders, createTransactions, purchaseOrderContentHash, clientAttributes, itemSkuSeq, announceForPlanning, accountVersions, importTables("009_import_jobs"), importJobColumns("010_import_job_columns")];
