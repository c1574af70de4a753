import type { Migration } from "@analytics/db";
import { webhookClaimDue } from "../sql/webhook-rounds";

/**
 * Events pushed to webhook endpoints only, never queue entries (EventType values marked
 * webhook_only: import.finished). A delivery names its event by id (webhook_deliveries.event_id),
 * a queue entry's or one of these; the claim reads either (webhook_claim_due, from
 * sql/webhook-rounds.ts). `seq` draws from the entries' sequence, so deliveries keep one order of
 * events. `aggregate` is what the event is about (`import:<id>`), the chain its deliveries
 * keep order in, as an entry's product.
 */
export const webhookEvents: Migration = {
  name: "016_webhook_events",
  async up(db) {
    await db.raw(`
      CREATE TABLE webhook_events (
        id uuid PRIMARY KEY,
        seq bigint NOT NULL DEFAULT nextval('events_seq_seq'),
        account_id uuid NOT NULL,
        event_type text NOT NULL,
        aggregate text NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      ${webhookClaimDue}
    `);
  },
};
