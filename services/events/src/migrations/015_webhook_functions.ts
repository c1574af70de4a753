import type { Migration } from "@analytics/db";
import { webhookRecordAttempts, webhookRound } from "../sql/webhook-rounds";

/** webhook_claim_due as this migration made it (the text it ran; 016_webhook_events changed it). */
const claimDue015 = `
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
  SELECT l.id, l.endpoint_id, l.attempts, w.url,
    array_remove(ARRAY[w.secret, CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END], NULL),
    e.id, e.account_id, e.event_type, e.payload::text, e.created_at, e.completed_at, e.failed_at
  FROM leased l JOIN webhook_endpoints w ON w.id = l.endpoint_id JOIN events e ON e.id = l.event_id
  ORDER BY l.event_seq;
END
$fn$;`;

/**
 * The webhook worker's functions from their one home, sql/webhook-rounds.ts: migrations 011 and
 * 013 keep the text they ran, this one ends a fresh install and an upgrade in the same functions.
 * It drops the overloads migration 011 made, which 013 kept for replicas not yet upgraded.
 * webhook_claim_due as it made it is below; 016 changed it.
 */
export const webhookFunctions: Migration = {
  name: "015_webhook_functions",
  async up(db) {
    await db.raw(`
      DROP FUNCTION webhook_round(jsonb, int, int, int, bigint, uuid);
      DROP FUNCTION webhook_claim_due(int, int, bigint, uuid);
      ${[webhookRecordAttempts, claimDue015, webhookRound].join("\n")}
    `);
  },
};
