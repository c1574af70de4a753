import type { ConnectRouter } from "@connectrpc/connect";
import { planningV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import type { Db } from "@analytics/db";
import { accountVersion, plannedVolumes, replicaSummary } from "./repository";
import { upsertSalesPlans } from "./sales-plans";
import { breakdownQueryOf, volumeQueryOf } from "./validation";
import { breakdown, breakdownByWarehouse, salesPlans } from "./breakdown";

/**
 * Thin Connect handlers: every answer comes from planning's own replica, for the caller's account.
 * The breakdowns' statement may run `queryTimeoutMs` (PLANNING_QUERY_TIMEOUT_MS; default 120 s).
 */
export function planningRoutes(db: Db, queryTimeoutMs?: number) {
  return (router: ConnectRouter) =>
    router.service(planningV1.PlanningService, {
      async getPlannedVolumes(req, ctx) {
        // PlannedVolumeRow's fields of each row (the warehouse fields, empty here, are not among them).
        return { rows: await plannedVolumes(db, callerOf(ctx).accountId, volumeQueryOf(req.query), false) };
      },
      async getPlannedVolumesByWarehouse(req, ctx) {
        return { rows: await plannedVolumes(db, callerOf(ctx).accountId, volumeQueryOf(req.query), true) };
      },
      async getReplicaSummary(_req, ctx) {
        return replicaSummary(db, callerOf(ctx).accountId);
      },
      async getAccountVersion(_req, ctx) {
        return accountVersion(db, callerOf(ctx).accountId);
      },
      async upsertSalesPlans(req, ctx) {
        return { results: await upsertSalesPlans(db, callerOf(ctx).accountId, req.plans) };
      },
      // The later revision: rows streamed in chunks, in REST order.
      async *getSalesPlans(req, ctx) {
        for await (const rows of salesPlans(db, callerOf(ctx).accountId, breakdownQueryOf(req.query), { timeoutMs: queryTimeoutMs })) yield { rows };
      },
      async *getBreakdown(req, ctx) {
        for await (const rows of breakdown(db, callerOf(ctx).accountId, breakdownQueryOf(req.query), { timeoutMs: queryTimeoutMs })) yield { rows };
      },
      async *getBreakdownByWarehouse(req, ctx) {
        for await (const rows of breakdownByWarehouse(db, callerOf(ctx).accountId, breakdownQueryOf(req.query), { timeoutMs: queryTimeoutMs })) yield { rows };
      },
    });
}
