import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { StockRowDb, StoreRow, TrafficRow, TriggerRow, WarehouseRow } from "./repository";

/** Stored rows as the proto (REST-shaped) resources. */

export const warehouseFromRow = (r: WarehouseRow) => ({
  id: r.id,
  externalId: r.external_id,
  name: r.name,
  centralWarehouse: r.central_warehouse,
  createdAt: timestampFromDate(r.created_at),
  updatedAt: timestampFromDate(r.updated_at),
});

export const stockFromRow = (r: StockRowDb) => ({
  key: r.key,
  sku: r.sku ?? undefined,
  ean: r.ean ?? undefined,
  supplier: r.supplier ?? undefined,
  availableQuantity: r.available_quantity,
  physicalQuantity: r.physical_quantity,
  date: timestampFromDate(new Date(r.date)),
  externalWarehouseId: r.external_warehouse_id,
  skuId: r.sku_id,
  warehouseId: r.warehouse_id,
  updatedAt: timestampFromDate(r.updated_at),
});

export const storeFromRow = (r: StoreRow) => ({
  externalStoreId: r.external_store_id,
  name: r.name,
  trafficCounterId: r.traffic_counter_id ?? undefined,
  channelType: r.channel_type ?? undefined,
  address: r.address ?? undefined,
  address2: r.address2 ?? undefined,
  zip: r.zip ?? undefined,
  city: r.city ?? undefined,
  state: r.state ?? undefined,
  countryCode: r.country_code ?? undefined,
  currencyCode: r.currency_code ?? undefined,
  warehouses: r.warehouses,
  createdAt: timestampFromDate(r.created_at),
  updatedAt: timestampFromDate(r.updated_at),
});

export const triggerFromRow = (r: TriggerRow) => ({
  id: BigInt(r.id),
  warehouseId: r.warehouse_id,
  warehouseExternalId: r.warehouse_external_id,
  skuId: r.sku_id,
  skuSeq: r.sku_seq === null ? undefined : BigInt(r.sku_seq),
  sku: r.sku ?? undefined,
  key: r.key,
  season: r.season ?? undefined,
  startDate: r.start_date ?? undefined,
  lastRestockDate: r.last_restock_date ?? undefined,
  preventRestock: r.prevent_restock,
  lowerLimit: r.lower_limit ?? undefined,
  min: r.min ?? undefined,
  max: r.max ?? undefined,
  upperLimit: r.upper_limit ?? undefined,
  allowMinAuto: r.allow_min_auto,
  allowMaxAuto: r.allow_max_auto,
  minMaxSource: r.min_max_source ?? undefined,
  minMaxUpdatedAt: r.min_max_updated_at ? timestampFromDate(new Date(r.min_max_updated_at)) : undefined,
});

export const trafficFromRow = (r: TrafficRow) => ({
  storeTrafficCounterId: r.counter_id,
  eventTime: timestampFromDate(new Date(r.event_time)),
  incomingTraffic: r.incoming,
  outgoingTraffic: r.outgoing,
  name: r.name ?? undefined,
  storeId: r.store_id ?? undefined,
});
