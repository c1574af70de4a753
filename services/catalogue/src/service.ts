import { accountVersionText, startService, type ServiceDefinition, type ServiceDeps } from "@analytics/rpc";
import { catalogueRoutes } from "./handlers";
import { catalogueV1, ImportService } from "@analytics/contracts";
import { catalogueImports } from "./imports";
import { migrations } from "./migrations";

const { CatalogueService } = catalogueV1;

/** The catalogue service: products, brands, categories, images, key switches, mapping tables. It only publishes. */
export const catalogueService: ServiceDefinition = {
  name: "catalogue",
  migrations,
  dataVersion: accountVersionText,
  // A page's version is read with its ids (repository pageOfProductIds).
  dataVersionReadByHandler: [CatalogueService.method.streamProducts, CatalogueService.method.streamProductsJson],
  routes: (router, context) => {
    catalogueRoutes(context)(router);
    router.service(ImportService, catalogueImports.handlers(context));
  },
  workers: [catalogueImports.worker()],
};

export function startCatalogueService(deps: ServiceDeps) {
  return startService(catalogueService, deps);
}
