// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListEventsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  /** e.g. update_sku */
  event_type?: string;
  status?: "pending" | "completed" | "failed";
}

export type UpdateEventStatusBody = {
  id: string;
  status: "completed" | "failed";
};

export type UpdateEventStatusBatchBody = Array<{
  id: string;
  status: "completed" | "failed";
}>;

export type UpdateEventPayloadBody = {
  payload: unknown;
};

/** The account's event queue: what changed, to be processed and marked. */
export class Events {
  constructor(private readonly client: Client) {}

  /** List the account's queue entries */
  listEvents(query?: ListEventsQuery, options?: RequestOptions): Paged<S.Event> {
    return this.client.paged<S.Event>({ method: "GET", path: `/v2/api/events`, auth: "bearer" }, query, options);
  }

  /** Mark one pending event completed or failed (once only) */
  updateEventStatus(body: UpdateEventStatusBody, options?: RequestOptions): Promise<S.EventStatusResult> {
    return this.client.call<S.EventStatusResult>({ method: "PATCH", path: `/v2/api/events`, auth: "bearer" }, undefined, body, options);
  }

  /** Mark many events; unknown or already processed ones answer updated=false */
  updateEventStatusBatch(body: UpdateEventStatusBatchBody, options?: RequestOptions): Promise<Array<S.EventStatusResult>> {
    return this.client.call<Array<S.EventStatusResult>>({ method: "PATCH", path: `/v2/api/events/batch`, auth: "bearer" }, undefined, body, options);
  }

  /** Replace an event's payload */
  updateEventPayload(id: string, body: UpdateEventPayloadBody, options?: RequestOptions): Promise<S.Event> {
    return this.client.call<S.Event>({ method: "PUT", path: `/v2/api/events/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, body, options);
  }
}
