import { fieldRules, inventoryV1 } from "@analytics/contracts";
import { tableSpec, type Row, type TableSpec } from "@analytics/db";
import type { DescMessage } from "@bufbuild/protobuf";

const { StockRowSchema, StockTriggerSchema, StoreSchema, StoreTrafficEventSchema, WarehouseSchema } = inventoryV1;

/**
 * warehouses, stock, stores, store_traffic and stock_triggers: the columns of the Warehouse,
 * StockRow, Store, StoreTrafficEvent and StockTrigger messages (their rules in the proto say which
 * are stored and how). Every table also has account_id, seq and (but store_traffic) version,
 * which no statement takes from a message.
 */
export const warehousesTable = tableSpec(WarehouseSchema, "warehouses", { assigned: ["created_at", "updated_at"] });
export const stockTable = tableSpec(StockRowSchema, "stock", { extra: { id: "uuid" }, assigned: ["updated_at"] });
export const storesTable = tableSpec(StoreSchema, "stores", { extra: { id: "uuid" }, assigned: ["created_at", "updated_at"] });
export const triggersTable = tableSpec(StockTriggerSchema, "stock_triggers", { assigned: ["id"] });
export const trafficTable = tableSpec(StoreTrafficEventSchema, "store_traffic", {
  columnNames: { store_traffic_counter_id: "counter_id", incoming_traffic: "incoming", outgoing_traffic: "outgoing" },
});

/**
 * The columns a write of an existing row sets (and so compares, for an identical re-send to answer
 * `unchanged`): the written fields but the row's key within the account and the read-only ones.
 */
export function changeable(spec: TableSpec<DescMessage>, key: readonly string[]): string[] {
  return spec.written.map((f) => [f, spec.column(f)] as const).flatMap(([f, c]) => (fieldRules(f).readOnly || key.includes(c) ? [] : [c]));
}

/** The columns a statement answers for a resource: its extra ones (the id), every stored field, its version. */
export function returned(spec: TableSpec<DescMessage>): string[] {
  const stored = spec.fields.map((f) => spec.column(f));
  return [...spec.columns.filter((c) => !stored.includes(c)), ...stored, "version"];
}

// ---------------------------------------------------------------------------------------------
// Rows as the repository writes and reads them (typed where the service reads a column by name)

export interface WarehouseRow extends Row {
  id: string;
  external_id: string;
  name: string;
  central_warehouse: boolean;
  version: string | number;
}

/** The written columns of a warehouse (warehousesTable.rowOf, without the id chosen here). */
export type WarehouseInput = Row & { external_id: string };

export interface StockRowDb extends Row {
  id: string;
  warehouse_id: string;
  external_warehouse_id: string;
  sku_id: string;
  key: string;
  available_quantity: number;
  physical_quantity: number;
  date: Date | string;
  version: string | number;
}

/** A snapshot to apply: stockTable.rowOf of the StockRow (its warehouse resolved), with its item's position. */
export type StockInput = Row & { ord: number; warehouse_id: string; sku_id: string };

/** The written columns of a store (storesTable.rowOf, without the id chosen here). */
export type StoreInput = Row & { external_store_id: string; warehouses: string[] };

export interface StoreRow extends Row {
  id: string;
  external_store_id: string;
  version: string | number;
}

/** The columns of a traffic event (trafficTable.rowOf). */
export type TrafficInput = Row & { counter_id: string; event_time: string };

export type TrafficRow = TrafficInput;

/** A trigger to write: triggersTable.rowOf of the StockTrigger (its warehouse resolved), with its item's position. */
export type TriggerInput = Row & { ord: number; warehouse_id: string; sku_id: string };

/** A stock_triggers row as read (triggersTable's columns, the warehouse's externalId, the version); typed where read by name. */
export interface TriggerRow extends Row {
  id: string | number;
  key: string;
  warehouse_id: string;
  sku_id: string;
  warehouse_external_id: string;
  version: string | number;
}

/** Stored rows as the proto (REST-shaped) resources. */

export const warehouseFromRow = (r: WarehouseRow) => warehousesTable.messageOf(r);

export function stockFromRow(r: StockRowDb) {
  const row = stockTable.messageOf(r);
  row.externalWarehouseId = r.external_warehouse_id;
  return row;
}

export const storeFromRow = (r: StoreRow) => storesTable.messageOf(r);

export function triggerFromRow(r: TriggerRow) {
  const trigger = triggersTable.messageOf(r);
  trigger.warehouseExternalId = r.warehouse_external_id;
  return trigger;
}

export const trafficFromRow = (r: TrafficRow | TrafficInput) => trafficTable.messageOf(r);
