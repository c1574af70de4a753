import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { planningV1, type Decimal } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { breakdown, breakdownByWarehouse, salesPlans } from "../src/breakdown";
import { breakdownQueryOf } from "../src/validation";

export type BreakdownInit = Omit<MessageInitShape<typeof planningV1.PlannedVolumesQuerySchema>, "$typeName"> & { period?: planningV1.Period; channels?: number[] };

/** A BreakdownQuery as the handlers take it (validated). */
export const queryOf = ({ period, channels, ...volumes }: BreakdownInit) => breakdownQueryOf(create(planningV1.BreakdownQuerySchema, { volumes, period, channels }));

/** A Decimal as a number, unset as null. */
export const num = (d: Decimal | undefined) => (d === undefined ? null : Number(d.value));

async function all<T>(chunks: AsyncGenerator<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const c of chunks) out.push(...c);
  return out;
}

export interface PlanPeriodFigures {
  start: string;
  end: string;
  plan: number | null;
  actual: number | null;
  share: number | null;
}
export interface PeriodFigures {
  start: string;
  end: string;
  opening: number | null;
  plan: number | null;
  actual: number | null;
  po: number | null;
  draft: number | null;
  closing: number | null;
  target: number | null;
  otb: number | null;
  in?: number | null;
  out?: number | null;
}

function figures(p: planningV1.BreakdownPeriod, byWarehouse: boolean): PeriodFigures {
  return {
    start: p.periodStart,
    end: p.periodEnd,
    opening: num(p.openingStockVolume),
    plan: num(p.salesPlanVolume),
    actual: num(p.salesActualVolume),
    po: num(p.poVolume),
    draft: num(p.draftPoVolume),
    closing: num(p.closingStockVolume),
    target: num(p.targetStockVolume),
    otb: num(p.openToBuyVolume),
    ...(byWarehouse ? { in: num(p.transferInVolume), out: num(p.transferOutVolume) } : {}),
  };
}

/** The three answers as plain rows of numbers (every chunk gathered). */
export const readPlans = async (db: Db, accountId: string, q: BreakdownInit, today: string) =>
  (await all(salesPlans(db, accountId, queryOf(q), { today }))).map((r) => ({
    groupKey: r.groupKey,
    channel: r.channel,
    periods: r.periods.map((p): PlanPeriodFigures => ({ start: p.periodStart, end: p.periodEnd, plan: num(p.salesPlanVolume), actual: num(p.salesActualVolume), share: num(p.storedPlanShare) })),
  }));

export const readBreakdown = async (db: Db, accountId: string, q: BreakdownInit, today: string) =>
  (await all(breakdown(db, accountId, queryOf(q), { today }))).map((r) => ({ groupKey: r.groupKey, periods: r.periods.map((p) => figures(p as planningV1.BreakdownPeriod, false)) }));

export const readByWarehouse = async (db: Db, accountId: string, q: BreakdownInit, today: string) =>
  (await all(breakdownByWarehouse(db, accountId, queryOf(q), { today }))).map((r) => ({
    groupKey: r.groupKey,
    warehouseId: r.warehouseId,
    warehouseName: r.warehouseName,
    periods: r.periods.map((p) => figures(p as planningV1.BreakdownPeriod, true)),
  }));
