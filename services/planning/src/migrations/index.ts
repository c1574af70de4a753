import type { Migration } from "@analytics/db";
import { inboxMigrations } from "@analytics/inbox";
import { outboxMigrations } from "@analytics/outbox";
import { createReplica } from "./001_planning";
import { replicaEpoch } from "./002_replica_epoch";
import { changedGroups } from "./003_changed_groups";
import { skuSeq } from "./004_sku_seq";
import { sales } from "./005_sales";
import { breakdownInputs } from "./006_breakdown_inputs";
import { changedGroupsPoVolume } from "./007_changed_groups_po_volume";
import { salesPlansKept } from "./008_sales_plans_kept";
import { accountVersions } from "./009_account_versions";
import { skuEan } from "./010_sku_ean";
import { timezoneNames } from "./011_timezone_names";
import { salesRollups } from "./012_sales_rollups";
import { skuMonths } from "./013_sku_months";
import { groupMonths } from "./014_group_months";

export const migrations: Migration[] = [...outboxMigrations, ...inboxMigrations, createReplica, replicaEpoch, changedGroups, skuSeq, sales, breakdownInputs, changedGroupsPoVolume, salesPlansKept, accountVersions, skuEan, timezoneNames, salesRollups, skuMonths, groupMonths];
