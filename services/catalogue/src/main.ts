import { runServiceMain } from "@analytics/rpc";
import { startCatalogueService } from "./service";

void runServiceMain("catalogue", startCatalogueService, 50051);
