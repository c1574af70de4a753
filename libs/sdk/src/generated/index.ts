// Generated from the gateway's OpenAPI document by libs/sdk/scripts/generate.mjs: do not edit.
import { Client } from "../core/client";
import { Authentication } from "./authentication";
import { Admin } from "./admin";
import { Products } from "./products";
import { Brands } from "./brands";
import { Categories } from "./categories";
import { MappingTables } from "./mapping-tables";
import { PriceListsAndPrices } from "./price-lists-and-prices";
import { FXRates } from "./fx-rates";
import { Pricats } from "./pricats";
import { Events } from "./events";
import { Webhooks } from "./webhooks";
import { Planning } from "./planning";
import { Warehouses } from "./warehouses";
import { PurchaseOrders } from "./purchase-orders";
import { Stores } from "./stores";
import { StoreTraffic } from "./store-traffic";
import { StockTriggers } from "./stock-triggers";
import { DistributionOrders } from "./distribution-orders";
import { Transactions } from "./transactions";
import { Imports } from "./imports";

export { Authentication, Admin, Products, Brands, Categories, MappingTables, PriceListsAndPrices, FXRates, Pricats, Events, Webhooks, Planning, Warehouses, PurchaseOrders, Stores, StoreTraffic, StockTriggers, DistributionOrders, Transactions, Imports };
export type * from "./schemas";

/** A client with every resource: `new Analytics({ baseUrl, accountID, apiKey }).products.listProducts()`. */
export class Analytics extends Client {
  readonly authentication = new Authentication(this);
  readonly admin = new Admin(this);
  readonly products = new Products(this);
  readonly brands = new Brands(this);
  readonly categories = new Categories(this);
  readonly mappingTables = new MappingTables(this);
  readonly priceListsAndPrices = new PriceListsAndPrices(this);
  readonly fxRates = new FXRates(this);
  readonly pricats = new Pricats(this);
  readonly events = new Events(this);
  readonly webhooks = new Webhooks(this);
  readonly planning = new Planning(this);
  readonly warehouses = new Warehouses(this);
  readonly purchaseOrders = new PurchaseOrders(this);
  readonly stores = new Stores(this);
  readonly storeTraffic = new StoreTraffic(this);
  readonly stockTriggers = new StockTriggers(this);
  readonly distributionOrders = new DistributionOrders(this);
  readonly transactions = new Transactions(this);
  readonly imports = new Imports(this);
}
