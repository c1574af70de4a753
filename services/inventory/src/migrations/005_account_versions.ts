import { createAccountVersions, type Migration } from "@analytics/db";

/**
 * The version of each account's inventory data, behind the gateway's weak ETags on its lists
 * (CONTRACT "Conditional requests"): bumped by triggers (libs/db createAccountVersions) after
 * every statement that inserts, updates or deletes rows of the tables the lists read, in its
 * transaction: warehouses, stock, stores, store traffic and stock triggers.
 */
export const accountVersions: Migration = {
  name: "005_account_versions",
  async up(db) {
    await createAccountVersions(db, ["warehouses", "stock", "stores", "store_traffic", "stock_triggers"]);
  },
};
