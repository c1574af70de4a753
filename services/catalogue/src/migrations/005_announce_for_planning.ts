import type { Migration } from "@analytics/db";
import { announceStoredProducts } from "../changes";

/**
 * Planning's replica keeps each SKU's EAN since this release (sales items that name their SKU by
 * EAN alone count toward it); the stream keeps 7 days, so SKUs written before would never tell it
 * theirs. This migration re-announces every stored product once, as it is and with its version, on
 * analytics.catalogue.sku.backfilled (planning's alone), through the outbox, a page at a time.
 * Planning takes the EAN from a message of the version it holds; nothing else changes.
 */
export const announceForPlanning: Migration = {
  name: "005_announce_for_planning",
  async up(db) {
    await announceStoredProducts(db);
  },
};
