import { runServiceMain } from "@analytics/rpc";
import { startPricingService } from "./service";

void runServiceMain("pricing", startPricingService, 50052);
