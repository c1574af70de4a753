import { accountVersionText, startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { ordersRoutes } from "./handlers";
import { ImportService } from "@analytics/contracts";
import { orderImports } from "./imports";
import { migrations } from "./migrations";

/** The orders service: purchase orders (distribution orders, transactions and shipments follow). It only publishes. */
export const ordersService: ServiceDefinition = {
  name: "orders",
  migrations,
  dataVersion: accountVersionText,
  routes: (router, context) => {
    ordersRoutes(context)(router);
    router.service(ImportService, orderImports.handlers(context));
  },
  workers: [orderImports.worker()],
};

export function startOrdersService(deps: ServiceDeps) {
  return startService(ordersService, deps);
}
