import { createAccountVersions, type Migration } from "@analytics/db";

/**
 * The version of each account's orders data, behind the gateway's weak ETags on its lists
 * (CONTRACT "Conditional requests"): bumped by triggers (libs/db createAccountVersions) after
 * every statement that inserts, updates or deletes rows of the tables the lists read, in its
 * transaction: purchase orders and their items, distribution orders, transactions and their
 * shipments.
 */
export const accountVersions: Migration = {
  name: "008_account_versions",
  async up(db) {
    await createAccountVersions(db, ["purchase_orders", "purchase_order_items", "distribution_orders", "transactions", "shipments"]);
  },
};
