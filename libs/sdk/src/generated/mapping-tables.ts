// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import type { Client, RequestOptions } from "../core/client";
import type * as S from "./schemas";

export interface ListMappingTablesQuery {
  mappingType?: "products" | "transactions" | "purchaseOrders" | "distributionOrders" | "stocks" | "suppliers" | "costCalculationValues";
}

export interface GetMappingTableQuery {
  /** required */
  mappingType: "products" | "transactions" | "purchaseOrders" | "distributionOrders" | "stocks" | "suppliers" | "costCalculationValues";
}

export type ReplaceMappingTableBody = {
  mappingValues: {
    [key: string]: string;
  };
};

export interface ReplaceMappingTableQuery {
  /** required */
  mappingType: "products" | "transactions" | "purchaseOrders" | "distributionOrders" | "stocks" | "suppliers" | "costCalculationValues";
}

export type CreateMappingTableBody = {
  mappingType: "products" | "transactions" | "purchaseOrders" | "distributionOrders" | "stocks" | "suppliers" | "costCalculationValues";
  mappingValues: {
    [key: string]: string;
  };
};

export interface DeleteMappingTableQuery {
  /** required */
  mappingType: "products" | "transactions" | "purchaseOrders" | "distributionOrders" | "stocks" | "suppliers" | "costCalculationValues";
}

/** Account-defined lookup tables from one field's values to others. */
export class MappingTables {
  constructor(private readonly client: Client) {}

  /** List mapping tables */
  listMappingTables(query?: ListMappingTablesQuery, options?: RequestOptions): Promise<Array<S.MappingTableResponse>> {
    return this.client.call<Array<S.MappingTableResponse>>({ method: "GET", path: `/v2/api/mappingtables`, auth: "bearer" }, query, undefined, options);
  }

  /** One mapping table */
  getMappingTable(mappingField: string, query: GetMappingTableQuery, options?: RequestOptions): Promise<S.MappingTableResponse> {
    return this.client.call<S.MappingTableResponse>({ method: "GET", path: `/v2/api/mappingtables/${encodeURIComponent(mappingField)}`, auth: "bearer" }, query, undefined, options);
  }

  /** Add or update keys; keys absent from the request are kept */
  replaceMappingTable(mappingField: string, body: ReplaceMappingTableBody, query: ReplaceMappingTableQuery, options?: RequestOptions): Promise<S.MappingTableResponse> {
    return this.client.call<S.MappingTableResponse>({ method: "PUT", path: `/v2/api/mappingtables/${encodeURIComponent(mappingField)}`, auth: "bearer" }, query, body, options);
  }

  /** Create the table or replace all its values (the type travels in the body) */
  createMappingTable(mappingField: string, body: CreateMappingTableBody, options?: RequestOptions): Promise<S.MappingTableResponse> {
    return this.client.call<S.MappingTableResponse>({ method: "POST", path: `/v2/api/mappingtables/${encodeURIComponent(mappingField)}`, auth: "bearer" }, undefined, body, options);
  }

  /** Delete a mapping table */
  deleteMappingTable(mappingField: string, query: DeleteMappingTableQuery, options?: RequestOptions): Promise<void> {
    return this.client.call<void>({ method: "DELETE", path: `/v2/api/mappingtables/${encodeURIComponent(mappingField)}`, auth: "bearer" }, query, undefined, options);
  }
}
