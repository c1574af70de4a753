import { accountVersionText, startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { ImportService, pricingV1 } from "@analytics/contracts";
import { pricingRoutes } from "./handlers";
import { pricingImports } from "./imports";
import { migrations } from "./migrations";
import { settingsConsumer } from "./settings";

/** The pricing service: price lists, prices, FX rates, pricats. It keeps a replica of account settings. */
export const pricingService: ServiceDefinition = {
  name: "pricing",
  migrations,
  dataVersion: accountVersionText,
  // The version of a page's prices is read with them (repository productPricesJson).
  dataVersionReadByHandler: [pricingV1.PricingService.method.productPricesJson],
  routes: (router, context) => {
    pricingRoutes(context)(router);
    router.service(ImportService, pricingImports.handlers(context));
  },
  workers: [pricingImports.worker()],
  consumers: [settingsConsumer],
};

export function startPricingService(deps: ServiceDeps) {
  return startService(pricingService, deps);
}
