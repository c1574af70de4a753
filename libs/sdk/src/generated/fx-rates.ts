// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListFxratesQuery {
  externalReference?: string | Array<string>;
  fromCurrency?: string | Array<string>;
  toCurrency?: string | Array<string>;
}

export type CreateFxratesBody = Array<{
  /** read-only */
  id?: unknown;
  /** Default: "". */
  externalReference?: string | null;
  /** an ISO 4217 code (e.g. EUR) */
  fromCurrency: string;
  /** an ISO 4217 code (e.g. EUR) */
  toCurrency: string;
  /** greater than 0 */
  rate: number;
  /** YYYY-MM-DD, or an RFC 3339 timestamp read as the date written in it (in its own offset) */
  fromDate: string;
  /** null or absent: open */
  toDate?: string | null;
  exchangeDate?: string | null;
}>;

export type UpdateFxrateBody = {
  /** read-only */
  id?: unknown;
  /** Default: "". */
  externalReference?: string | null;
  /** an ISO 4217 code (e.g. EUR) */
  fromCurrency: string;
  /** an ISO 4217 code (e.g. EUR) */
  toCurrency: string;
  /** greater than 0 */
  rate: number;
  /** YYYY-MM-DD, or an RFC 3339 timestamp read as the date written in it (in its own offset) */
  fromDate: string;
  /** null or absent: open */
  toDate?: string | null;
  exchangeDate?: string | null;
};

/** FX rates operations */
export class FXRates {
  constructor(private readonly client: Client) {}

  /** FX rates, optionally filtered */
  listFxrates(query?: ListFxratesQuery, options?: RequestOptions): Promise<Array<S.FxRate>> {
    return this.client.call<Array<S.FxRate>>({ method: "GET", path: `/v2/api/fxrates`, auth: "bearer" }, query, undefined, options);
  }

  /** Create FX rates (all or nothing); a rate starting inside an open range closes that range at its fromDate */
  createFxrates(body: CreateFxratesBody, options?: RequestOptions): Promise<Array<S.FxRate>> {
    return this.client.call<Array<S.FxRate>>({ method: "POST", path: `/v2/api/fxrates`, auth: "bearer" }, undefined, body, options);
  }

  /** Replace a rate: it is deleted and recreated, so a new id comes back */
  updateFxrate(id: string, body: UpdateFxrateBody, options?: RequestOptions): Promise<S.FxRate> {
    return this.client.call<S.FxRate>({ method: "PUT", path: `/v2/api/fxrates/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, body, options);
  }

  /** Delete a rate */
  deleteFxrate(id: string, options?: RequestOptions): Promise<S.GeneralResponse> {
    return this.client.call<S.GeneralResponse>({ method: "DELETE", path: `/v2/api/fxrates/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, undefined, options);
  }
}
