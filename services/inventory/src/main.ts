import { runServiceMain } from "@analytics/rpc";
import { migrations } from "./migrations";
import { startInventoryService } from "./service";

void runServiceMain("inventory", startInventoryService, 50053, migrations);
