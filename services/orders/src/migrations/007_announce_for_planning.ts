import type { Migration } from "@analytics/db";
import { announceStoredDistributionOrders } from "../distribution-orders";
import { announceStoredTransactions } from "../transactions";

/**
 * Planning's replica reads transactions and distribution orders since its later revision; the
 * stream keeps 7 days, so what was written before would never reach it (an account's history is
 * its year-over-year baseline). This migration re-announces every stored transaction and
 * distribution order once, as it is, on their `backfilled` subjects (planning's alone), through
 * the outbox, a page at a time. Planning applies by version, so one it already has changes
 * nothing. Messages keep their aggregate's order: a backfilled one follows the row's pending
 * created/updated ones.
 */
export const announceForPlanning: Migration = {
  name: "007_announce_for_planning",
  async up(db) {
    await announceStoredTransactions(db);
    await announceStoredDistributionOrders(db);
  },
};
