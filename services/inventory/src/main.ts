import { runServiceMain } from "@analytics/rpc";
import { startInventoryService } from "./service";

void runServiceMain("inventory", startInventoryService, 50053);
