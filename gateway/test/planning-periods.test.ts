import { MAX_PERIODS, periodsIn } from "../src/routes/planning";

describe("periodsIn: whole periods overlapping [fromDate, toDate] (the later revision's window bound)", () => {
  it("counts calendar months, ISO weeks (Monday first) and one total", () => {
    expect(periodsIn("month", "2026-03-15", "2026-03-15")).toBe(1);
    expect(periodsIn("month", "2026-03-31", "2026-04-01")).toBe(2);
    expect(periodsIn("month", "2025-11-30", "2026-02-01")).toBe(4);
    // 2026-01-04 is a Sunday, 2026-01-05 a Monday: two ISO weeks.
    expect(periodsIn("week", "2026-01-04", "2026-01-05")).toBe(2);
    expect(periodsIn("week", "2026-01-05", "2026-01-11")).toBe(1);
    expect(periodsIn("week", "2026-01-01", "2026-12-31")).toBe(53);
    expect(periodsIn("total", "2020-01-01", "2029-12-31")).toBe(1);
  });

  it(`puts the bound between ${MAX_PERIODS} and ${MAX_PERIODS + 1} periods`, () => {
    // From a Monday, 106 weeks end on the Sunday 741 days later; the next day starts the 107th.
    expect(periodsIn("week", "2026-01-05", "2028-01-16")).toBe(MAX_PERIODS);
    expect(periodsIn("week", "2026-01-05", "2028-01-17")).toBe(MAX_PERIODS + 1);
    expect(periodsIn("month", "2026-01-31", "2034-10-01")).toBe(MAX_PERIODS);
    expect(periodsIn("month", "2026-01-31", "2034-11-01")).toBe(MAX_PERIODS + 1);
  });
});
