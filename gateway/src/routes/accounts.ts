import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { sameSecret, type Caller } from "@analytics/auth";
import { isUuid, type Db } from "@analytics/db";
import { generalResponse } from "@analytics/errors";
import { HttpError } from "../http/errors";
import { documentAs } from "../http/openapi";
import { route, type RouteContext } from "../pipeline/route";
import { generalResponseSchema } from "../http/schemas";
import { newApiKey, secretMatches, splitApiKey } from "../accounts/api-keys";
import { FailureLimiter, type Brake } from "../limits/failure-limiter";
import * as accounts from "../accounts/repository";
import { TokenIssuer } from "../accounts/tokens";
import type { KeyStatusCache } from "../accounts/key-status";

export interface AccountsOptions {
  db: Db;
  /** The cache of API-key status, told of revocations made here at once. */
  keys?: KeyStatusCache;
  /** Relays the gateway's outbox (settings changes); woken after each change. */
  relay?: { kick(): void };
  jwtSecret: string;
  apiKeyPepper: string;
  tokenTtlSeconds: number;
  adminToken?: string;
  authMaxFailures: number;
  authFailureWindowSeconds: number;
}

const unauthorized = () => new HttpError(401, "missing, malformed or expired access token", undefined, { "WWW-Authenticate": 'Bearer realm="analytics"' });

/** Bearer authentication of every account route: a valid token of a key that is still active. */
export function bearerAuthenticator(keys: KeyStatusCache, tokens: TokenIssuer) {
  const check = async (request: FastifyRequest): Promise<Caller> => {
    const header = request.headers.authorization ?? "";
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    if (!match) throw unauthorized();
    const caller = await tokens.verify(match[1]);
    if (!caller || !(await keys.isActive(caller.accountId, caller.apiKeyId))) throw unauthorized();
    return caller;
  };
  // Checked once per request, however many hooks ask (the route, the rate limit of its error answers).
  const checked = new WeakMap<FastifyRequest, Promise<Caller>>();
  return (request: FastifyRequest): Promise<Caller> => {
    let caller = checked.get(request);
    if (!caller) checked.set(request, (caller = check(request)));
    return caller;
  };
}

/**
 * The admin check: the admin token, with the scheme in any case like account tokens. Wrong tokens
 * are braked per client address like POST /auth, on counts of their own.
 */
export function adminAuthenticator(o: Pick<AccountsOptions, "db" | "adminToken" | "authMaxFailures" | "authFailureWindowSeconds">) {
  const { adminToken } = o;
  const failures = new FailureLimiter(o.db, o.authFailureWindowSeconds);
  return async (request: FastifyRequest): Promise<void> => {
    const brakes = [{ key: `admin ip:${request.ip}`, maxFailures: o.authMaxFailures }];
    const match = /^Bearer (.+)$/i.exec(request.headers.authorization ?? "");
    const right = await checkBraked(failures, brakes, async () => Boolean(adminToken && match && sameSecret(match[1], adminToken)));
    if (!right) throw new HttpError(401, "admin token required", undefined, { "WWW-Authenticate": 'Bearer realm="admin"' });
  };
}

/** Whether the attempt was right; refused unchecked (429) when it is over a brake's limit. */
async function checkBraked(limiter: FailureLimiter, brakes: Brake[], isRight: () => Promise<boolean>): Promise<boolean> {
  const outcome = await limiter.check(brakes, isRight);
  if ("retryAfter" in outcome) throw new HttpError(429, "too many failed attempts, try again later", undefined, { "Retry-After": String(outcome.retryAfter) });
  return outcome.right;
}

/**
 * The brakes of POST /auth. Failures count per client address and per (address, account), never
 * per account alone: a stranger who knows an account id cannot lock its owner out. An address may
 * fail AUTH_MAX_FAILURES times on one account, and five times that over all accounts (one office
 * behind one NAT runs several integrations). An account id that is no UUID names no account: such
 * attempts share one brake (whatever they hold, a NUL or 10 kB, is never stored).
 */
export function authBrakes(o: Pick<AccountsOptions, "authMaxFailures">, address: string, accountId: unknown): Brake[] {
  const account = typeof accountId === "string" && isUuid(accountId) ? accountId.toLowerCase() : "none";
  return [
    { key: `auth ip:${address}`, maxFailures: o.authMaxFailures * 5 },
    { key: `auth ip:${address} account:${account}`, maxFailures: o.authMaxFailures },
  ];
}

