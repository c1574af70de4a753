import type { Migration } from "@analytics/db";

/**
 * Webhook deliveries: every attempt in the delivery log, and manual retries out of order.
 * `attempt_log` keeps each attempt (time, answer or error, duration, next retry) in its delivery's
 * row, the last 20 (the schedule makes 8; a manual retry starts it over), so the log is written by
 * the same UPDATE that records the attempt and goes with its delivery. `out_of_order` marks a
 * failed delivery retried by hand: it is sent alone, and holds back no later entry of its product
 * (those already went on after its final failure), so the chain of each endpoint and aggregate
 * counts only the deliveries in order.
 */
export const webhookAttempts: Migration = {
  name: "010_webhook_attempts",
  async up(db) {
    await db.raw(`
      ALTER TABLE webhook_deliveries
        ADD COLUMN attempt_log jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN out_of_order boolean NOT NULL DEFAULT false;
      UPDATE webhook_deliveries SET attempt_log = jsonb_build_array(jsonb_build_object('attempt', attempts, 'at', last_attempt_at,
          'status_code', last_status_code, 'duration_ms', last_duration_ms, 'error', last_error,
          'next_retry_at', CASE WHEN status = 'pending' THEN next_attempt_at END))
        WHERE last_attempt_at IS NOT NULL;
      DROP INDEX webhook_deliveries_pending;
      -- The head of each endpoint's and aggregate's chain of pending deliveries in order.
      CREATE INDEX webhook_deliveries_chain ON webhook_deliveries (endpoint_id, aggregate, event_seq) WHERE status = 'pending' AND NOT out_of_order;
    `);
  },
};
