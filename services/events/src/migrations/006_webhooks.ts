import type { Migration } from "@analytics/db";

/**
 * Webhooks (CONTRACT.md, "Webhooks: the event queue pushed"). An endpoint is an account's URL and
 * secret; a delivery is one queue entry owed to one endpoint, inserted in the transaction that
 * writes the entry, so the delivery rows are the durable outbox of the push: a worker killed or a
 * bus down loses none. `aggregate` is the entry's product, purchase order or trigger: a delivery
 * is due only when no earlier one of its endpoint and aggregate is pending (queue order per
 * product). `lease_until` marks a delivery a worker is sending; a killed worker's lease expires
 * and another sends it again (the same webhook-id).
 */
export const webhooks: Migration = {
  name: "006_webhooks",
  async up(db) {
    await db.raw(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL,
        url text NOT NULL,
        description text NOT NULL DEFAULT '',
        event_types text[] NOT NULL DEFAULT '{}',
        secret text NOT NULL,
        previous_secret text,
        previous_secret_until timestamptz,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);

      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        seq bigserial NOT NULL,
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_id uuid NOT NULL,
        event_seq bigint NOT NULL,
        aggregate text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        lease_token uuid,
        last_attempt_at timestamptz,
        last_status_code int,
        last_duration_ms int,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (endpoint_id, event_id)
      );
      -- The head of each endpoint's and aggregate's chain of pending deliveries.
      CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, aggregate, event_seq) WHERE status = 'pending';
      -- Each endpoint's due deliveries in due order, and the leases live (the endpoint's busy slots).
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, event_seq) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id) WHERE status = 'pending' AND lease_until IS NOT NULL;
      CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, seq);
    `);
  },
};
