import type { Migration } from "@analytics/db";

/**
 * The webhook worker's round as one statement (repository/webhooks.ts, recordAndClaim): record the attempts
 * finished since the last round, then claim due deliveries for the free slots. As functions, the
 * round is one round trip instead of five (BEGIN, record, lock the endpoints, claim, COMMIT), and
 * each statement inside still takes its own snapshot (READ COMMITTED), so the claim counts the
 * leases every replica committed before it got an endpoint's lock, and sees the slots and
 * products the recorded attempts freed. The text as it was made; the current one is
 * sql/webhook-rounds.ts's. The functions find the tables in the schema they were made in, whatever the caller's search path.
 */
export const webhookRounds: Migration = {
  name: "011_webhook_rounds",
  async up(db) {
    await db.raw(`
      -- The due index serves only the queries on due time: next_attempt_at is never null, but a query
      -- must say so to use it. Without statistics (a new table, or one that grew in a burst since
      -- it was last analyzed) the planner took it for the head of a product's chain, scanning an
      -- endpoint's whole backlog for each delivery claimed, instead of webhook_deliveries_chain.
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, event_seq)
        WHERE status = 'pending' AND next_attempt_at IS NOT NULL;

      CREATE TYPE webhook_claimed_delivery AS (
        id uuid, endpoint_id uuid, attempts int, url text, secrets text[], event_id uuid, account_id uuid, event_type text,
        payload text, created_at timestamptz, completed_at timestamptz, failed_at timestamptz
      );

      -- repository.recordAttempts: returns how many endpoint rows it wrote.
      CREATE FUNCTION webhook_record_attempts(finished jsonb, log_size int) RETURNS int LANGUAGE sql SET search_path FROM CURRENT AS $fn$
        WITH a AS (
          SELECT * FROM jsonb_to_recordset(finished) AS x(id uuid, token uuid, started_at timestamptz, kind text, status text, status_code int,
            duration_ms int, error text, retry_ms bigint, disable_after_ms bigint)
        ), recorded AS (
          UPDATE webhook_deliveries d SET status = a.status, attempts = d.attempts + 1, last_attempt_at = now(), last_status_code = a.status_code,
            last_duration_ms = a.duration_ms, last_error = a.error, next_attempt_at = now() + (a.retry_ms * interval '1 millisecond'),
            lease_until = NULL, lease_token = NULL,
            attempt_log = (CASE WHEN jsonb_array_length(d.attempt_log) >= log_size THEN d.attempt_log - 0 ELSE d.attempt_log END)
              || jsonb_build_object('attempt', d.attempts + 1, 'at', a.started_at, 'status_code', a.status_code, 'duration_ms', a.duration_ms,
                'error', a.error, 'next_retry_at', CASE WHEN a.kind = 'failed' AND a.status = 'pending' THEN now() + (a.retry_ms * interval '1 millisecond') END)
          -- The ids again as an array: the planner then probes the primary key for each, instead of
          -- scanning the table for the 100 rows it assumes a jsonb_to_recordset has.
          FROM a WHERE d.id = ANY (ARRAY(SELECT a.id FROM a)) AND d.id = a.id AND d.lease_token = a.token
          RETURNING d.endpoint_id, a.kind, a.disable_after_ms
        ), outcomes AS (
          SELECT endpoint_id, bool_or(kind = 'delivered') AS delivered, bool_or(kind = 'gone') AS gone, bool_or(kind = 'failed') AS failed,
            max(disable_after_ms) AS disable_after_ms
          FROM recorded GROUP BY endpoint_id
        ), written AS (
          UPDATE webhook_endpoints w SET
            failing_since = CASE WHEN o.delivered THEN NULL WHEN o.failed THEN COALESCE(w.failing_since, now()) ELSE w.failing_since END,
            enabled = CASE WHEN o.gone THEN false WHEN o.delivered OR NOT o.failed THEN w.enabled
              ELSE w.enabled AND COALESCE(w.failing_since, now()) > now() - (o.disable_after_ms * interval '1 millisecond') END,
            disabled_reason = CASE WHEN o.gone THEN 'gone'
              WHEN o.failed AND NOT o.delivered AND w.enabled AND COALESCE(w.failing_since, now()) <= now() - (o.disable_after_ms * interval '1 millisecond') THEN 'failing'
              ELSE w.disabled_reason END,
            updated_at = CASE WHEN o.gone THEN now() ELSE w.updated_at END
          FROM outcomes o WHERE w.id = o.endpoint_id
            -- Successes of an endpoint not failing change nothing: no write of its row.
            AND (o.gone OR o.failed OR w.failing_since IS NOT NULL)
          RETURNING 1
        )
        SELECT count(*)::int FROM written
      $fn$;

      -- repository.claimDue.
      CREATE FUNCTION webhook_claim_due(claim_limit int, per_endpoint int, lease_ms bigint, token uuid) RETURNS SETOF webhook_claimed_delivery
      LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
      DECLARE
        endpoint uuid;
        endpoints uuid[] := '{}';
      BEGIN
        -- The endpoints with a due delivery (one index probe each), each locked in turn, in one order (no deadlock).
        FOR endpoint IN
          SELECT w.id FROM webhook_endpoints w
          WHERE w.enabled AND (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= now() LIMIT 1) = 1
          ORDER BY w.id
        LOOP
          PERFORM pg_advisory_xact_lock(hashtextextended('events.webhook-claim:' || endpoint::text, 0));
          endpoints := endpoints || endpoint;
        END LOOP;
        IF cardinality(endpoints) = 0 THEN
          RETURN;
        END IF;
        -- A new statement, a new snapshot: it counts every lease committed before the locks were granted.
        RETURN QUERY
        WITH slots AS (
          SELECT x.id, per_endpoint - (SELECT count(*) FROM webhook_deliveries b
            WHERE b.endpoint_id = x.id AND b.status = 'pending' AND b.lease_until IS NOT NULL AND b.lease_until >= now())::int AS free
          FROM unnest(endpoints) AS x(id)
        ), candidates AS (
          SELECT c.id FROM slots s CROSS JOIN LATERAL (
            SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
              AND (d.out_of_order OR d.event_seq = (SELECT min(p.event_seq) FROM webhook_deliveries p
                WHERE p.endpoint_id = d.endpoint_id AND p.aggregate = d.aggregate AND p.status = 'pending' AND NOT p.out_of_order))
            ORDER BY d.next_attempt_at, d.event_seq LIMIT GREATEST(s.free, 0)
          ) c
          ORDER BY c.next_attempt_at LIMIT claim_limit
        ), locked AS (
          SELECT d.id FROM webhook_deliveries d
          WHERE d.id = ANY (ARRAY(SELECT candidates.id FROM candidates)) AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until < now())
          FOR UPDATE OF d SKIP LOCKED
        ), leased AS (
          UPDATE webhook_deliveries d SET lease_until = now() + (lease_ms * interval '1 millisecond'), lease_token = token
          FROM locked WHERE d.id = locked.id
          RETURNING d.id, d.endpoint_id, d.attempts, d.event_id, d.event_seq
        )
        SELECT l.id, l.endpoint_id, l.attempts, w.url,
          array_remove(ARRAY[w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END], NULL),
          e.id, e.account_id, e.event_type, e.payload::text, e.created_at, e.completed_at, e.failed_at
        FROM leased l JOIN webhook_endpoints w ON w.id = l.endpoint_id JOIN events e ON e.id = l.event_id
        ORDER BY l.event_seq;
      END
      $fn$;

      -- repository.recordAndClaim: a worker's round.
      CREATE FUNCTION webhook_round(finished jsonb, log_size int, claim_limit int, per_endpoint int, lease_ms bigint, token uuid)
      RETURNS SETOF webhook_claimed_delivery LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
      BEGIN
        -- Why this commit may skip its WAL flush, and when it may not: repository.recordAndClaim.
        IF webhook_record_attempts(finished, log_size) = 0 THEN
          PERFORM set_config('synchronous_commit', 'off', true);
        END IF;
        IF claim_limit > 0 THEN
          RETURN QUERY SELECT * FROM webhook_claim_due(claim_limit, per_endpoint, lease_ms, token);
        END IF;
      END
      $fn$;
    `);
  },
};
