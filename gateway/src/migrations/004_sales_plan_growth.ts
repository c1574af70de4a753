import type { Migration } from "@analytics/db";

/** The account's salesPlanGrowth (planning's year-over-year baseline growth, CONTRACT "Sales plans"). */
export const salesPlanGrowth: Migration = {
  name: "004_sales_plan_growth",
  async up(db) {
    await db.raw("ALTER TABLE accounts ADD COLUMN sales_plan_growth numeric NOT NULL DEFAULT 0");
  },
};
