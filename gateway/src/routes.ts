import Fastify from "fastify";
import { imageCapabilities } from "@analytics/auth";
import { ImportService, serviceNames } from "@analytics/contracts";
import { createServiceClient } from "@analytics/rpc";
import { adminRoutes, authRoutes, type AccountsOptions } from "./routes/accounts";
import { TokenIssuer } from "./accounts/tokens";
import { callAs, createClients, type ServiceUrls } from "./clients";
import { OpenApi } from "./http/openapi";
import type { RouteContext } from "./pipeline/route";
import { brandRoutes } from "./routes/brands";
import { eventRoutes } from "./routes/events";
import { webhookRoutes } from "./routes/webhooks";
import { storeRoutes } from "./routes/stores";
import { warehouseRoutes } from "./routes/warehouses";
import { mappingTableRoutes } from "./routes/mapping-tables";
import { distributionOrderRoutes } from "./routes/distribution-orders";
import { fxRateRoutes } from "./routes/fx-rates";
import { pricatRoutes } from "./routes/pricats";
import { pricingRoutes } from "./routes/pricing";
import { planningRoutes } from "./routes/planning";
import { purchaseOrderRoutes } from "./routes/purchase-orders";
import { productRoutes } from "./routes/products";
import { skuRoutes } from "./routes/skus";
import { transactionRoutes } from "./routes/transactions";
import { importRoutes } from "./routes/imports";

/** The document's `info`. */
export const API_INFO = {
  title: "Analytics Service API",
  version: "2.0.0",
  description:
    "Retail and supply-chain data platform. Errors are GeneralResponses, each with a `code` saying what the error is; paged lists answer a JSON array with X-Total-Count and Link headers; money is an exact JSON number. A JSON body takes at most 10 MiB (413), 1,000,000 fields (object keys and array elements together), 10,000 keys in one object (a mapping table's mappingValues: 100,000), 32 levels of nesting, and a free JSON object (attributes, externalAttributes, customFields) 10,000 fields at any depth: beyond, a 400 naming the limit.",
};

export interface RoutesDeps {
  services: ServiceUrls;
  internalToken: string;
  jwtSecret: string;
  imageUrlKey?: string;
  publicBaseUrl?: string;
  adminToken?: string;
  serviceDnsRefreshMs?: number;
  serviceFirstByteTimeoutMs?: number;
  serviceCallTimeoutMs: number;
  planningQueryTimeoutMs: number;
  accountOptions: AccountsOptions;
  tokens: TokenIssuer;
}

/** Every REST route of the gateway, each added to ctx.openapi as it is registered. */
export function registerRoutes(ctx: RouteContext, deps: RoutesDeps): void {
  const replicas = { refreshMs: deps.serviceDnsRefreshMs, firstByteTimeoutMs: deps.serviceFirstByteTimeoutMs };
  const clients = createClients(deps.services, replicas);
  const as = callAs(deps.internalToken, deps.serviceCallTimeoutMs);

  authRoutes(ctx, deps.accountOptions, deps.tokens);
  if (deps.adminToken) adminRoutes(ctx, deps.accountOptions);
  const images = imageCapabilities(deps.imageUrlKey ? { key: deps.imageUrlKey } : deps.jwtSecret, deps.publicBaseUrl);
  skuRoutes(ctx, clients.catalogue, as);
  productRoutes(ctx, clients.catalogue, clients.pricing, as, images);
  brandRoutes(ctx, clients.catalogue, as);
  mappingTableRoutes(ctx, clients.catalogue, as);
  pricingRoutes(ctx, clients.pricing, clients.catalogue, as);
  fxRateRoutes(ctx, clients.pricing, as);
  pricatRoutes(ctx, clients.pricing, as);
  eventRoutes(ctx, clients.events, as, images);
  webhookRoutes(ctx, clients.events, as);
  planningRoutes(ctx, clients.planning, clients.catalogue, as, deps.planningQueryTimeoutMs);
  warehouseRoutes(ctx, clients.inventory, clients.catalogue, as);
  const orderDeps = { ctx, orders: clients.orders, catalogue: clients.catalogue, inventory: clients.inventory, as };
  purchaseOrderRoutes(orderDeps);
  storeRoutes(ctx, clients.inventory, clients.catalogue, as);
  distributionOrderRoutes(orderDeps);
  transactionRoutes(ctx, clients.orders, as);
  const importOwner = (url: string) => createServiceClient(ImportService, url, replicas);
  const importOwners = { catalogue: importOwner(deps.services.catalogue), pricing: importOwner(deps.services.pricing), orders: importOwner(deps.services.orders), inventory: importOwner(deps.services.inventory) };
  importRoutes(ctx, importOwners, { catalogue: clients.catalogue, inventory: clients.inventory }, as);
}

/**
 * The OpenAPI document exactly as a gateway with an admin token serves it at
 * /v2/api/openapi.json, built in-process with no database, service or network: the routes are
 * registered on an app that never listens, with no pipeline steps (the SDK's generator reads it).
 */
export function apiDocument(): Record<string, unknown> {
  const openapi = new OpenApi(API_INFO);
  const never = async () => {
    throw new Error("the document's app serves no request");
  };
  const ctx: RouteContext = { app: Fastify(), openapi, authenticate: never, authenticateAdmin: never, pipeline: [] };
  const unused = "document-only";
  registerRoutes(ctx, {
    services: Object.fromEntries(serviceNames.map((name) => [name, "http://127.0.0.1:1"])) as ServiceUrls,
    internalToken: unused,
    jwtSecret: unused,
    adminToken: unused,
    serviceCallTimeoutMs: 10_000,
    planningQueryTimeoutMs: 120_000,
    accountOptions: { db: undefined as never, jwtSecret: unused, apiKeyPepper: unused, tokenTtlSeconds: 900, adminToken: unused, authMaxFailures: 1, authFailureWindowSeconds: 1 },
    tokens: new TokenIssuer(unused, 900),
  });
  return openapi.document();
}
