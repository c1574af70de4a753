import { DecimalSchema, planningV1, type Decimal } from "@analytics/contracts";
import type { Db } from "@analytics/db";
import { answerAccount, answerStatement, BREAKDOWN_FIELDS, cursorRows, nextSlice, SALES_PLAN_FIELDS, type PageOf, type Shape } from "./repository";
import { periodsOf, type PeriodSpan } from "./periods";
import type { BreakdownQuery, Page } from "./validation";

/**
 * The later revision's answers (CONTRACT "Planning: the later revision"): sales plans, the
 * breakdown and the breakdown by warehouse, by period. Each is one set-based statement over the
 * replica and its sales rollups (repository/answers.ts), read through a cursor and streamed in
 * chunks of rows in REST order, so no answer is ever held whole.
 *
 * Decisions the contract leaves open (docs/planning.md "Breakdowns"):
 * - A transaction without a channel (0) counts as D2C (1), so the rows per channel sum to the
 *   breakdown's figures.
 * - A SKU's plan per channel and period is rounded to 3 decimals (its stored and its baseline
 *   part each, half away from zero) before anything is summed; groups sum those. By warehouse,
 *   each SKU's plan and actuals per period are split over its warehouses by cumulative
 *   rounding: a warehouse's piece is round(figure × the share of the warehouses up to it, 3)
 *   minus the same up to the one before it (in warehouse-id order), within 0.001 of its exact
 *   share, and the pieces sum exactly to the SKU's figure. (Largest remainder gives the same
 *   guarantee but needs two window sorts over SKUs × periods × warehouses; the cumulative shares
 *   are per SKU and warehouse, computed once for every period.)
 * - The baseline is never negative (a month with more returns than sales plans 0).
 * - The remaining plan of the current period is max(0, plan - actual) of the group row; by
 *   warehouse it is that figure split over the group's warehouses in proportion to each one's own
 *   max(0, plan - actual) (largest remainder): equal to that whenever no warehouse sold past its
 *   plan, and always summing to the group's, so that every stock figure sums to the group row.
 */

export type SalesPlanRow = Omit<planningV1.SalesPlanRow, "$typeName" | "$unknown" | "periods"> & { periods: Omit<planningV1.SalesPlanPeriod, "$typeName" | "$unknown">[] };
type BreakdownPeriodOut = Omit<planningV1.BreakdownPeriod, "$typeName" | "$unknown">;
export type BreakdownRowOut = { groupKey: string; periods: BreakdownPeriodOut[] };
export type BreakdownWarehouseRowOut = BreakdownRowOut & { warehouseId: string; warehouseName: string };

/** Where each figure is in a period's fields (answerStatement). */
const indexOf = <F extends string>(fields: readonly F[]) => Object.fromEntries(fields.map((field, i) => [field, i])) as Record<F, number>;
const P = indexOf(SALES_PLAN_FIELDS);
const B = indexOf(BREAKDOWN_FIELDS);

/*
 * An answer's rows and periods are made as the messages Connect sends: each class below has its
 * message's $typeName on its prototype and sets every field, so Connect's create() takes them as
 * they are instead of copying every period of a large answer (about 3 µs a row-period). On the
 * prototype, $typeName is not an own field: JSON and the tests' comparisons see the same rows.
 */
const messageOf = (type: { prototype: object }, schema: { typeName: string }) => Object.defineProperty(type.prototype, "$typeName", { value: schema.typeName });

class SalesPlanPeriodMessage {
  periodStart: string;
  periodEnd: string;
  salesPlanVolume?: Decimal;
  salesActualVolume?: Decimal;
  storedPlanShare?: Decimal;
  constructor(span: PeriodSpan, f: string[]) {
    this.periodStart = span.start;
    this.periodEnd = span.end;
    this.salesPlanVolume = decimal(f[P.plan]);
    this.salesActualVolume = decimal(f[P.actual]);
    this.storedPlanShare = decimal(f[P.share]);
  }
}
messageOf(SalesPlanPeriodMessage, planningV1.SalesPlanPeriodSchema);

class SalesPlanRowMessage {
  periods: SalesPlanPeriodMessage[] = [];
  constructor(
    public groupKey: string,
    public channel: number,
  ) {}
}
messageOf(SalesPlanRowMessage, planningV1.SalesPlanRowSchema);

