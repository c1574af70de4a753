/**
 * The current text of the webhook worker's functions: a round records the attempts finished since
 * the last one, then claims due deliveries for the free slots, in one statement
 * (repository/webhooks.ts: recordAttempts, claimDue, recordAndClaim say what each does and why).
 * Each statement inside takes its own snapshot (READ COMMITTED), so the claim counts the leases
 * every replica committed before it got an endpoint's lock, and sees the slots and products the
 * recorded attempts freed. The functions find the tables in the schema they were made in,
 * whatever the caller's search path; the type webhook_claimed_delivery is migration 011's.
 *
 * The one home of this text: the migration that last changed a function runs it
 * (015_webhook_functions; webhook_claim_due: 016_webhook_events); a change is an edit here and a new migration that runs it again, the
 * earlier one keeping the text it ran (docs/events.md, "SQL functions").
 */

/** webhook_record_attempts(finished, log_size): returns how many endpoint rows it wrote. */
export const webhookRecordAttempts = `
CREATE OR REPLACE FUNCTION webhook_record_attempts(finished jsonb, log_size int) RETURNS int LANGUAGE sql SET search_path FROM CURRENT AS $fn$
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
$fn$;`;

/** webhook_claim_due(...): the process's free slots shared, level by level, over the endpoints with due deliveries. */
export const webhookClaimDue = `
CREATE OR REPLACE FUNCTION webhook_claim_due(claim_limit int, per_endpoint int, lease_ms bigint, token uuid, held_endpoints uuid[], held_counts int[])
RETURNS SETOF webhook_claimed_delivery LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  endpoint uuid;
  endpoints uuid[] := '{}';
  -- This process's attempts in flight, and its total (those plus the free slots).
  in_flight bigint := COALESCE((SELECT sum(n) FROM unnest(held_counts) AS n), 0);
  total bigint := claim_limit + in_flight;
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
      WHERE b.endpoint_id = x.id AND b.status = 'pending' AND b.lease_until IS NOT NULL AND b.lease_until >= now())::int AS free,
      COALESCE(h.n, 0) AS held
    FROM unnest(endpoints) AS x(id) LEFT JOIN unnest(held_endpoints, held_counts) AS h(id, n) ON h.id = x.id
  ), candidates AS (
    -- level: the candidate would be its endpoint's level-th attempt in flight in this process.
    SELECT c.id, c.next_attempt_at, c.event_seq,
      s.held + row_number() OVER (PARTITION BY s.id ORDER BY c.next_attempt_at, c.event_seq) AS level
    FROM slots s CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at, d.event_seq FROM webhook_deliveries d
      WHERE d.endpoint_id = s.id AND d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
        AND (d.out_of_order OR d.event_seq = (SELECT min(p.event_seq) FROM webhook_deliveries p
          WHERE p.endpoint_id = d.endpoint_id AND p.aggregate = d.aggregate AND p.status = 'pending' AND NOT p.out_of_order))
      ORDER BY d.next_attempt_at, d.event_seq LIMIT GREATEST(s.free, 0)
    ) c
  ), ranked AS (
    -- Round-robin: every endpoint's next slot before any endpoint's one after; the oldest due first within a level.
    SELECT r.id, r.level, row_number() OVER (ORDER BY r.level, r.next_attempt_at, r.event_seq) AS nth FROM candidates r
  ), chosen AS (
    -- The nth slot handed out finds in_flight + nth - 1 in flight: a first one any free slot, a
    -- level-th only below T/2 · (1 − (level−2)/(2·C)), in integers. Levels rise and the count
    -- in flight with them, so what is chosen is a prefix of the ranking.
    SELECT r.id FROM ranked r
    WHERE r.nth <= claim_limit
      AND (r.level = 1 OR 4 * per_endpoint * (in_flight + r.nth - 1) < (2 * per_endpoint - r.level + 2) * total)
  ), locked AS (
    SELECT d.id FROM webhook_deliveries d
    WHERE d.id = ANY (ARRAY(SELECT chosen.id FROM chosen)) AND d.status = 'pending' AND (d.lease_until IS NULL OR d.lease_until < now())
    FOR UPDATE OF d SKIP LOCKED
  ), leased AS (
    UPDATE webhook_deliveries d SET lease_until = now() + (lease_ms * interval '1 millisecond'), lease_token = token
    FROM locked WHERE d.id = locked.id
    RETURNING d.id, d.endpoint_id, d.attempts, d.event_id, d.event_seq
  )
  -- The delivery's event: a queue entry, or an event pushed to webhooks only (webhook_events, migration 016).
  SELECT l.id, l.endpoint_id, l.attempts, w.url,
    array_remove(ARRAY[w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END], NULL),
    l.event_id, COALESCE(e.account_id, p.account_id), COALESCE(e.event_type, p.event_type), COALESCE(e.payload, p.payload)::text,
    COALESCE(e.created_at, p.created_at), e.completed_at, e.failed_at
  FROM leased l JOIN webhook_endpoints w ON w.id = l.endpoint_id
    LEFT JOIN events e ON e.id = l.event_id LEFT JOIN webhook_events p ON p.id = l.event_id
  WHERE e.id IS NOT NULL OR p.id IS NOT NULL
  ORDER BY l.event_seq;
END
$fn$;`;

/** webhook_round(...): a worker's round, recordAttempts then claimDue in one transaction. */
export const webhookRound = `
CREATE OR REPLACE FUNCTION webhook_round(finished jsonb, log_size int, claim_limit int, per_endpoint int, lease_ms bigint, token uuid, held_endpoints uuid[], held_counts int[])
RETURNS SETOF webhook_claimed_delivery LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
  -- Why this commit may skip its WAL flush, and when it may not: repository/webhooks.ts, recordAndClaim.
  IF webhook_record_attempts(finished, log_size) = 0 THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  IF claim_limit > 0 THEN
    RETURN QUERY SELECT * FROM webhook_claim_due(claim_limit, per_endpoint, lease_ms, token, held_endpoints, held_counts);
  END IF;
END
$fn$;`;

/** Every function of this file, in the order they are made (a round calls the other two). */
export const webhookRoundFunctions = [webhookRecordAttempts, webhookClaimDue, webhookRound];
