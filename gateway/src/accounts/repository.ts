import { randomUUID } from "node:crypto";
import { topics } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { enqueue, outboxEntry } from "@analytics/outbox";
import { isUuid } from "@analytics/db";

/** The channel on which a revocation is announced to every gateway replica (NOTIFY in its transaction; key-status.ts listens). */
export const REVOKED_CHANNEL = "gateway_api_key_revoked";

export interface AccountSettings {
  customPriceFields: string[];
  timezone: string;
  salesPlanGrowth: number;
  /** The account's token bucket (CONTRACT "Rate limits"): refill per second and size. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
}

export async function createAccount(db: Db, name: string, key: { apiKeyId: string; secretHash: string; name: string }) {
  const accountId = randomUUID();
  await db.transaction(async (tx) => {
    await tx("accounts").insert({ id: accountId, name });
    await tx("api_keys").insert({ id: key.apiKeyId, account_id: accountId, name: key.name, secret_hash: key.secretHash });
  });
  return accountId;
}

export async function accountExists(db: Db, accountId: string): Promise<boolean> {
  if (!isUuid(accountId)) return false;
  return Boolean(await db("accounts").where({ id: accountId }).first("id"));
}

export async function addApiKey(db: Db, accountId: string, key: { apiKeyId: string; secretHash: string; name: string }) {
  await db("api_keys").insert({ id: key.apiKeyId, account_id: accountId, name: key.name, secret_hash: key.secretHash });
}

/**
 * Revokes a key; false when the account has no such key. Every gateway replica hears of it when
 * the revocation commits (NOTIFY on the key-status channel, see key-status.ts).
 */
export async function revokeApiKey(db: Db, accountId: string, apiKeyId: string): Promise<boolean> {
  if (!isUuid(accountId) || !isUuid(apiKeyId)) return false;
  return db.transaction(async (tx) => {
    const rows = await tx("api_keys")
      .where({ id: apiKeyId, account_id: accountId })
      .update({ revoked_at: tx.raw("coalesce(revoked_at, now())") }, ["id"]);
    if (rows.length) await tx.raw("SELECT pg_notify(?, ?)", [REVOKED_CHANNEL, `${accountId}/${apiKeyId}`]);
    return rows.length > 0;
  });
}

/** The stored hash of an active key of the account, if there is one. */
export async function activeKeyHash(db: Db, accountId: string, apiKeyId: string): Promise<string | undefined> {
  if (!isUuid(accountId) || !isUuid(apiKeyId)) return undefined;
  const row = await db("api_keys").where({ id: apiKeyId, account_id: accountId }).whereNull("revoked_at").first("secret_hash");
  return row?.secret_hash;
}

/** Whether a key is still active (KeyStatusCache answers most requests without asking). */
export async function keyIsActive(db: Db, accountId: string, apiKeyId: string): Promise<boolean> {
  return (await activeKeyHash(db, accountId, apiKeyId)) !== undefined;
}

/**
 * Replaces an account's settings and, in the same transaction, announces them
 * (AccountSettingsChanged) to the services that keep a replica: pricing, planning.
 */
export async function updateSettings(db: Db, accountId: string, settings: AccountSettings): Promise<AccountSettings | undefined> {
  if (!isUuid(accountId)) return undefined;
  return db.transaction(async (tx) => {
    const [row] = await tx("accounts")
      .where({ id: accountId })
      .update({
        custom_price_fields: settings.customPriceFields,
        timezone: settings.timezone,
        sales_plan_growth: String(settings.salesPlanGrowth),
        rate_limit_per_second: settings.rateLimitPerSecond,
        rate_limit_burst: settings.rateLimitBurst,
        updated_at: tx.fn.now(),
        settings_version: tx.raw("settings_version + 1"),
      })
      .returning(["custom_price_fields", "timezone", "sales_plan_growth", "rate_limit_per_second", "rate_limit_burst", "settings_version"]);
    if (!row) return undefined;
    const stored = settingsOf(row);
    await enqueue(tx, [
      outboxEntry(topics.accountSettingsChanged, accountId, accountId, {
        accountId,
        version: BigInt(row.settings_version),
        customPriceFields: stored.customPriceFields ?? [],
        timezone: stored.timezone ?? "",
        // The digits as stored (numeric), not a float's.
        salesPlanGrowth: { value: row.sales_plan_growth },
      }),
    ]);
    return stored;
  });
}

export async function getSettings(db: Db, accountId: string): Promise<AccountSettings | undefined> {
  if (!isUuid(accountId)) return undefined;
  const row = await db("accounts").where({ id: accountId }).first("custom_price_fields", "timezone", "sales_plan_growth", "rate_limit_per_second", "rate_limit_burst");
  return row ? settingsOf(row) : undefined;
}

function settingsOf(row: {
  custom_price_fields: string[];
  timezone: string;
  sales_plan_growth: string;
  rate_limit_per_second: number;
  rate_limit_burst: number;
}): AccountSettings {
  return {
    customPriceFields: row.custom_price_fields,
    timezone: row.timezone,
    salesPlanGrowth: Number(row.sales_plan_growth),
    rateLimitPerSecond: row.rate_limit_per_second,
    rateLimitBurst: row.rate_limit_burst,
  };
}