class BreakdownPeriodMessage {
  periodStart: string;
  periodEnd: string;
  openingStockVolume?: Decimal;
  salesPlanVolume?: Decimal;
  salesActualVolume?: Decimal;
  poVolume?: Decimal;
  draftPoVolume?: Decimal;
  closingStockVolume?: Decimal;
  targetStockVolume?: Decimal;
  openToBuyVolume?: Decimal;
  transferInVolume?: Decimal;
  transferOutVolume?: Decimal;
  constructor(span: PeriodSpan, f: string[], byWarehouse: boolean) {
    const past = f[B.state] === "past";
    this.periodStart = span.start;
    this.periodEnd = span.end;
    this.openingStockVolume = past ? undefined : decimal(f[B.opening]);
    this.salesPlanVolume = decimal(f[B.plan]);
    this.salesActualVolume = decimal(f[B.actual]);
    this.poVolume = decimal(f[B.po]);
    this.draftPoVolume = decimal(f[B.draft]);
    this.closingStockVolume = past ? undefined : decimal(f[B.closing]);
    this.targetStockVolume = decimal(f[B.target]);
    this.openToBuyVolume = decimal(f[B.otb]);
    this.transferInVolume = byWarehouse ? decimal(f[B.tin]) : undefined;
    this.transferOutVolume = byWarehouse ? decimal(f[B.tout]) : undefined;
  }
}
messageOf(BreakdownPeriodMessage, planningV1.BreakdownPeriodSchema);

class BreakdownRowMessage {
  periods: BreakdownPeriodMessage[] = [];
  constructor(public groupKey: string) {}
}
messageOf(BreakdownRowMessage, planningV1.BreakdownRowSchema);

class BreakdownWarehouseRowMessage {
  periods: BreakdownPeriodMessage[] = [];
  constructor(
    public groupKey: string,
    public warehouseId: string,
    public warehouseName: string,
  ) {}
}
messageOf(BreakdownWarehouseRowMessage, planningV1.BreakdownWarehouseRowSchema);

/** A numeric's text as a Decimal (the statements give it without trailing zeros: trim_scale); "" (a null): unset. */
function decimal(value: string): Decimal | undefined {
  if (value === "") return undefined;
  // A literal, not create(): an answer by SKU holds millions of them, and Connect takes a message as it is.
  return { $typeName: DecimalSchema.typeName, value } as Decimal;
}

const CHUNK = 500;

/** PLANNING_QUERY_TIMEOUT_MS's default: the longest an answer's statement may run. */
export const QUERY_TIMEOUT_MS = 120_000;

/**
 * What the caller may set: today (tests), the statement timeout (PLANNING_QUERY_TIMEOUT_MS), the
 * call's signal (its client gone: the statement is cancelled) and the slices' size.
 */
export interface AnswerOptions {
  today?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** SKUs in the first slice of a whole answer (SLICE_SKUS; tests slice small accounts finely). */
  sliceSkus?: number;
  /** SKUs in a slice at most (SLICE_MAX_SKUS; the bench tries others). */
  maxSliceSkus?: number;
}

/**
 * An answer's rows (answerStatement) as answer rows, CHUNK at a time: `start` makes a row, `period`
 * a period from its fields and its span. A page's stops at the first row of the group after it
 * (returning closes the cursor). Each chunk carries the page's nextAfter.
 */
async function* gathered<R extends { periods: unknown[] }>(
  rows: AsyncGenerator<Record<string, string>[]>,
  spans: PeriodSpan[],
  start: (r: Record<string, string>) => R,
  period: (span: PeriodSpan, f: string[]) => R["periods"][number],
  page?: Page,
): AsyncGenerator<PageOf<R>> {
  let chunk: PageOf<R> = [];
  let nextAfter: string | undefined;
  for await (const batch of rows) {
    for (const r of batch) {
      if (page) {
        if (Number(r.grank) > page.size) {
          if (chunk.length) yield Object.assign(chunk, { nextAfter });
          return;
        }
        nextAfter = r.next_after ?? undefined;
      }
      if (chunk.length === CHUNK) {
        yield Object.assign(chunk, { nextAfter });
        chunk = [];
      }
      const row = start(r);
      for (const text of r.periods.split(";")) {
        const f = text.split(",");
        row.periods.push(period(spans[Number(f[0])], f));
      }
      chunk.push(row);
    }
  }
  if (chunk.length) yield Object.assign(chunk, { nextAfter });
}

