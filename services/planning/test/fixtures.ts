import type { MessageInitShape } from "@bufbuild/protobuf";
import type { BusMessage } from "@analytics/bus";
import { planningV1 } from "@analytics/contracts";
import { consumerHandler } from "@analytics/rpc";
import { serviceUnderTest } from "@analytics/testing";
import { replicaConsumer } from "../src/replica";
import { startPlanningService } from "../src/service";

// The producers' messages, under the names these tests have always used.
export {
  accountSettingsChanged as settings,
  busMessage,
  distributionOrderChanged as distributionOrder,
  stockTriggerChanged as stockTrigger,
  purchaseOrderChanged as purchaseOrder,
  skuUpdated as sku,
  stockUpdated as stock,
  transactionChanged as transaction,
  warehouseChanged as warehouse,
  type LineInit,
  type SkuInit,
} from "@analytics/testing";

export type Query = Omit<MessageInitShape<typeof planningV1.PlannedVolumesQuerySchema>, "$typeName">;
export const march = { fromDate: "2026-03-01", toDate: "2026-03-31" };

/** The planning service on the test file's own database and stream (jest hooks), with helpers that answer plain rows. */
export function planningUnderTest() {
  const planning = serviceUnderTest(planningV1.PlanningService, startPlanningService, { schema: "planning", internalToken: "p".repeat(40) });
  const { client, db, as } = planning;
  return Object.assign(planning, {
    /** Applies messages as the consumer does (one batch, with the inbox). */
    apply: (messages: BusMessage[]) => consumerHandler(db, "planning", replicaConsumer)(messages),
    volumes: async (accountId: string, q: Query = {}) =>
      (await client.getPlannedVolumes({ query: { ...march, ...q } }, as(accountId))).rows.map((r) => ({
        groupKey: r.groupKey,
        stock: Number(r.stockVolume),
        po: Number(r.poVolume),
        draft: Number(r.draftPoVolume),
      })),
    byWarehouse: async (accountId: string, q: Query = {}) =>
      (await client.getPlannedVolumesByWarehouse({ query: { ...march, ...q } }, as(accountId))).rows
        .map((r) => ({
          groupKey: r.groupKey,
          warehouseId: r.warehouseId,
          warehouseName: r.warehouseName,
          stock: Number(r.stockVolume),
          po: Number(r.poVolume),
          draft: Number(r.draftPoVolume),
        }))
        .sort(byKeyThenWarehouse),
  });
}

/** Rows by groupKey then warehouseId, whatever the database's collation. */
export const byKeyThenWarehouse = (a: { groupKey: string; warehouseId: string }, b: { groupKey: string; warehouseId: string }) =>
  a.groupKey.localeCompare(b.groupKey) || a.warehouseId.localeCompare(b.warehouseId);
