// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export type CreateAccountBody = {
  name: string;
};

export type CreateApiKeyBody = {
  name: string;
};

export type ReplaceAccountSettingsBody = {
  /** Default: []. */
  customPriceFields?: Array<string>;
  /** Default: "UTC". */
  timezone?: string;
  /** planning's year-over-year growth where no sales plan is stored: a month's plan is the same month's net units a year earlier times (1 + salesPlanGrowth); a decimal > -1 (0.1 = 10 % more) (Default: 0.) */
  salesPlanGrowth?: number;
  /** the account's rate limit: tokens its bucket gains per second (a read costs 1, a write 1 per item, at least 5) (Default: 100.) */
  rateLimitPerSecond?: number;
  /** the account's rate limit: the bucket's size, the most a burst may spend at once (Default: 6000.) */
  rateLimitBurst?: number;
};

/** Deployment administration: accounts, API keys and settings (only when ADMIN_TOKEN is set). */
export class Admin {
  constructor(private readonly client: Client) {}

  /** Create an account with its first API key (the secret is shown once) */
  createAccount(body: CreateAccountBody, options?: RequestOptions): Promise<{
    accountID: string;
    name: string;
    apiKeyId: string;
    apiKey: string;
  }> {
    return this.client.call<{
    accountID: string;
    name: string;
    apiKeyId: string;
    apiKey: string;
  }>({ method: "POST", path: `/admin/v1/accounts`, auth: "admin" }, undefined, body, options);
  }

  /** Issue another API key for an account */
  createApiKey(accountID: string, body: CreateApiKeyBody, options?: RequestOptions): Promise<{
    apiKeyId: string;
    apiKey: string;
  }> {
    return this.client.call<{
    apiKeyId: string;
    apiKey: string;
  }>({ method: "POST", path: `/admin/v1/accounts/${encodeURIComponent(accountID)}/keys`, auth: "admin" }, undefined, body, options);
  }

  /** Revoke an API key; its tokens stop working at once */
  revokeApiKey(accountID: string, apiKeyId: string, options?: RequestOptions): Promise<S.GeneralResponse> {
    return this.client.call<S.GeneralResponse>({ method: "DELETE", path: `/admin/v1/accounts/${encodeURIComponent(accountID)}/keys/${encodeURIComponent(apiKeyId)}`, auth: "admin" }, undefined, undefined, options);
  }

  /** Set an account's custom price fields, time zone and sales plan growth */
  replaceAccountSettings(accountID: string, body: ReplaceAccountSettingsBody, options?: RequestOptions): Promise<{
    customPriceFields: Array<string>;
    timezone: string;
    /** planning's year-over-year growth where no sales plan is stored: a month's plan is the same month's net units a year earlier times (1 + salesPlanGrowth); a decimal > -1 (0.1 = 10 % more) */
    salesPlanGrowth: number;
    /** the account's rate limit: tokens its bucket gains per second (a read costs 1, a write 1 per item, at least 5) */
    rateLimitPerSecond: number;
    /** the account's rate limit: the bucket's size, the most a burst may spend at once */
    rateLimitBurst: number;
  }> {
    return this.client.call<{
    customPriceFields: Array<string>;
    timezone: string;
    /** planning's year-over-year growth where no sales plan is stored: a month's plan is the same month's net units a year earlier times (1 + salesPlanGrowth); a decimal > -1 (0.1 = 10 % more) */
    salesPlanGrowth: number;
    /** the account's rate limit: tokens its bucket gains per second (a read costs 1, a write 1 per item, at least 5) */
    rateLimitPerSecond: number;
    /** the account's rate limit: the bucket's size, the most a burst may spend at once */
    rateLimitBurst: number;
  }>({ method: "PUT", path: `/admin/v1/accounts/${encodeURIComponent(accountID)}/settings`, auth: "admin" }, undefined, body, options);
  }

  /** Read an account's settings */
  getAccountSettings(accountID: string, options?: RequestOptions): Promise<{
    customPriceFields: Array<string>;
    timezone: string;
    /** planning's year-over-year growth where no sales plan is stored: a month's plan is the same month's net units a year earlier times (1 + salesPlanGrowth); a decimal > -1 (0.1 = 10 % more) */
    salesPlanGrowth: number;
    /** the account's rate limit: tokens its bucket gains per second (a read costs 1, a write 1 per item, at least 5) */
    rateLimitPerSecond: number;
    /** the account's rate limit: the bucket's size, the most a burst may spend at once */
    rateLimitBurst: number;
  }> {
    return this.client.call<{
    customPriceFields: Array<string>;
    timezone: string;
    /** planning's year-over-year growth where no sales plan is stored: a month's plan is the same month's net units a year earlier times (1 + salesPlanGrowth); a decimal > -1 (0.1 = 10 % more) */
    salesPlanGrowth: number;
    /** the account's rate limit: tokens its bucket gains per second (a read costs 1, a write 1 per item, at least 5) */
    rateLimitPerSecond: number;
    /** the account's rate limit: the bucket's size, the most a burst may spend at once */
    rateLimitBurst: number;
  }>({ method: "GET", path: `/admin/v1/accounts/${encodeURIComponent(accountID)}/settings`, auth: "admin" }, undefined, undefined, options);
  }
}
