import { eventually } from "@analytics/testing";
import type { client } from "./harness";

/** A planned-volumes row, and one per warehouse. */
export const row = (groupKey: string, stockVolume: number, poVolume: number, draftPOVolume: number) => ({ groupKey, stockVolume, poVolume, draftPOVolume });
export const warehouseRow = (groupKey: string, warehouseId: string, warehouseName: string, stockVolume: number, poVolume: number, draftPOVolume: number) => ({
  groupKey,
  warehouseId,
  warehouseName,
  stockVolume,
  poVolume,
  draftPOVolume,
});
/** Rows in (groupKey, warehouseId) order: by-warehouse answers have no defined order within a group. */
export const sorted = <T extends { groupKey: string; warehouseId: string }>(list: T[]) =>
  [...list].sort((a, b) => a.groupKey.localeCompare(b.groupKey) || a.warehouseId.localeCompare(b.warehouseId));

/**
 * GET /v2/api/planning/planned-volumes<path> as an account (signed up later, in a beforeAll), and a
 * poll until it answers what is expected.
 */
export function plannedVolumes(account: () => { api: ReturnType<typeof client> }, timeoutMs: number) {
  const get = (path: string) => account().api("GET", `/v2/api/planning/planned-volumes${path}`);
  /** Polls until the answer is the expected one: the services' messages reach planning asynchronously. */
  const until = (path: string, expected: unknown, sort = false) =>
    eventually(
      async () => {
        const res = await get(path);
        return JSON.stringify(sort ? sorted(res.body) : res.body) === JSON.stringify(expected) ? res : undefined;
      },
      timeoutMs,
      `${path} -> ${JSON.stringify(expected)}`,
    );
  return { get, until };
}
