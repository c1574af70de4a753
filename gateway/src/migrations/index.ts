import type { Migration } from "@analytics/db";
import { outboxMigrations } from "@analytics/outbox";
import { createAccounts } from "./001_accounts";
import { settingsVersion } from "./002_settings_outbox";
import { authFailures } from "./003_auth_failures";
import { salesPlanGrowth } from "./004_sales_plan_growth";
import { idempotencyKeys } from "./005_idempotency_keys";
import { rateLimits } from "./006_rate_limits";
import { rateLimitLeases } from "./007_rate_limit_leases";
import { idempotencyFileDigest } from "./008_idempotency_file_digest";

export const migrations: Migration[] = [...outboxMigrations, createAccounts, settingsVersion, authFailures, salesPlanGrowth, idempotencyKeys, rateLimits, rateLimitLeases, idempotencyFileDigest];
