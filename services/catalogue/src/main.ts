import { runServiceMain } from "@analytics/rpc";
import { migrations } from "./migrations";
import { startCatalogueService } from "./service";

void runServiceMain("catalogue", startCatalogueService, 50051, migrations);
