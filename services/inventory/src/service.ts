import { accountVersionText, startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { ImportService } from "@analytics/contracts";
import { inventoryRoutes } from "./handlers";
import { inventoryImports } from "./imports";
import { migrations } from "./migrations";

/** The inventory service: warehouses, stock snapshots, stores, store traffic, stock triggers. It only publishes. */
export const inventoryService: ServiceDefinition = {
  name: "inventory",
  migrations,
  dataVersion: accountVersionText,
  routes: (router, context) => {
    inventoryRoutes(context)(router);
    router.service(ImportService, inventoryImports.handlers(context));
  },
  workers: [inventoryImports.worker()],
};

export function startInventoryService(deps: ServiceDeps) {
  return startService(inventoryService, deps);
}
