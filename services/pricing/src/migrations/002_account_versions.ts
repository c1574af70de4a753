import { createAccountVersions, type Migration } from "@analytics/db";

/**
 * The version of each account's pricing data, behind the gateway's weak ETags on its lists
 * (CONTRACT "Conditional requests"): bumped by triggers (libs/db createAccountVersions) after
 * every statement that inserts, updates or deletes rows of the tables the lists read, in its
 * transaction: price lists, prices, FX rates, pricats and their SKUs, and the account settings
 * that shape prices.
 */
export const accountVersions: Migration = {
  name: "002_account_versions",
  async up(db) {
    await createAccountVersions(db, ["account_settings", "price_lists", "prices", "fx_rates", "pricats", "pricat_skus"]);
  },
};
