// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, Paged, RequestOptions, Upload } from "../core/client";
import type * as S from "./schemas";

export interface CreateImportQuery {
  /** the resource the lines are items of (its batch endpoint's items) */
  resource: "products" | "prices" | "purchaseorders" | "distributionorders" | "transactions" | "stock" | "stocktriggers";
}

export interface ListImportsQuery {
  /** 1-based page number */
  page?: number;
  /** page size, at most 1000 */
  pageSize?: number;
  status?: "queued" | "running" | "completed" | "completed_with_errors" | "failed" | "cancelled";
}

export interface GetImportResultsQuery {
  /** Default: "failed". */
  outcome?: "failed" | "succeeded" | "all";
}

/** Imports operations */
export class Imports {
  constructor(private readonly client: Client) {}

  /** Start an import: a file of a resource's batch items, applied as a job */
  createImport(body: Upload, query: CreateImportQuery, options?: RequestOptions): Promise<S.Import> {
    return this.client.call<S.Import>({ method: "POST", path: `/v2/api/imports`, auth: "bearer", media: "application/x-ndjson" }, query, body, options);
  }

  /** The account's imports, newest first */
  listImports(query?: ListImportsQuery, options?: RequestOptions): Paged<S.Import> {
    return this.client.paged<S.Import>({ method: "GET", path: `/v2/api/imports`, auth: "bearer" }, query, options);
  }

  /** An import: its status and counts (progress after every chunk) */
  getImport(id: string, options?: RequestOptions): Promise<S.Import> {
    return this.client.call<S.Import>({ method: "GET", path: `/v2/api/imports/${encodeURIComponent(id)}`, auth: "bearer" }, undefined, undefined, options);
  }

  /** Cancel an import: it stops after the chunk in flight; what is applied stays */
  cancelImport(id: string, options?: RequestOptions): Promise<S.Import> {
    return this.client.call<S.Import>({ method: "POST", path: `/v2/api/imports/${encodeURIComponent(id)}/cancel`, auth: "bearer" }, undefined, undefined, options);
  }

  /** An import's per-line results as NDJSON, in input order */
  getImportResults(id: string, query?: GetImportResultsQuery, options?: RequestOptions): AsyncIterable<S.ImportLineResult> {
    return this.client.lines<S.ImportLineResult>({ method: "GET", path: `/v2/api/imports/${encodeURIComponent(id)}/results`, auth: "bearer" }, query, options);
  }
}
