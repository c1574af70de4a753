import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { planningV1 } from "@analytics/contracts";
import { callerOf } from "@analytics/auth";
import type { Db } from "@analytics/db";
import { accountVersion, plannedVolumes, replicaSummary, type PageOf } from "./repository";
import { upsertSalesPlans } from "./sales-plans";
import { breakdownQueryOf, volumeQueryOf } from "./validation";
import { breakdown, breakdownByWarehouse, salesPlans, type AnswerOptions } from "./breakdown";
import { Admission, admissionLimits } from "./admission";

/**
 * Thin Connect handlers: every answer comes from planning's own replica, for the caller's account.
 * The breakdowns' statement may run `queryTimeoutMs` (PLANNING_QUERY_TIMEOUT_MS; default 120 s);
 * they run as `admission` lets them (a share of the pool per account), and stop when their call
 * is cancelled (ctx.signal: the gateway's client left).
 */
export function planningRoutes(db: Db, { queryTimeoutMs, admission = new Admission(admissionLimits(10)) }: { queryTimeoutMs?: number; admission?: Admission } = {}) {
  const streamed = <T>(ctx: HandlerContext, answer: (accountId: string, options: AnswerOptions) => AsyncGenerator<PageOf<T>>) => {
    const { accountId } = callerOf(ctx);
    return admission.admitted(accountId, () => answer(accountId, { timeoutMs: queryTimeoutMs, signal: ctx.signal }));
  };
  return (router: ConnectRouter) =>
    router.service(planningV1.PlanningService, {
      async getPlannedVolumes(req, ctx) {
        // PlannedVolumeRow's fields of each row (the warehouse fields, empty here, are not among them).
        const rows = await plannedVolumes(db, callerOf(ctx).accountId, volumeQueryOf(req.query), false);
        return { rows, nextAfter: rows.nextAfter };
      },
      async getPlannedVolumesByWarehouse(req, ctx) {
        const rows = await plannedVolumes(db, callerOf(ctx).accountId, volumeQueryOf(req.query), true);
        return { rows, nextAfter: rows.nextAfter };
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
      // The later revision: rows streamed in chunks, in REST order; a page's chunks each say whether a page follows.
      async *getSalesPlans(req, ctx) {
        const q = breakdownQueryOf(req.query);
        for await (const rows of streamed(ctx, (account, options) => salesPlans(db, account, q, options))) yield { rows, nextAfter: rows.nextAfter };
      },
      async *getBreakdown(req, ctx) {
        const q = breakdownQueryOf(req.query);
        for await (const rows of streamed(ctx, (account, options) => breakdown(db, account, q, options))) yield { rows, nextAfter: rows.nextAfter };
      },
      async *getBreakdownByWarehouse(req, ctx) {
        const q = breakdownQueryOf(req.query);
        for await (const rows of streamed(ctx, (account, options) => breakdownByWarehouse(db, account, q, options))) yield { rows, nextAfter: rows.nextAfter };
      },
    });
}
