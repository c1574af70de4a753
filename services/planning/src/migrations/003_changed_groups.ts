import type { Migration } from "@analytics/db";

/**
 * Groups whose PO or draft-PO volume changed although no line of theirs is left to say so: a line
 * removed from an order, moved to another warehouse or SKU, and the groups a SKU left or joined
 * when its season, product group, variant group or key changed. Each row names the group by the
 * values it had (every groupBy's column) and when it changed, so that `updatedSince` returns it
 * (with zeros when nothing is left).
 */
export const changedGroups: Migration = {
  name: "003_changed_groups",
  async up(db) {
    await db.raw(`
      CREATE TABLE changed_groups (
        account_id uuid NOT NULL,
        sku_id uuid NOT NULL,
        external_warehouse_id text NOT NULL,
        season text,
        product_group_id text,
        variant_group_id text,
        key text,
        changed_at timestamptz NOT NULL
      );
      CREATE INDEX changed_groups_account_changed_at ON changed_groups (account_id, changed_at);
    `);
  },
};
