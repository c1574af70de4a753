import { startService, type ServiceDeps } from "@analytics/rpc";
import { catalogueRoutes } from "./handlers";
import { migrations } from "./migrations";

/** The catalogue service: products, brands, categories, images, key switches, mapping tables. It only publishes. */
export function startCatalogueService(deps: ServiceDeps) {
  return startService(
    {
      name: "catalogue",
      migrations,
      routes: (router, context) => catalogueRoutes(context)(router),
    },
    deps,
  );
}
