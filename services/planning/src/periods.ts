/**
 * The periods of a breakdown (CONTRACT "Planning: the later revision"): calendar months, ISO
 * weeks (Monday first) or the window itself, as calendar dates YYYY-MM-DD. Dates are calendar
 * arithmetic on UTC midnights: the account's timezone only decides which day is today.
 */

export type PeriodKind = "month" | "week" | "total";

/** A period computed: reported ones overlap [fromDate, toDate]; hidden ones carry the projection from today to the window. */
export interface PeriodSpan {
  start: string;
  end: string;
  /** past: ended before the current one (no stock figures); current: holds today; future: after it. */
  state: "past" | "current" | "future";
  reported: boolean;
}

// Calendar dates (YYYY-MM-DD) as UTC midnights: no timezone is involved in calendar arithmetic.
const dayMs = 86_400_000;
export const toTime = (d: string) => Date.parse(`${d}T00:00:00Z`);
const fromTime = (t: number) => new Date(t).toISOString().slice(0, 10);
export const addDays = (d: string, n: number) => fromTime(toTime(d) + n * dayMs);
export const monthStart = (d: string) => `${d.slice(0, 7)}-01`;
export const nextMonth = (d: string) => {
  const t = new Date(toTime(monthStart(d)));
  t.setUTCMonth(t.getUTCMonth() + 1);
  return fromTime(t.getTime());
};
/** The ISO week's Monday. */
const weekStart = (d: string) => addDays(d, -((new Date(toTime(d)).getUTCDay() + 6) % 7));

/** The calendar period holding a day, [start, end]. */
function periodOf(kind: "month" | "week", d: string): [string, string] {
  if (kind === "month") return [monthStart(d), addDays(nextMonth(d), -1)];
  const start = weekStart(d);
  return [start, addDays(start, 6)];
}

/** The periods overlapping [fromDate, toDate]: what is reported (the 106-period limit counts these). */
export function reportedPeriods(kind: PeriodKind, fromDate: string, toDate: string): [string, string][] {
  if (kind === "total") return [[fromDate, toDate]];
  const out: [string, string][] = [];
  for (let p = periodOf(kind, fromDate); p[0] <= toDate; p = periodOf(kind, addDays(p[1], 1))) {
    out.push(p);
    if (out.length > 1000) break;
  }
  return out;
}

/**
 * The periods to compute, in order and contiguous: the reported ones, preceded, when today is
 * before them, by today's period (the projection starts there) and one hidden period for the
 * days between it and the window. For `total`, today's period is [today, fromDate - 1].
 */
export function periodsOf(kind: PeriodKind, fromDate: string, toDate: string, today: string): PeriodSpan[] {
  const reported = reportedPeriods(kind, fromDate, toDate);
  const first = reported[0][0];
  let current: [string, string] | undefined;
  if (kind === "total") current = today < fromDate ? [today, addDays(fromDate, -1)] : today <= toDate ? reported[0] : undefined;
  else current = periodOf(kind, today);
  const spans: [string, string, boolean][] = [];
  if (current && current[0] < first) {
    spans.push([current[0], current[1], false]);
    if (addDays(current[1], 1) < first) spans.push([addDays(current[1], 1), addDays(first, -1), false]);
  }
  for (const [start, end] of reported) spans.push([start, end, true]);
  return spans.map(([start, end, isReported]) => ({
    start,
    end,
    reported: isReported,
    state: !current || end < current[0] ? "past" : start === current[0] ? "current" : "future",
  }));
}


/**
 * The periods' days as the sales rollups read them: the whole calendar months inside a period
 * (their first days, read from the month rollup) and its other days (read from the day rollup),
 * each with the period's index.
 */
export function monthsAndDays(periods: PeriodSpan[]): { months: { idx: number; month: string }[]; days: { idx: number; day: string }[] } {
  const months: { idx: number; month: string }[] = [];
  const days: { idx: number; day: string }[] = [];
  periods.forEach(({ start, end }, idx) => {
    for (let d = start; d <= end; ) {
      const monthEnd = addDays(nextMonth(d), -1);
      if (d === monthStart(d) && monthEnd <= end) {
        months.push({ idx, month: d });
        d = nextMonth(d);
      } else {
        days.push({ idx, day: d });
        d = addDays(d, 1);
      }
    }
  });
  return { months, days };
}