const authResponse = z.object({ accessToken: z.string(), tokenType: z.literal("Bearer"), expiresIn: z.number().int() });

const credentials = z.strictObject({ accountID: z.string().min(1).max(100), apiKey: z.string().min(1).max(500) });

/**
 * POST /v2/api/auth: the same 401 for an unknown account, an unknown key, a wrong secret and a
 * credential that could never be right (not a string, too long, a NUL, a lone surrogate): such an
 * answer tells an attacker nothing, and counts against the brakes like any wrong key.
 */
export function authRoutes(ctx: RouteContext, o: AccountsOptions, tokens: TokenIssuer): void {
  const failures = new FailureLimiter(o.db, o.authFailureWindowSeconds);
  const exchange = async (request: FastifyRequest, accountID: unknown, apiKey: unknown) => {
    const given = credentials.safeParse({ accountID, apiKey });
    const parts = given.success ? splitApiKey(given.data.apiKey) : undefined;
    const right = await checkBraked(failures, authBrakes(o, request.ip, accountID), async () => {
      const stored = parts && given.data ? await accounts.activeKeyHash(o.db, given.data.accountID, parts.apiKeyId) : undefined;
      // The secret is hashed whatever was sent: a malformed credential takes as long as a wrong one.
      return secretMatches(o.apiKeyPepper, parts?.secret ?? "", stored);
    });
    if (!right || !given.data || !parts) throw new HttpError(401, "wrong account id or API key");
    const accessToken = await tokens.issue({ accountId: given.data.accountID.toLowerCase(), apiKeyId: parts.apiKeyId });
    return { accessToken, tokenType: "Bearer" as const, expiresIn: tokens.ttlSeconds };
  };
  route(ctx, {
    method: "POST",
    url: "/v2/api/auth",
    operationId: "createAccessToken",
    summary: "Exchange an account id and API key for a bearer token",
    tag: "Authentication",
    auth: "none",
    // Any value of the two fields is a credential to check (a malformed one is a wrong one, 401); the document shows the real ones.
    body: documentAs(z.strictObject({ accountID: z.unknown(), apiKey: z.unknown() }), credentials),
    responses: {
      200: { description: "access token", schema: authResponse },
      400: { description: "a body that is not an object of accountID and apiKey alone", schema: generalResponseSchema },
      401: { description: "wrong, malformed or revoked credentials", schema: generalResponseSchema },
      429: { description: "too many failed attempts; see Retry-After", schema: generalResponseSchema },
    },
    handler: async ({ body }, request) => exchange(request, body.accountID, body.apiKey),
    // A credential the gateway refuses before any route looks at it (a lone surrogate, http/hostile-input.ts) is a wrong one too.
    errorHandler: async (error, request, reply) => {
      const body = request.body as Record<string, unknown> | undefined;
      const illFormed = (value: unknown) => typeof value === "string" && !value.isWellFormed();
      if (!(error instanceof HttpError && error.statusCode === 400 && (illFormed(body?.accountID) || illFormed(body?.apiKey)))) throw error;
      return reply.send(await exchange(request, undefined, undefined));
    },
  });
}

