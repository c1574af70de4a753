import type { Knex } from "knex";
import type { Page } from "../validation";

/** An answer's rows, and the page's last group key when more groups follow it (the next page's `after`). */
export type PageOf<R> = R[] & { nextAfter?: string };

/** The groups a statement answers: after `after` (a page's start), up to `upTo` (a slice's last group, inclusive); each absent: no bound. */
export interface GroupRange {
  after?: string;
  upTo?: string;
}

/**
 * Only the groups of a range, as a condition on the SKUs of `skus s` (`groupExpr`: their group key, never null) (a group's figures are its
 * own SKUs'), so a later page or slice never computes the groups before it, nor a slice those
 * after it; "" without bounds.
 */
export function groupsIn(groupExpr: string, range: GroupRange | undefined, bind: (value: string) => string): string {
  const after = range?.after === undefined ? "" : ` AND ${groupExpr} > ${bind(range.after)}`;
  return range?.upTo === undefined ? after : `${after} AND ${groupExpr} <= ${bind(range.upTo)}`;
}

/**
 * A statement's rows cut to a page of groups (CONTRACT "Pages and CSV"): its groups `g` after
 * `after` (again here: a group that SKUs left still has rows), those of the first `size` groups
 * in `g` order and of one group more, each row with `grank`, its group's rank from 1. Every row
 * also carries `next_after`: the page's last group key when a group follows, else null, so the
 * reader knows before the first row whether to link a next page (Postgres holds the page's rows
 * for that window, not the whole answer). `order`: the rows' order, keys of `y`.
 */
export function paged(statement: { sql: string; bindings: Knex.RawBinding[] }, order: string, page: Page | undefined) {
  if (!page) return statement;
  const after = page.after === undefined ? "" : "WHERE x.g > ?";
  return {
    sql: `SELECT y.*, CASE WHEN max(y.grank) OVER () > ? THEN max(y.g) FILTER (WHERE y.grank <= ?) OVER () END AS next_after
      FROM (SELECT x.*, dense_rank() OVER (ORDER BY x.g) AS grank FROM (${statement.sql}) x ${after}) y
      WHERE y.grank <= ?
      ORDER BY ${order}`,
    bindings: [page.size, page.size, ...statement.bindings, ...(after ? [page.after!] : []), page.size + 1],
  };
}
