import type { Client } from "@connectrpc/connect";
import type { inventoryV1 } from "@analytics/contracts";
import type { CallAs } from "../clients";

/**
 * Which of the warehouse external ids a request names exist, in one ResolveWarehouses call for the
 * whole request (as its SKUs are resolved): orders naming a warehouse that does not exist are
 * that item's 404, as stock and stock triggers are (CONTRACT: a missing referenced thing is 404).
 */
export async function knownWarehouses(inventory: Client<typeof inventoryV1.InventoryService>, options: ReturnType<CallAs>, externalIds: (string | undefined)[]) {
  const named = [...new Set(externalIds.filter((id): id is string => Boolean(id)))];
  if (!named.length) return new Set<string>();
  const { warehouses } = await inventory.resolveWarehouses({ externalIds: named }, options);
  return new Set(warehouses.map((w) => w.externalId));
}
