import { runServiceMain } from "@analytics/rpc";
import { migrations } from "./migrations";
import { startPricingService } from "./service";

void runServiceMain("pricing", startPricingService, 50052, migrations);
