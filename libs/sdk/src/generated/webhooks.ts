// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export type CreateWebhookEndpointBody = {
  /** read-only */
  id?: unknown;
  /** https:// URL of a public address */
  url: string;
  /** the types pushed; empty (or left out of a write): every type */
  eventTypes?: (Array<"update_sku" | "draft_po_change" | "sku_warehouse_settings_change" | "import.finished">) | null;
  /** Default: "". */
  description?: string | null;
  /** read-only: "whsec_" + base64: the signing secret, answered only when the endpoint is created and when its secret is rotated. A replay of those answers (the same Idempotency-Key) leaves it out and says so in `Idempotent-Redacted: secret`: it is never kept; rotate it if the first answer was lost */
  secret?: unknown;
  /** read-only */
  enabled?: unknown;
  /** read-only: gone (the endpoint answered 410), failing (5 days of failed attempts) or by request */
  disabledReason?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export type UpdateWebhookEndpointBody = {
  /** read-only */
  id?: unknown;
  /** https:// URL of a public address */
  url: string;
  /** the types pushed; empty (or left out of a write): every type */
  eventTypes?: (Array<"update_sku" | "draft_po_change" | "sku_warehouse_settings_change" | "import.finished">) | null;
  /** Default: "". */
  description?: string | null;
  /** read-only: "whsec_" + base64: the signing secret, answered only when the endpoint is created and when its secret is rotated. A replay of those answers (the same Idempotency-Key) leaves it out and says so in `Idempotent-Redacted: secret`: it is never kept; rotate it if the first answer was lost */
  secret?: unknown;
  /** true re-enables a disabled endpoint; false disables it */
  enabled?: boolean;
  /** read-only: gone (the endpoint answered 410), failing (5 days of failed attempts) or by request */
  disabledReason?: unknown;
  /** read-only */
  createdAt?: unknown;
  /** read-only */
  updatedAt?: unknown;
};

export interface ListWebhookDeliveriesQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
}

/** The event queue pushed to the account's endpoints, signed as Standard Webhooks (standardwebhooks.com). */
export class Webhooks {
  constructor(private readonly client: Client) {}

  /** Register an endpoint the account's queue entries are pushed to (at most 10 per account) */
  createWebhookEndpoint(body: CreateWebhookEndpointBody, options?: RequestOptions): Promise<S.WebhookEndpointWithSecret> {
    return this.client.call<S.WebhookEndpointWithSecret>({ method: "POST", path: `/v2/api/webhooks`, auth: "bearer" }, undefined, body, options);
  }

  /** The account's webhook endpoints */
  listWebhookEndpoints(options?: RequestOptions): Promise<Array<S.WebhookEndpoint>> {
    return this.client.call<Array<S.WebhookEndpoint>>({ method: "GET", path: `/v2/api/webhooks`, auth: "bearer" }, undefined, undefined, options);
  }

  /** One webhook endpoint */
  getWebhookEndpoint(id: string, options?: RequestOptions): Promise<S.WebhookEndpoint> {
    return this.client.call<S.WebhookEndpoint>({ method: "GET", path: `/v2/api/webhooks/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Replace an endpoint's URL, event types and description; enabled=true re-enables a disabled one */
  updateWebhookEndpoint(id: string, body: UpdateWebhookEndpointBody, options?: RequestOptions): Promise<S.WebhookEndpoint> {
    return this.client.call<S.WebhookEndpoint>({ method: "PUT", path: `/v2/api/webhooks/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, body, options);
  }

  /** Delete an endpoint and its delivery log */
  deleteWebhookEndpoint(id: string, options?: RequestOptions): Promise<S.GeneralResponse> {
    return this.client.call<S.GeneralResponse>({ method: "DELETE", path: `/v2/api/webhooks/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** A new signing secret; the old one keeps signing beside it for 24 hours */
  rotateWebhookSecret(id: string, options?: RequestOptions): Promise<S.WebhookEndpointWithSecret> {
    return this.client.call<S.WebhookEndpointWithSecret>({ method: "POST", path: `/v2/api/webhooks/${encodeURIComponent(id)}/rotate-secret`, auth: "bearer" }, undefined, undefined, options);
  }

  /** An endpoint's deliveries, newest first, each with its last attempt and every attempt (time, status code or error, duration, next retry) */
  listWebhookDeliveries(id: string, query?: ListWebhookDeliveriesQuery, options?: RequestOptions): Paged<S.WebhookDelivery> {
    return this.client.paged<S.WebhookDelivery>({ method: "GET", path: `/v2/api/webhooks/${encodeURIComponent(id)}/deliveries`, auth: "bearer" }, query, options);
  }

  /** Send a pending or failed delivery again now, its retry schedule started over; a failed one goes alone, holding back none of its product's later entries */
  retryWebhookDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<S.WebhookDelivery> {
    return this.client.call<S.WebhookDelivery>({ method: "POST", path: `/v2/api/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`, auth: "bearer" }, undefined, undefined, options);
  }
}
