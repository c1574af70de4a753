import type { Migration } from "@analytics/db";
import { webhookRoundFunctions } from "../sql/webhook-rounds";

/**
 * The webhook worker's functions from their one home, sql/webhook-rounds.ts: migrations 011 and
 * 013 keep the text they ran, this one ends a fresh install and an upgrade in the same functions.
 * It drops the overloads migration 011 made, which 013 kept for replicas not yet upgraded.
 */
export const webhookFunctions: Migration = {
  name: "015_webhook_functions",
  async up(db) {
    await db.raw(`
      DROP FUNCTION webhook_round(jsonb, int, int, int, bigint, uuid);
      DROP FUNCTION webhook_claim_due(int, int, bigint, uuid);
      ${webhookRoundFunctions.join("\n")}
    `);
  },
};
