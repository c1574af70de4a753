import type { Migration } from "@analytics/db";
import { announceStoredTriggers } from "../triggers";

/**
 * Planning's replica reads stock triggers' minimums since its later revision; the stream keeps 7
 * days, so triggers written before would never reach it. This migration re-announces every stored
 * trigger once, as it is, on analytics.inventory.stock_trigger.backfilled (planning's alone),
 * through the outbox, a page at a time. Planning applies by version, so one it already has
 * changes nothing.
 */
export const announceForPlanning: Migration = {
  name: "004_announce_for_planning",
  async up(db) {
    await announceStoredTriggers(db);
  },
};
