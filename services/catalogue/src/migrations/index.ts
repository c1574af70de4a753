import type { Migration } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import { importJobColumns, importTables } from "@analytics/rpc";
import { createCatalogue } from "./001_catalogue";
import { productVersion } from "./002_product_version";
import { productPageIndex } from "./003_page_index";
import { accountVersions } from "./004_account_versions";
import { announceForPlanning } from "./005_announce_for_planning";

export const migrations: Migration[] = [...outboxMigrations, createCatalogue, productVersion, productPageIndex, accountVersions, announceForPlanning, importTables("006_import_jobs"), importJobColumns("007_import_job_columns")];