const accountIdParam = { accountID: z.string().max(100).describe("account id (UUID)") };
const settingsSchema = z.strictObject({
  customPriceFields: z.array(z.string().max(63).regex(/^[A-Za-z][A-Za-z0-9_]{0,62}$/, "letters, digits and _, starting with a letter")).max(50).default([]),
  timezone: z
    .string()
    .max(100)
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat("en", { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, "an IANA time zone such as Europe/Stockholm")
    .default("UTC"),
  salesPlanGrowth: z
    .number()
    .gt(-1)
    .default(0)
    .describe("planning's year-over-year growth where no sales plan is stored: a month's plan is the same month's net units a year earlier times (1 + salesPlanGrowth); a decimal > -1 (0.1 = 10 % more)"),
  rateLimitPerSecond: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(100)
    .describe("the account's rate limit: tokens its bucket gains per second (a read costs 1, a write 1 per item, at least 5)"),
  rateLimitBurst: z.number().int().min(1).max(100_000_000).default(6000).describe("the account's rate limit: the bucket's size, the most a burst may spend at once"),
});

/** The admin API of the contract; registered only when ADMIN_TOKEN is set. */
export function adminRoutes(ctx: RouteContext, o: AccountsOptions): void {
  const keyName = z.string().min(1).max(200);
  const notFound = (id: string) => new HttpError(404, `account ${id} not found`);
  route(ctx, {
    method: "POST",
    url: "/admin/v1/accounts",
    operationId: "createAccount",
    summary: "Create an account with its first API key (the secret is shown once)",
    tag: "Admin",
    auth: "admin",
    body: z.strictObject({ name: z.string().min(1).max(200) }),
    responses: {
      201: { description: "account", schema: z.object({ accountID: z.string(), name: z.string(), apiKeyId: z.string(), apiKey: z.string() }) },
      401: { description: "admin token required", schema: generalResponseSchema },
    },
    handler: async ({ body }, _req, reply) => {
      const key = newApiKey(o.apiKeyPepper);
      const accountID = await accounts.createAccount(o.db, body.name, { ...key, name: "default" });
      reply.status(201);
      return { accountID, name: body.name, apiKeyId: key.apiKeyId, apiKey: key.apiKey };
    },
  });
  route(ctx, {
    method: "POST",
    url: "/admin/v1/accounts/:accountID/keys",
    operationId: "createApiKey",
    summary: "Issue another API key for an account",
    tag: "Admin",
    auth: "admin",
    params: accountIdParam,
    body: z.strictObject({ name: keyName }),
    responses: {
      201: { description: "key", schema: z.object({ apiKeyId: z.string(), apiKey: z.string() }) },
      404: { description: "no such account", schema: generalResponseSchema },
    },
    handler: async ({ params, body }, _req, reply) => {
      if (!(await accounts.accountExists(o.db, params.accountID))) throw notFound(params.accountID);
      const key = newApiKey(o.apiKeyPepper);
      await accounts.addApiKey(o.db, params.accountID, { ...key, name: body.name });
      reply.status(201);
      return { apiKeyId: key.apiKeyId, apiKey: key.apiKey };
    },
  });
  route(ctx, {
    method: "DELETE",
    url: "/admin/v1/accounts/:accountID/keys/:apiKeyId",
    operationId: "revokeApiKey",
    summary: "Revoke an API key; its tokens stop working at once",
    tag: "Admin",
    auth: "admin",
    params: { ...accountIdParam, apiKeyId: z.string().max(100) },
    responses: {
      200: { description: "revoked", schema: generalResponseSchema },
      404: { description: "no such key", schema: generalResponseSchema },
    },
    handler: async ({ params }) => {
      if (!(await accounts.revokeApiKey(o.db, params.accountID, params.apiKeyId))) throw new HttpError(404, `API key ${params.apiKeyId} not found`);
      o.keys?.forget(params.accountID, params.apiKeyId);
      return generalResponse(200, "revoked");
    },
  });
  route(ctx, {
    method: "PUT",
    url: "/admin/v1/accounts/:accountID/settings",
    operationId: "replaceAccountSettings",
    summary: "Set an account's custom price fields, time zone and sales plan growth",
    tag: "Admin",
    auth: "admin",
    params: accountIdParam,
    body: settingsSchema,
    responses: {
      200: { description: "settings", schema: settingsSchema },
      404: { description: "no such account", schema: generalResponseSchema },
    },
    handler: async ({ params, body }) => {
      const settings = await accounts.updateSettings(o.db, params.accountID, body);
      if (!settings) throw notFound(params.accountID);
      o.relay?.kick();
      return settings;
    },
  });
  route(ctx, {
    method: "GET",
    url: "/admin/v1/accounts/:accountID/settings",
    operationId: "getAccountSettings",
    summary: "Read an account's settings",
    tag: "Admin",
    auth: "admin",
    params: accountIdParam,
    responses: {
      200: { description: "settings", schema: settingsSchema },
      404: { description: "no such account", schema: generalResponseSchema },
    },
    handler: async ({ params }) => {
      const settings = await accounts.getSettings(o.db, params.accountID);
      if (!settings) throw notFound(params.accountID);
      return settings;
    },
  });
}