async function prepare(db: Db, accountId: string, q: BreakdownQuery, today?: string) {
  const account = await answerAccount(db, accountId);
  if (today) account.today = today;
  const periods = periodsOf(q.period, q.volumes.fromDate, q.volumes.toDate, account.today);
  const reported = periods.filter((p) => p.reported);
  return { account, periods, reported };
}

/**
 * Selected SKUs in the first slice of a whole answer by SKU, variant or product; each next slice
 * twice the one before, up to SLICE_MAX_SKUS: the first rows come soon (100 SKUs: about 0.25 s at
 * 100,000 SKUs by warehouse; 1,000: 1 s), and the rest in slices whose hash aggregates stay small.
 * On the bench's account by warehouse, slices of at most 1,600 SKUs took the whole answer in 70-71 s,
 * of 800 or of 4,000-16,000 in 77-81 s (docs/benchmarks.md).
 */
export const SLICE_SKUS = 100;
export const SLICE_MAX_SKUS = 1_600;

/**
 * An answer's rows (answerStatement: one per answer row) in REST order, in batches of CHUNK. A
 * whole answer by SKU, variant or product is read in slices of its groups (SLICE_SKUS), each its
 * own statement in one snapshot: its first rows come after one slice's work, not the whole
 * answer's sort, and no slice holds more than its own groups. A page, an answer of the groups
 * changed since a time (a group that SKUs left has rows outside their slice) and one by season
 * (a few groups of thousands of SKUs each, read from the group rollups) are one statement.
 */
function answerRows(db: Db, accountId: string, q: BreakdownQuery, shape: Shape, prepared: Awaited<ReturnType<typeof prepare>>, { timeoutMs = QUERY_TIMEOUT_MS, signal, sliceSkus = SLICE_SKUS, maxSliceSkus = SLICE_MAX_SKUS }: AnswerOptions) {
  const { account, periods } = prepared;
  const { page, updatedSince, groupBy } = q.volumes;
  if (page || updatedSince || groupBy === "seasons") return cursorRows(db, answerStatement(accountId, q, shape, account, periods), CHUNK, timeoutMs, signal);
  return cursorRows(
    db,
    async function* (tx) {
      let after: string | undefined;
      let size = sliceSkus;
      do {
        const slice = await nextSlice(tx, accountId, q, after, size);
        yield answerStatement(accountId, q, shape, account, periods, slice);
        after = slice.upTo;
        size = Math.min(size * 2, Math.max(sliceSkus, maxSliceSkus));
      } while (after !== undefined);
    },
    CHUNK,
    timeoutMs,
    signal,
  );
}

/** GET /planning/sales-plans: rows per group and channel, in chunks. */
export async function* salesPlans(db: Db, accountId: string, q: BreakdownQuery, options: AnswerOptions = {}): AsyncGenerator<PageOf<SalesPlanRow>> {
  const prepared = await prepare(db, accountId, q, options.today);
  yield* gathered<SalesPlanRow>(
    answerRows(db, accountId, q, "plans", prepared, options),
    prepared.periods,
    (r) => new SalesPlanRowMessage(r.g, Number(r.channel)),
    (span, f) => new SalesPlanPeriodMessage(span, f),
    q.volumes.page,
  );
}

/** GET /planning/breakdown: a row per group, in chunks. */
export async function* breakdown(db: Db, accountId: string, q: BreakdownQuery, options: AnswerOptions = {}): AsyncGenerator<PageOf<BreakdownRowOut>> {
  const prepared = await prepare(db, accountId, q, options.today);
  yield* gathered<BreakdownRowOut>(
    answerRows(db, accountId, q, "groups", prepared, options),
    prepared.periods,
    (r) => new BreakdownRowMessage(r.g),
    (span, f) => new BreakdownPeriodMessage(span, f, false),
    q.volumes.page,
  );
}

/** GET /planning/breakdown/by-warehouse: a row per group and warehouse, in chunks. */
export async function* breakdownByWarehouse(db: Db, accountId: string, q: BreakdownQuery, options: AnswerOptions = {}): AsyncGenerator<PageOf<BreakdownWarehouseRowOut>> {
  const prepared = await prepare(db, accountId, q, options.today);
  yield* gathered<BreakdownWarehouseRowOut>(
    answerRows(db, accountId, q, "warehouses", prepared, options),
    prepared.periods,
    (r) => new BreakdownWarehouseRowMessage(r.g, r.wid, r.wname),
    (span, f) => new BreakdownPeriodMessage(span, f, true),
    q.volumes.page,
  );
}
